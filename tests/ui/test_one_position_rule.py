"""Issue 35, item 10: one rule for "position-table row N", the same in the row pane, Two texts, Help and the docs."""

from __future__ import annotations

import re
from pathlib import Path

from embedexplorer.core.tables.position_rows import RULE
from embedexplorer.jobs.exercise_jobs import TWO_TEXTS
from embedexplorer.jobs.table_jobs import ROW
from embedexplorer.ui.window.help_menu import READING_HELP
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, type_text

DOCS = Path(__file__).resolve().parents[2] / "docs" / "exercises.md"


def test_bank_reads_the_same_position_row_in_every_pane_and_in_the_docs(qtbot, window, minilm_table) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    pane = window.panes.exercises.two_texts.pane
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.two_texts_action.trigger()
    said = [re.search(r"place \d+, position-table row \d+", side.text()).group(0) for side in pane.sides]
    # MiniLM's tokenizer puts [CLS] before "the river bank": bank is its 4th token, so it reads row 4.
    assert minilm_table.encode("the river bank")[2].token == "bank"
    assert said == ["place 3, position-table row 4", "place 2, position-table row 3"]
    # The row pane, for bank typed in the main window, says the same.
    type_text(qtbot, window, "the river bank")
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.select(2)
    view = window.panes.row_view
    assert said[0] in view.title.text()
    assert "position row 4" in [name for name, _ in view.row_lines()]
    # The rule is said once, in the same words, in Help and in the docs, and the docs' example follows it.
    docs = DOCS.read_text(encoding="utf-8").replace("\n", " ")
    assert RULE in READING_HELP and RULE in docs
    for snippet in said:
        assert snippet in docs, snippet
    assert not re.search(r"place 3[^.;]{0,12}position-table row 3\b", docs)
