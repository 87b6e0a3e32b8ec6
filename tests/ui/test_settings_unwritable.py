"""Settings that cannot be written are said when the window opens, not found lost at the next start."""

from __future__ import annotations

from pathlib import Path

from embedexplorer.app import create_window
from embedexplorer.settings import Settings


def test_a_window_whose_settings_cannot_be_written_says_so_in_one_sentence(qtbot, tmp_path: Path) -> None:
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")  # even root cannot make a folder where a file is
    path = blocked / "settings.ini"
    window = create_window(str(path))
    qtbot.addWidget(window)
    window.show()
    said = window.message_bar.text()
    assert said == f"Settings will not be remembered: {path} cannot be written."
    assert window.message_bar.level == "info"
    window.close()


def test_settings_that_can_be_written_say_nothing_and_keep_what_changed(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "settings.ini"
    window = create_window(str(path))
    qtbot.addWidget(window)
    window.show()
    assert window.message_bar.text() == ""
    window.state.update(k=13)
    window.close()
    assert Settings(str(path)).k == 13
