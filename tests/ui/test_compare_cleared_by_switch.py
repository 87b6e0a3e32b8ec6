"""Compare, then open another model: the Compare window keeps nothing of the old model's comparison.

Seen in a real window: a comparison under way when another model opened left its progress bar
("Nearest tokens in A (the old model)...: 12%") and its Stop button on for ever, as its answer,
about a model no longer open, never comes; a finished comparison left its plots' titles
("neighbours kept of 8") and axes (0 to 50,000 tokens, cosines 0.9992 to 0.9998) on the empty plots.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from .conftest import open_model, settle
from .test_compare_pane import compare_with, open_compare, tables  # noqa: F401 - a fixture


def test_a_comparison_under_way_when_another_model_opens_leaves_no_progress(qtbot, window, tables) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    open_model(qtbot, window, str(tables["a"]))
    open_compare(window)
    pane = window.panes.compare.pane
    qtbot.keyClicks(pane.source, str(tables["b"]))
    qtbot.keyClick(pane.source, Qt.Key.Key_Return)  # the comparison starts...
    assert pane.progress.isVisible() and pane.stop_button.isEnabled()
    open_model(qtbot, window, str(tables["b"]))  # ...and before its answer another model opens
    settle()
    assert window.state.model_spec == str(tables["b"])
    assert not pane.progress.isVisible(), pane.progress.format()
    assert not pane.stop_button.isEnabled()
    assert pane.comparison is None and pane.most.count() == 0
    # The pane works for the new model: its comparison runs and is shown.
    comparison = compare_with(qtbot, window, str(tables["a"]))
    assert pane.comparison is comparison and not pane.progress.isVisible()


def test_a_finished_comparison_leaves_no_titles_or_axes_when_another_model_opens(qtbot, window, tables) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    open_model(qtbot, window, str(tables["a"]))
    open_compare(window)
    pane = window.panes.compare.pane
    compare_with(qtbot, window, str(tables["b"]))
    settle()
    cosines = pane.cosine_plot.getPlotItem()
    assert cosines.titleLabel.isVisible()
    drawn_x, drawn_y = cosines.viewRange()
    assert drawn_y[1] > 1  # tens of tokens a bar: the old comparison's axis
    open_model(qtbot, window, str(tables["b"]))
    settle()
    for plot in (pane.overlap_plot.getPlotItem(), cosines):
        assert not plot.titleLabel.isVisible(), plot.titleLabel.text
        (x0, x1), (y0, y1) = plot.viewRange()
        assert (x0, x1, y0, y1) == (0, 1, 0, 1), plot.viewRange()
    # The next comparison's bars set the axes again (the cosine plot has no range of its own).
    comparison = compare_with(qtbot, window, str(tables["a"]))
    settle()
    counts, edges = comparison.cosine_histogram()
    (x0, x1), (y0, y1) = cosines.viewRange()
    assert x0 <= edges[0] and x1 >= edges[-1], (cosines.viewRange(), edges[0], edges[-1])
    assert y1 >= np.max(counts), (cosines.viewRange(), np.max(counts))
    assert cosines.titleLabel.isVisible()
