"""A lesson reopened brings back the Two texts exercise as it was, beside a different main text."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from embedexplorer.jobs.exercise_jobs import TWO_TEXTS
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, lesson_opened_elsewhere, open_model, type_text


def pick(qtbot, window, side: int, place: int) -> None:  # type: ignore[no-untyped-def]
    """Click the chip at ``place`` (from 0) of one text of Two texts, as a hand does."""
    pane = window.panes.exercises.two_texts.pane
    if pane.places()[side] == place:
        return  # picked already (the pane picks the shared token by itself)
    chips = pane.chips[side]
    rect = chips.visualItemRect(chips.item(place))
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.mouseClick(chips.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_the_two_texts_and_their_picked_tokens_come_back(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "the river bank")  # the chapter's text; "the" is the token looked at
    desk = window.panes.exercises
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        desk.two_texts_action.trigger()
    pane = desk.two_texts.pane
    pick(qtbot, window, 0, 2)  # bank ...
    pick(qtbot, window, 1, 1)  # ... and bank
    # The teacher then writes a first text of her own for the exercise.
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        pane.inputs[0].setText("a bank of the river")
    pick(qtbot, window, 0, 1)
    shown = (pane.texts(), pane.places(), window.panes.token_pane.text(), window.panes.token_pane.selected_index())
    assert shown == (("a bank of the river", "my bank account"), (1, 1), "the river bank", 0)
    lesson = tmp_path / "bank.lesson.json"
    assert window.panes.teaching.save_to(str(lesson))
    json.loads(lesson.read_text(encoding="utf-8"))  # a file a teacher can read and edit

    other = lesson_opened_elsewhere(qtbot, tmp_path, lesson)
    with qtbot.waitSignal(answers(other, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        other.panes.exercises.two_texts_action.trigger()
    again = other.panes.exercises.two_texts.pane
    qtbot.waitUntil(lambda: other.panes.teaching.pending is None, timeout=ANSWER_TIMEOUT_MS)
    reopened = (again.texts(), again.places(), other.panes.token_pane.text(), other.panes.token_pane.selected_index())
    assert reopened == shown
    other.close()
