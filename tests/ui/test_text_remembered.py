"""The typed text is remembered once typing pauses and when the window closes, not written to disk per word."""

from __future__ import annotations

from embedexplorer.settings import REMEMBER_TEXT_MS, Settings


def test_the_typed_text_is_remembered_after_a_pause_and_on_closing(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from embedexplorer.app import create_window

    path = str(tmp_path / "remember.ini")
    first = create_window(path)
    qtbot.addWidget(first)
    first.show()
    line = first.panes.token_pane.input
    line.clear()
    qtbot.keyClicks(line, "the river bank")
    # Read back from the file by another reader, as the next launch would.
    qtbot.waitUntil(lambda: Settings(path).text == "the river bank", timeout=REMEMBER_TEXT_MS + 5000)
    line.clear()
    qtbot.keyClicks(line, "my bank account")
    qtbot.waitUntil(lambda: first.state.text == "my bank account")  # the pane's own pause before it asks
    first.close()  # at once, before the settings' pause: closing remembers it
    assert Settings(path).text == "my bank account"
    second = create_window(path)
    qtbot.addWidget(second)
    assert second.panes.token_pane.input.text() == "my bank account"
    second.close()
