"""Issue 35: the Row plot draws its curves in a plot, not a strip, at every size the window claims.

The drawing area (pyqtgraph's view box inside the plot widget, without the legend above it and
the axis below) is measured in the real window at 1600x1000, 1366x768 and 1024x640, full screen
and under a window manager's title bar (the window that much shorter), in a person's order: the
bundled model opens, a word is typed, the Row is looked at (above the neighbours, or on its tab
beside the map on a short window), then presentation mode goes on with Ctrl+Shift+P and the Row
is looked at again. At 1366x768 full screen the plot widget was 118 pixels tall and drew its
curves in 41; at 1024x640 presentation's Row tab drew them in 185 against normal mode's 189.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from embedexplorer.ui.panes.row_view import MIN_ROW_PLOT_HEIGHT
from tests.ui.conftest import open_model, settle, type_text
from tests.ui.test_every_size import at_size

# What openbox's frame takes from a window's height on a screen of Xvfb (its title bar and bottom
# edge), measured with xwininfo: a window on a 1366x768 screen is 1366x745 inside its frame.
FRAME_HEIGHT = 23
SIZES = [(1600, 1000), (1366, 768), (1024, 640)]
FRAMED = [(width, height - FRAME_HEIGHT) for width, height in SIZES]


def drawing_height(qtbot, window) -> float:  # type: ignore[no-untyped-def]
    """The height the Row plot draws its curves in, where a person sees it: above the neighbours, or its tab."""
    row = window.panes.row_view
    if window.row_placement.compact:
        window.right.setCurrentWidget(row)  # the tab beside the map, as a click on "Row" shows it
    qtbot.wait(50)
    settle()
    assert row.isVisible() and row.plot_widget.isVisible()
    return float(row.plot_widget.getPlotItem().vb.sceneBoundingRect().height())


def placed(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Until the row pane sits where the window's height says it fits."""
    placement = window.row_placement
    qtbot.waitUntil(lambda: placement.compact == placement.wants_compact())
    settle()


def presentation_key(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    on = window.state.presentation
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.state.presentation != on)


@pytest.mark.parametrize("width,height", SIZES + FRAMED)
def test_the_row_plot_draws_in_a_plot_in_both_modes(qtbot, window, width: int, height: int) -> None:
    at_size(qtbot, window, width, height)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "nurse")
    row = window.panes.row_view
    qtbot.waitUntil(lambda: row.copy_button.isEnabled())  # its row has come: the legend holds all three lines
    placed(qtbot, window)
    normal = drawing_height(qtbot, window)
    assert normal >= MIN_ROW_PLOT_HEIGHT, (width, height, "normal", window.row_placement.compact, normal)
    window.right.setCurrentWidget(window.panes.map)
    try:
        presentation_key(qtbot, window)
        placed(qtbot, window)
        assert (window.width(), window.height()) == (width, height)
        presenting = drawing_height(qtbot, window)
        # A plot, and no shorter than normal mode's: presentation gives the plots more room, not less.
        assert presenting >= MIN_ROW_PLOT_HEIGHT, (width, height, "presentation", presenting)
        assert presenting >= normal, (width, height, normal, presenting)
        # What folded away is one hover over the title: the whole rows.
        assert not row.numbers.isVisible() and row.numbers.toolTip() in row.title.toolTip()
        window.right.setCurrentWidget(window.panes.map)
    finally:
        if window.state.presentation:
            presentation_key(qtbot, window)
    placed(qtbot, window)
    assert drawing_height(qtbot, window) >= MIN_ROW_PLOT_HEIGHT  # and back in normal mode
    assert row.numbers.isVisible() and row.note.isVisible()
