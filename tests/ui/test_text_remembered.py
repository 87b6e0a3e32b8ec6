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


def test_a_garbled_list_in_the_settings_file_starts_empty(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A settings file another program or a bad disk garbled: File > Recent models never lists b'x' twice."""
    from embedexplorer.app import create_window

    path = tmp_path / "garbled.ini"
    path.write_text(
        "[General]\nversion=1\nrecent_models=@ByteArray(xx)\nhidden_families=@ByteArray(ab)\n"
        "health_reasons=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x18QBrush)\n",
        encoding="utf-8",
    )
    settings = Settings(str(path))
    assert (settings.recent_models, settings.hidden_families, settings.health_reasons) == ([], [], [])
    window = create_window(str(path))
    qtbot.addWidget(window)
    assert [a.text() for a in window.model_bar.recent_menu.actions()] == []
    window.close()
