"""Enter on a focused button of the window clicks it, as Space does (in dialogs Qt does it already).

Seen with the keyboard alone: Tab to Show the k nearest, or to a family's name beside the map, then
Enter: nothing happened; only Space worked.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model, type_text
from tests.ui.dialogs import focus_on


def test_enter_on_the_maps_buttons_clicks_them(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    view = window.panes.map.view
    focus_on(qtbot, view.isolate_button)
    qtbot.keyClick(view.isolate_button, Qt.Key.Key_Return)
    qtbot.waitUntil(view.isolate_button.isChecked, timeout=ANSWER_TIMEOUT_MS)
    name = view.panel.highlight_buttons["cities"]
    focus_on(qtbot, name)
    with qtbot.waitSignal(name.clicked, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClick(name, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
