"""The map with the keyboard alone: Tab reaches it (a focus frame says so), then keys zoom, pan and look up."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.ui.conftest import open_model, settle
from tests.ui.dialogs import focus_on


def centre_and_width(canvas) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    (x0, x1), (y0, y1) = canvas.plot.getViewBox().viewRange()
    return (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0


def test_plus_minus_and_arrows_zoom_and_pan_the_focused_map(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    settle()
    focus_on(qtbot, canvas)
    x, y, width = centre_and_width(canvas)

    qtbot.keyClick(canvas, Qt.Key.Key_Plus, Qt.KeyboardModifier.ShiftModifier)  # "+" as most keyboards type it
    settle()
    assert centre_and_width(canvas)[2] < width * 0.9, "+ zooms in"
    x, y, width = centre_and_width(canvas)
    qtbot.keyClick(canvas, Qt.Key.Key_Plus, Qt.KeyboardModifier.KeypadModifier)
    settle()
    assert centre_and_width(canvas)[2] < width * 0.9, "the keypad's + zooms in too"
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    settle()
    assert centre_and_width(canvas)[2] > width * 1.1, "- zooms out"

    x, y, width = centre_and_width(canvas)
    qtbot.keyClick(canvas, Qt.Key.Key_Right)
    settle()
    assert centre_and_width(canvas)[0] > x + width * 0.05, "Right moves the view right"
    qtbot.keyClick(canvas, Qt.Key.Key_Up)
    settle()
    assert centre_and_width(canvas)[1] > y, "Up moves the view up"


def test_enter_on_the_map_looks_up_the_word_find_ringed(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    settle()
    view.focus_search()
    qtbot.keyClicks(view.search_box, "tokyo")
    qtbot.keyClick(view.search_box, Qt.Key.Key_Return)  # rings it and centres the view on it
    focus_on(qtbot, view.canvas)
    qtbot.keyClick(view.canvas, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.panes.token_pane.input.text().strip().casefold() == "tokyo")
