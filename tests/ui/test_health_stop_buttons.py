"""Issue 35 (round 3): the Health tab's two Stop buttons each say what they stop, in their text and to a reader."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model


def test_each_stop_button_names_the_check_it_stops(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    pane = window.panes.health_pane
    window.right.setCurrentWidget(pane)  # the vocabulary check starts as the tab opens
    vocabulary_stop, model_stop = pane.stop_button, pane.verify.stop_button
    qtbot.waitUntil(vocabulary_stop.isEnabled, timeout=ANSWER_TIMEOUT_MS)
    # While the first check runs, the summary says so (not "Open the tab..." with the tab open).
    assert pane.summary.text().startswith("Checking the vocabulary")
    texts = {button.text().replace("&", "") for button in (vocabulary_stop, model_stop)}
    assert texts == {"Stop the vocabulary check", "Stop the model check"}
    names = {vocabulary_stop.accessibleName(), model_stop.accessibleName()}
    assert names == {"stop the vocabulary check", "stop the model check"}
    # Each is drawn whole where it stands (the tab scrolls on a small screen rather than cut them).
    for button in (vocabulary_stop, model_stop):
        assert button.sizeHint().width() <= button.width() + 1, (button.text(), button.width())
    # The one that says "vocabulary" stops the vocabulary check; the model check's is untouched.
    qtbot.mouseClick(vocabulary_stop, Qt.MouseButton.LeftButton)
    assert "Stopped" in pane.message.text() and pane.check_button.isEnabled()
    assert not pane.summary.text().startswith("Checking")  # stopped before a report: no check is going on
    assert not model_stop.isEnabled() and not pane.verify.note.text().startswith("Stopped")


def test_alt_t_goes_to_the_text_box_and_alt_b_to_the_health_tab(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """The Text box's mnemonic is its own: the Health tab, which shared Alt+T, took the first press."""
    open_model(qtbot, window, "bundled")
    window.activateWindow()
    qtbot.waitUntil(lambda: window.isActiveWindow())
    window.model_bar.box.setFocus()
    qtbot.keyClick(window.model_bar.box, Qt.Key.Key_T, Qt.KeyboardModifier.AltModifier)
    assert window.panes.token_pane.input.hasFocus()
    assert window.right.currentWidget() is window.panes.map
    qtbot.keyClick(window.panes.token_pane.input, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)
    assert window.right.currentWidget() is window.panes.health_pane
