"""The Analogies dialog shows its eight answers whole in presentation mode too.

Seen in a real window (GPT-2-shaped folder, Analogies open, then Ctrl+Shift+P): the dialog's type
grew but the dialog did not, and the table showed 7 of its 8 rows, the eighth a scroll away.
"""

from __future__ import annotations

from embedexplorer.jobs.exercise_jobs import ANALOGY
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle


def _rows_in_sight(table) -> int:  # type: ignore[no-untyped-def]
    """Rows of ``table`` drawn whole in its view."""
    view = table.viewport().height()
    return sum(1 for row in range(table.rowCount()) if table.rowViewportPosition(row) + table.rowHeight(row) <= view)


def test_every_answer_in_sight_before_and_after_presentation(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    with qtbot.waitSignal(answers(window, ANALOGY).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.show_analogies()
    dialog = window.panes.exercises.analogy
    table = dialog.pane.table
    assert table.rowCount() == 8
    settle()
    try:
        assert _rows_in_sight(table) == 8
        for presenting in (False, True):
            window.panes.teaching.set_presentation(presenting)
            settle()
            # As small as it may be made (a laptop's screen squeezes it so): every answer still in sight.
            dialog.resize(dialog.minimumSizeHint())
            settle()
            assert _rows_in_sight(table) == 8, (presenting, dialog.size())
            assert dialog.minimumSizeHint().height() <= 600  # it still fits a 1024x640 laptop under its title bar
    finally:
        window.panes.teaching.set_presentation(False)
