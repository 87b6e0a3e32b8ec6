"""A box of several lines in a dialog (Words matching's list, a lesson's note) lets Tab go to the next
control and takes Ctrl+Enter as OK, so a person at the keyboard can leave it.

Seen in a real window: in the lesson's note Tab typed a tab into the note and Enter a new line; a
tab typed into Words matching's list became part of the word.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QLineEdit, QPlainTextEdit

from embedexplorer.jobs.map_jobs import WORD_MAP
from embedexplorer.ui.map.words_dialog import WordsDialog
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, type_text
from tests.ui.dialogs import answer_next_dialog, focus_on

CTRL = Qt.KeyboardModifier.ControlModifier


def tab_leaves(qtbot, field: QPlainTextEdit, *lines: str) -> None:  # type: ignore[no-untyped-def]
    focus_on(qtbot, field)
    for number, line in enumerate(lines):
        if number:
            qtbot.keyClick(field, Qt.Key.Key_Return)  # Enter is a new line here
        qtbot.keyClicks(field, line)
    qtbot.keyClick(field, Qt.Key.Key_Tab)
    assert "\t" not in field.toPlainText()
    assert QApplication.focusWidget() is not field, "Tab moves on to the next control"
    focus_on(qtbot, field)
    qtbot.keyClick(field, Qt.Key.Key_Return, CTRL)  # OK, from the box itself


def test_words_matching_list_lets_tab_go_and_ctrl_enter_accepts(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    seen: list[str] = []

    def write_list(dialog: WordsDialog) -> None:
        dialog.list_choice.setChecked(True)
        tab_leaves(qtbot, dialog.listing, "paris", "london")
        seen.append("closed" if not dialog.isVisible() else "open")

    answer_next_dialog(WordsDialog, write_list)
    with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.map.view.ask_words()
    assert seen == ["closed"]
    assert sorted(window.panes.map.view.family_map.texts) == ["london", "paris"]


def test_a_lessons_note_lets_tab_go_and_ctrl_enter_saves(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "bank")
    lesson = tmp_path / "bank.lesson.json"

    def save_as(dialog: QFileDialog) -> None:
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        focus_on(qtbot, name)
        name.selectAll()
        qtbot.keyClicks(name, str(lesson))
        answer_next_dialog(QInputDialog, lambda note: tab_leaves(qtbot, note.findChild(QPlainTextEdit), "Guess first."))
        qtbot.keyClick(name, Qt.Key.Key_Return)

    answer_next_dialog(QFileDialog, save_as)
    window.panes.teaching.save_dialog()
    qtbot.waitUntil(lesson.exists, timeout=ANSWER_TIMEOUT_MS)
    assert json.loads(lesson.read_text(encoding="utf-8"))["note"] == "Guess first."
