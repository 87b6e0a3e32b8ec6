"""Which family is furthest?: a guess made for one model does not reveal another model's ranking."""

from __future__ import annotations

from PySide6.QtCore import Qt

from embedexplorer.jobs.exercise_jobs import FAMILY_DISTANCES
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model


def test_a_new_model_asks_for_a_new_guess(qtbot, window, gpt2_folder) -> None:
    open_model(qtbot, window, "bundled")
    desk = window.panes.exercises
    with qtbot.waitSignal(answers(window, FAMILY_DISTANCES).ready, timeout=ANSWER_TIMEOUT_MS):
        desk.furthest_action.trigger()
    dialog = desk.family_distances
    qtbot.mouseClick(dialog._buttons["days"], Qt.MouseButton.LeftButton)
    assert dialog.families() and "days is #" in dialog.verdict.text()  # the guess reveals MiniLM's ranking

    # The dialog stays open while the class moves to another model: its ranking is a new question.
    with qtbot.waitSignal(answers(window, FAMILY_DISTANCES).ready, timeout=LOAD_TIMEOUT_MS):
        open_model(qtbot, window, str(gpt2_folder))
    assert dialog.isVisible()
    assert dialog.families() == [], "the new model's ranking shows before anyone guessed for it"
    assert dialog.verdict.text() == ""
    assert dialog.buttons_box.isVisible()
    qtbot.mouseClick(dialog._buttons["cities"], Qt.MouseButton.LeftButton)
    assert len(dialog.families()) == 8 and "cities" in dialog.verdict.text()
