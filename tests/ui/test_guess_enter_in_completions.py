"""Guess first: Enter in the completion list judges the word the guess box then shows."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from embedexplorer.core.tables.spelling import word_token
from embedexplorer.jobs.exercise_jobs import COMPLETE, GUESS
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, type_text
from tests.ui.dialogs import focus_on


def test_enter_on_the_highlighted_completion_guesses_that_word(qtbot, window, gpt2_folder, gpt2_table) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    window.panes.exercises.guess_action.setChecked(True)
    type_text(qtbot, window, " Monday")
    bar = window.panes.guess_bar
    focus_on(qtbot, bar.input)
    with qtbot.waitSignal(answers(window, COMPLETE).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClicks(bar.input, "Tues")
    popup = bar.completer.popup()
    qtbot.waitUntil(popup.isVisible, timeout=ANSWER_TIMEOUT_MS)
    # The list opens with its most likely completion ("Tuesday") marked: Enter takes it, as Qt's does.
    highlighted = popup.currentIndex().data()
    assert highlighted and highlighted != "Tues"
    with qtbot.waitSignal(answers(window, GUESS).ready, timeout=ANSWER_TIMEOUT_MS) as judged:
        qtbot.keyClick(QApplication.activePopupWidget() or popup, Qt.Key.Key_Return)
    shown = bar.input.text()
    assert judged.args[0].guess.id == word_token(gpt2_table, shown).id, (
        f"the box shows {shown!r} but {judged.args[0].guess.token} was judged"
    )
    assert bar.score.guesses == 1
