"""A lesson saved under a name typed without .json is written as NAME.json, which Open lesson lists.

Seen in a real window: Ctrl+Shift+S, "lesson1", Enter, a note, OK: the file was written as
"lesson1", with no suffix, and the Open a lesson dialog (lessons: *.lesson.json *.json) did not show it.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit

from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model, type_text
from tests.ui.dialogs import answer_next_dialog, focus_on


def test_a_lesson_named_without_a_suffix_is_saved_as_json(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "bank")

    def save_as(dialog: QFileDialog) -> None:
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        focus_on(qtbot, name)
        name.selectAll()
        qtbot.keyClicks(name, str(tmp_path / "lesson1"))
        answer_next_dialog(QInputDialog, lambda note: note.accept())
        qtbot.keyClick(name, Qt.Key.Key_Return)

    answer_next_dialog(QFileDialog, save_as)
    window.panes.teaching.save_dialog()
    saved = tmp_path / "lesson1.json"
    qtbot.waitUntil(lambda: any(tmp_path.glob("lesson1*")), timeout=ANSWER_TIMEOUT_MS)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("lesson1")] == [saved.name]
    assert json.loads(saved.read_text(encoding="utf-8"))["texts"]["first"] == "bank"
