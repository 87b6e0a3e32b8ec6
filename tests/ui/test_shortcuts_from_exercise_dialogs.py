"""The teaching shortcuts work while an exercise dialog has the keyboard, as they do in the window."""

from __future__ import annotations

from PySide6.QtCore import Qt

from embedexplorer.jobs.exercise_jobs import ANALOGY, TWO_TEXTS
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model
from tests.ui.dialogs import focus_on

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def test_presentation_and_two_texts_from_inside_the_analogy_dialog(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    desk = window.panes.exercises
    with qtbot.waitSignal(answers(window, ANALOGY).ready, timeout=ANSWER_TIMEOUT_MS):
        desk.analogy_action.trigger()
    box = desk.analogy.pane.inputs[0]
    desk.analogy.activateWindow()
    focus_on(qtbot, box)
    # The teacher, in the dialog, turns the projector's type on for the class ...
    qtbot.keyClick(box, Qt.Key.Key_P, CTRL_SHIFT)
    assert window.state.presentation, "Ctrl+Shift+P in the Analogies dialog did nothing"
    # ... and goes on to the next exercise from the keyboard.
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClick(box, Qt.Key.Key_T, CTRL_SHIFT)
    assert desk.two_texts.isVisible()
    window.panes.teaching.set_presentation(False)
