"""Ctrl+Tab to the next tab puts the keyboard on a control of that tab, where its focus shows.

Seen in a real window: Ctrl+Tab to Through the layers, Directions or Vocabulary health gave the
keyboard to the pane's frameless scroll area, which draws no focus at all: nothing on screen said
where the keys went, and one more Tab was needed to reach Run through the layers or Pairs.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QScrollArea

from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model
from tests.ui.dialogs import focus_on
from tests.ui.test_every_size import at_size


def test_ctrl_tab_gives_each_tab_a_control_not_its_scroll_area(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    at_size(qtbot, window, 1280, 800)
    open_model(qtbot, window, "bundled")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    tabs = window.right
    focus_on(qtbot, window.panes.map.view.search_box)
    landed = {}
    for _ in range(tabs.count() - 1):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
        widget = QApplication.focusWidget()
        landed[tabs.tabText(tabs.currentIndex())] = type(widget).__name__
        assert tabs.currentWidget().isAncestorOf(widget)
    assert not [tab for tab, kind in landed.items() if kind == QScrollArea.__name__], landed
