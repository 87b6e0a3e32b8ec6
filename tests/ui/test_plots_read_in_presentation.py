"""Presentation mode (Ctrl+Shift+P) makes every plot's text larger, not only the Row and Layers tabs'.

Seen in a real window at 1024x640 with presentation on: the Vocabulary health histogram kept its
small tick numbers, its 9-point title and its "threshold 4" while every word around it had grown,
and the Compare window's two plots did the same: what a class at the back of the room reads least.
"""

from __future__ import annotations

import pyqtgraph as pg

from embedexplorer.jobs.health_jobs import HEALTH
from tests.ui.conftest import answers, open_model, settle
from tests.ui.test_health_pane import HEALTH_TIMEOUT_MS


def _tick_points(plot: pg.PlotWidget, axis: str = "bottom") -> float:
    font = plot.getAxis(axis).style["tickFont"]
    return -1.0 if font is None else font.pointSizeF()


def _text_height(item) -> float:  # type: ignore[no-untyped-def]
    """A QGraphicsTextItem's text's drawn height, without the margin its document keeps whatever the size."""
    return item.boundingRect().height() - 2 * item.document().documentMargin()


def _title_height(plot: pg.PlotWidget, axis: str = "bottom") -> float:
    """The axis title's drawn height (its size is in its HTML, not its item's font)."""
    return _text_height(plot.getAxis(axis).label)


def _sizes(window) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Each plot's tick numbers (in points), axis titles and the threshold's label (their heights) as drawn now."""
    health = window.panes.health_pane.histogram
    line = next(item for item in health.getPlotItem().items if isinstance(item, pg.InfiniteLine))
    compare = window.panes.compare.pane
    row = window.panes.row_view.plot_widget
    return {
        "row ticks": _tick_points(row),
        "row axis title": _title_height(row, "left"),
        "health ticks": _tick_points(health),
        "health axis title": _title_height(health),
        "health threshold": _text_height(line.label.textItem),
        "compare ticks": _tick_points(compare.overlap_plot),
        "compare axis title": _title_height(compare.cosine_plot),
    }


def test_every_plot_grows_with_presentation_and_back(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(window.panes.health_pane)
    window.panes.compare.show_beside()
    settle()
    normal = _sizes(window)
    try:
        window.panes.teaching.set_presentation(True)
        settle()
        presenting = _sizes(window)
    finally:
        window.panes.teaching.set_presentation(False)
    settle()
    again = _sizes(window)
    window.panes.compare.close()
    # The Row tab grew its plot's text already: every other plot grows alike, and shrinks back.
    assert presenting["row ticks"] > 1.3 * normal["row ticks"], (normal, presenting)
    for part in normal:
        assert presenting[part] >= 1.25 * normal[part] > 0, (part, normal, presenting)
    assert again == normal
    # Tick numbers match across the tabs, so none reads smaller than the rest.
    assert normal["health ticks"] == normal["compare ticks"] == normal["row ticks"]
