"""Issue 35, item 5: the Guess box keeps its width after a reveal (it shrank to about 50 px and stayed)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from embedexplorer.jobs.exercise_jobs import GUESS
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, guess_first_on, open_model, settle, type_text
from tests.ui.dialogs import focus_on
from tests.ui.test_every_size import at_size


def test_the_guess_box_stays_wide_after_each_reveal(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    at_size(qtbot, window, 1366, 768)
    open_model(qtbot, window, "bundled")
    guess_first_on(qtbot, window)
    bar = window.panes.guess_bar
    for word, guess in (("monday", "tuesday"), ("science", "experience"), ("cheese", "butter")):
        type_text(qtbot, window, word)
        settle()
        before = bar.input.width()
        focus_on(qtbot, bar.input)
        qtbot.keyClicks(bar.input, guess)
        with qtbot.waitSignal(answers(window, GUESS).ready, timeout=ANSWER_TIMEOUT_MS):
            qtbot.keyClick(bar.input, Qt.Key.Key_Return)
        settle()
        # The whole guess is in sight, and the box is as wide as before the reveal.
        needed = bar.input.fontMetrics().horizontalAdvance(guess)
        assert bar.input.width() >= before - 2 and bar.input.width() > needed + 20, (bar.input.width(), before)
        assert bar.score_label.toolTip() == bar.score.summary()
