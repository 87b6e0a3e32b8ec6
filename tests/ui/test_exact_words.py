"""The README's other reading of a word, asked for by a person in the window: a word in double quotes is read as typed.

On the GPT-2-shaped table, "France" typed in Cosine with means " France" (the word inside a
sentence); typed with its quotes it means the token that starts a text. The window's answer is
the command line's, token for token, and GPT-2's own tokenizer (transformers) says which token it is.
"""

from __future__ import annotations

import json

from embedexplorer.cli import main
from embedexplorer.jobs.table_jobs import COSINE
from tests.gpt2_fixture import build_gpt2_tokenizer
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, type_text


def test_a_quoted_word_is_read_as_typed_in_the_window_as_on_the_command_line(
    qtbot, window, gpt2_folder, capsys
) -> None:  # type: ignore[no-untyped-def]
    hf = build_gpt2_tokenizer()
    open_model(qtbot, window, str(gpt2_folder))
    type_text(qtbot, window, " Paris")
    box = window.panes.neighbours_pane.compare_input
    seen = {}
    for typed, read in (("France", " France"), ('"France"', "France")):
        box.clear()
        with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS) as answered:
            qtbot.keyClicks(box, typed)
        seen[typed] = in_window = answered.args[0]
        assert in_window.b_id == hf.encode(read)[0]
        assert main(["cosine", " Paris", typed, "--model", str(gpt2_folder), "--json"]) == 0
        on_the_command_line = json.loads(capsys.readouterr().out)
        assert (on_the_command_line["a_id"], on_the_command_line["b_id"]) == (in_window.a_id, in_window.b_id)
        assert on_the_command_line["cosine"] == in_window.cosine
    assert seen["France"].b_id != seen['"France"'].b_id  # two readings, two tokens
    # --exact is the same as the quotes.
    assert main(["cosine", " Paris", "France", "--exact", "--model", str(gpt2_folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["b_id"] == seen['"France"'].b_id
