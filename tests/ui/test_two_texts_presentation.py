"""Two texts in presentation mode on a 1024x640 laptop: each side's place and position-table row in sight.

Seen in a real window (GPT-2-shaped folder, Ctrl+Shift+P, then Ctrl+Shift+T): each side's first line
was cut at "…place 3, position-table row", the row number, which is the point of the exercise, out of
sight on both sides; the rows of numbers ended in "765 mor…".
"""

from __future__ import annotations

from embedexplorer.jobs.exercise_jobs import TWO_TEXTS
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle
from tests.ui.test_every_size import at_size


def test_each_side_reads_whole_in_presentation_on_a_laptop(qtbot, window, gpt2_folder) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, str(gpt2_folder))
    at_size(qtbot, window, 1024, 640)
    window.panes.teaching.set_presentation(True)
    try:
        with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
            window.panes.exercises.two_texts_action.trigger()  # Ctrl+Shift+T
        dialog = window.panes.exercises.two_texts
        assert dialog.frameGeometry().width() <= 1024  # the dialog fits the laptop's screen
        settle()
        pane = dialog.pane
        rows = ("place 3, position-table row 3", "place 2, position-table row 2")
        for side, row in zip(pane.sides, rows, strict=True):
            assert row in side.shown_text()
            assert not side.is_shortened(), (side.width(), side.shown_text())
            assert "more]" in side.shown_text()  # each row says how many numbers are not shown
    finally:
        window.panes.teaching.set_presentation(False)
