"""Tab from the tabs beside the map goes into the tab in front; a pane in the left column comes as drawn.

Seen in a real window at 1280x800: on the Row tab, Tab from the tab bar went to the toolbar's Model
box; the Row's own controls (Position row and sum, Copy row) came before the tab bar, right after
Cosine with, as if they sat in the left column. The health pane's did the same.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model, type_text
from tests.ui.dialogs import focus_on
from tests.ui.test_every_size import at_size


def tab_from(qtbot, widget):  # type: ignore[no-untyped-def]
    focus_on(qtbot, widget)
    qtbot.keyClick(widget, Qt.Key.Key_Tab)
    return QApplication.focusWidget()


def test_tab_from_the_tab_bar_enters_the_row_tab(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    # The window a 1280x800 screen gives under openbox's frame (the whole screen leaves room for the row above).
    at_size(qtbot, window, 1278, 775)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    row = window.panes.row_view
    assert window.row_placement.compact, "on a 1280x800 screen the row is a tab beside the map"
    window.right.setCurrentWidget(row)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    assert tab_from(qtbot, window.right.tabBar()) is row.show_position
    assert tab_from(qtbot, window.panes.neighbours_pane.compare_input) is window.right.tabBar()


def test_the_row_in_the_left_column_comes_before_the_neighbours(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    at_size(qtbot, window, 1600, 1000)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    row = window.panes.row_view
    assert not window.row_placement.compact, "at 1600x1000 the row sits above the neighbours"
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    assert tab_from(qtbot, window.panes.token_pane.chip_list) is row.show_position
    assert tab_from(qtbot, row.copy_button) is window.panes.neighbours_pane.k_box
