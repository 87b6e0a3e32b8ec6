"""View > Find on the map (Ctrl+F) from another tab brings the map forward with the cursor in its Find box.

Seen in a real window: on the Row tab, Ctrl+F put the keyboard in the map's Find box behind it, out of
sight; what was typed next went nowhere a person could see.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QTabWidget

from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model
from tests.ui.dialogs import focus_on


def test_ctrl_f_on_the_row_tab_shows_the_map_and_its_find_box(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    row = window.panes.row_view
    tabs = next(w for w in _ancestors(row) if isinstance(w, QTabWidget))
    pages = [tabs.widget(i) for i in range(tabs.count())]
    tabs.setCurrentWidget(next(page for page in pages if page is row or page.isAncestorOf(row)))
    assert not view.search_box.isVisible(), "the map is behind the Row tab"
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    focus_on(qtbot, window.panes.token_pane.input)
    qtbot.keyClick(window.panes.token_pane.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is view.search_box, timeout=ANSWER_TIMEOUT_MS)
    assert view.search_box.isVisible(), "the Find box the keys now go to is in sight"


def _ancestors(widget):  # type: ignore[no-untyped-def]
    while widget is not None:
        yield widget
        widget = widget.parent()
