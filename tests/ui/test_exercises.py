"""The chapter's exercises in the window: guess first, the furthest family, analogies, two texts, honest sums."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication
from safetensors.numpy import load_file

from embedexplorer.jobs.exercise_jobs import ANALOGY, COMPLETE, FAMILY_DISTANCES, GUESS, SUGGEST, TWO_TEXTS
from embedexplorer.jobs.table_jobs import ROW, TOKENS
from embedexplorer.state import Selection
from tests.core.test_family_distances import loop_means
from tests.core.test_sources import run_cli
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, guess_first_on, open_model, settle, type_text

FAMILIES = ("countries", "cities", "animals", "days", "numbers", "food", "feelings", "jobs")


def unit64(table) -> np.ndarray:  # type: ignore[no-untyped-def]
    rows = np.asarray(table.rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def brute_rank(table, query: int, row: int) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    """Rank of ``row`` among all rows but ``query`` by float64 cosine, ties by id."""
    unit = unit64(table)
    scores = unit @ unit[query]
    scores[query] = -np.inf
    order = np.lexsort((np.arange(len(scores)), -scores))
    return int(np.flatnonzero(order == row)[0]) + 1, float(scores[row])


def guess(qtbot, window, text: str):  # type: ignore[no-untyped-def]
    bar = window.panes.guess_bar
    bar.input.setText(text)
    with qtbot.waitSignal(answers(window, GUESS).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        qtbot.keyClick(bar.input, Qt.Key.Key_Return)
    return blocker.args[0]


# ----- 1. guess first -------------------------------------------------------------------------------
def test_guess_first_hides_then_reveals_with_rank_and_score(qtbot, window, minilm_table) -> None:
    open_model(qtbot, window, "bundled")
    desk, pane = window.panes.exercises, window.panes.neighbours_pane
    guess_first_on(qtbot, window)
    assert desk.guess_action.shortcut().toString() == "Ctrl+G"
    type_text(qtbot, window, "monday")
    settle()
    assert pane.is_hidden() and not pane.table.isVisible() and pane.hidden_note.isVisible()
    assert window.panes.map.view.canvas._query_item.data.size == 0  # no star, no rings: they would tell

    outcome = guess(qtbot, window, "tuesday")
    rank, cosine = brute_rank(minilm_table, minilm_table.query("monday").id, minilm_table.query("tuesday").id)
    assert rank == 1
    assert window.panes.guess_bar.result.text() == f"tuesday is #1 of 30,521, cosine {cosine:.3f}"
    assert outcome.rank.rank == rank
    assert not pane.is_hidden() and pane.table.isVisible()
    assert pane.table.item(0, 0).text() == "tuesday" and pane.table.item(0, 0).font().bold()
    assert not pane.table.item(1, 0).font().bold()
    assert window.panes.guess_bar.score_label.text() == "1 guess: 1 #1, 1 in the top 8"
    assert window.panes.map.view.canvas._query_item.data.size == 1  # the star comes back with the answer

    # A second token: hidden again; a guess far down the list is named by its rank.
    type_text(qtbot, window, "paris")
    assert pane.is_hidden()
    far = guess(qtbot, window, "banana")
    rank, cosine = brute_rank(minilm_table, minilm_table.query("paris").id, minilm_table.query("banana").id)
    assert rank > 100 and far.rank.rank == rank
    assert f"banana is not in the first 100: rank {rank:,} of 30,521, cosine {cosine:.3f}" in (
        window.panes.guess_bar.result.text()
    )
    assert window.panes.guess_bar.score_label.text() == "2 guesses: 1 #1, 1 in the top 8"


def test_guess_completion_and_twenty_suggestions(qtbot, window, minilm_table) -> None:
    open_model(qtbot, window, "bundled")
    desk = window.panes.exercises
    with qtbot.waitSignal(answers(window, SUGGEST).ready, timeout=ANSWER_TIMEOUT_MS):
        desk.guess_action.setChecked(True)
        window.open_model("bundled")  # suggestions come with every model
    words = window.panes.suggestions.tokens()
    assert len(words) == 20 and words[:6] == ["paris", "france", "cat", "monday", "happy", "doctor"]
    assert window.panes.suggestions.isVisible()
    with qtbot.waitSignal(
        answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda a: a.text == " king"
    ):
        rect = window.panes.suggestions.list.visualItemRect(window.panes.suggestions.list.item(6))
        qtbot.mouseClick(window.panes.suggestions.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert [t.token for t in window.panes.token_pane.chip_tokens] == ["king"]

    window.panes.guess_bar.input.setFocus()
    with qtbot.waitSignal(answers(window, COMPLETE).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        qtbot.keyClicks(window.panes.guess_bar.input, "quee")
    offered = [token for _, token in blocker.args[0].tokens]
    assert "queen" in offered and all(t.removeprefix("##").startswith("quee") for t in offered)
    assert window.panes.guess_bar.completer.model().stringList() == offered


def test_guess_on_gpt2_takes_the_leading_space(qtbot, window, gpt2_folder, gpt2_table) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    window.panes.exercises.guess_action.setChecked(True)
    type_text(qtbot, window, " Monday")
    outcome = guess(qtbot, window, "Tuesday")
    assert (outcome.guess.id, outcome.guess.token) == (3431, "_Tuesday")
    rank, cosine = brute_rank(gpt2_table, gpt2_table.query(" Monday").id, 3431)
    assert outcome.rank.rank == rank and outcome.rank.of == 50_256
    assert outcome.message() in window.panes.guess_bar.result.text()
    # A word that is two tokens is refused with what it may have meant, and the list stays hidden.
    friday = gpt2_table.query(" Friday").id
    window.state.update(selection=Selection(friday, 1, "_Friday"))
    bar = window.panes.guess_bar
    bar.input.setText("tuesday")
    with qtbot.waitSignal(answers(window, GUESS).failed, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClick(bar.input, Qt.Key.Key_Return)
    assert "one token is needed; try" in bar.result.text() and "_Tuesday" in bar.result.text()
    assert window.panes.neighbours_pane.is_hidden()


# ----- 2. the furthest family -----------------------------------------------------------------------
def test_furthest_family_guess_then_ranking(qtbot, window, minilm_table) -> None:
    open_model(qtbot, window, "bundled")
    dialog = window.panes.exercises.family_distances
    with qtbot.waitSignal(answers(window, FAMILY_DISTANCES).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.furthest_action.trigger()
    assert dialog.isVisible() and dialog.families() == []  # nothing to see before a guess
    assert sorted(dialog._buttons) == sorted(FAMILIES)
    qtbot.mouseClick(dialog._buttons["days"], Qt.MouseButton.LeftButton)

    from embedexplorer.core.maps.family_map import load_families

    vectors = {
        name: [np.asarray(minilm_table.rows[[t.id for t in minilm_table.encode(w)]], dtype=np.float64).mean(axis=0)
               for w in words]
        for name, words in load_families().items()
    }  # fmt: skip
    expected = loop_means(vectors)
    order = sorted(expected, key=lambda n: expected[n][0])
    assert dialog.families() == order
    place = order.index("days") + 1
    assert f"days is #{place} of 8" in dialog.verdict.text()
    assert f"furthest away is {order[0]}" in dialog.verdict.text()
    row = order.index("days")
    assert dialog.table.item(row, 3).text() == f"{expected['days'][1]:.3f}"

    # Map > Family distances: the ranking at once; hidden families are left out.
    with qtbot.waitSignal(answers(window, FAMILY_DISTANCES).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.distances_action.trigger()
    assert dialog.families() == order
    with qtbot.waitSignal(answers(window, FAMILY_DISTANCES).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.map.view.set_hidden_families({"days"})
    # Without the days, every family's "others" are others too: the ranking is measured again.
    without = loop_means({name: rows for name, rows in vectors.items() if name != "days"})
    assert dialog.families() == sorted(without, key=lambda n: without[n][0])


# ----- 3. analogies ---------------------------------------------------------------------------------
def test_analogy_pane_both_ways_and_same_as_the_cli(qtbot, window, minilm_table) -> None:
    open_model(qtbot, window, "bundled")
    pane = window.panes.exercises.analogy.pane
    with qtbot.waitSignal(answers(window, ANALOGY).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        window.panes.exercises.analogy_action.trigger()
    assert pane.tokens()[0] == "queen"
    assert "left out" in pane.inputs_line.text()
    assert "makes no claim" in pane.claim.text()
    unit = unit64(minilm_table)
    ids = [minilm_table.query(w).id for w in ("king", "man", "woman")]
    vector = unit[ids[0]] - unit[ids[1]] + unit[ids[2]]
    scores = unit @ vector / np.linalg.norm(vector)
    ranked = [int(i) for i in np.lexsort((np.arange(len(scores)), -scores)) if int(i) not in ids]
    queen = minilm_table.query("queen").id
    assert blocker.args[0].expected.rank.rank == ranked.index(queen) + 1
    assert f"queen is #{ranked.index(queen) + 1:,} of 30,519" in pane.expected_line.text()

    with qtbot.waitSignal(answers(window, ANALOGY).ready, timeout=ANSWER_TIMEOUT_MS):
        pane.include_inputs.setChecked(True)
    everything = [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))]
    assert pane.tokens()[0] == minilm_table.tokens[everything[0]] == "king"
    assert "included" in pane.inputs_line.text()
    assert f"queen is #{everything.index(queen) + 1:,} of 30,522" in pane.expected_line.text()
    # The line under the table is a command that gives the same answer.
    command = pane.command_line.text()
    args = shlex.split(command)[1:]
    result = run_cli(*args, "--json")
    assert result.returncode == 0, result.stderr
    assert [n["token"] for n in json.loads(result.stdout)["neighbours"]] == pane.tokens()


def test_analogy_on_gpt2_spells_words_as_inside_a_sentence(qtbot, window, gpt2_folder) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    with qtbot.waitSignal(answers(window, ANALOGY).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        window.panes.exercises.show_analogies()
    assert blocker.args[0].label == "_king - _man + _woman"
    assert "_king - _man + _woman" in window.panes.exercises.analogy.pane.heading.text()


# ----- 4. two texts ---------------------------------------------------------------------------------
def test_two_texts_bank_on_gpt2(qtbot, window, gpt2_folder, gpt2_table) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    pane = window.panes.exercises.two_texts.pane
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        window.panes.exercises.two_texts_action.trigger()
    answer = blocker.args[0]
    assert [t.token if t else None for t in pane.picked_tokens()] == ["_bank", "_bank"]
    assert "Same token id 3,331 (_bank): the same table row, cosine 1.000." in pane.verdict.text()
    assert "place 3, position-table row 3" in pane.sides[0].text()
    assert "place 2, position-table row 2" in pane.sides[1].text()
    sums = answer.first.input.enters - answer.second.input.enters
    np.testing.assert_allclose(sums, gpt2_table.positions[2] - gpt2_table.positions[1], atol=1e-6)

    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        pane.inputs[1].setText("bank account")
    assert "Different tokens: _bank is id 3,331, bank is id 17,796" in pane.verdict.text()
    assert "at the start of a text" in pane.verdict.text()


def test_two_texts_on_a_table_without_position_rows(qtbot, window, tmp_path) -> None:
    """A GGUF without a position table, opened in the window: the verdict and the hint under it say the table
    has no position rows; they do not say the two tokens stand at the same place, nor that a position row
    tells them apart."""
    from gguf.constants import GGMLQuantizationType as Q

    from tests.gguf_fixture import gpt2_vocabulary, write_gguf

    tokens, merges = gpt2_vocabulary()
    rows = np.random.default_rng(4).standard_normal((len(tokens), 16)).astype(np.float16)
    path = write_gguf(tmp_path / "rotary.gguf", rows, Q.F16, tokens=tokens, merges=merges)
    open_model(qtbot, window, str(path))
    pane = window.panes.exercises.two_texts.pane
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.two_texts_action.trigger()
    assert [t.token if t else None for t in pane.picked_tokens()] == ["_bank", "_bank"]
    verdict, hint = pane.verdict.text(), pane.hint.text()
    assert "no position rows" in verdict and "same place" not in verdict
    assert "no position rows" in hint and "Only the position row" not in hint


def test_two_texts_on_minilm_count_the_cls_row(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    pane = window.panes.exercises.two_texts.pane
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.show_two_texts()
    assert "Same token id 2,924 (bank)" in pane.verdict.text()
    assert "place 3, position-table row 4" in pane.sides[0].text() and "LayerNorm(sum)" in pane.sides[0].text()


@pytest.mark.parametrize("presentation_first", [True, False])
def test_two_texts_numbers_grow_with_presentation_as_the_words_do(qtbot, window, presentation_first: bool) -> None:
    """The rows' fixed-width numbers are read from the back of the room too, whichever comes first."""
    open_model(qtbot, window, "bundled")
    presentation = window.panes.teaching.presentation_action
    if presentation_first:
        presentation.trigger()
    with qtbot.waitSignal(answers(window, TWO_TEXTS).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.two_texts_action.trigger()
    pane = window.panes.exercises.two_texts.pane
    if not presentation_first:
        normal = pane.sides[0].font().pointSizeF()
        presentation.trigger()
        qtbot.waitUntil(lambda: pane.sides[0].font().pointSizeF() > normal)
    assert presentation.isChecked()
    fixed_family = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
    for side in pane.sides:
        assert side.font().family() == fixed_family  # columns still line up
        assert side.font().pointSizeF() == pytest.approx(pane.verdict.font().pointSizeF())
    presentation.trigger()  # off again: back to the window's type
    normal = QApplication.font().pointSizeF()
    assert not presentation.isChecked()
    qtbot.waitUntil(
        lambda: all(label.font().pointSizeF() == pytest.approx(normal) for label in (*pane.sides, pane.verdict))
    )


# ----- 5. honest sums -------------------------------------------------------------------------------
def test_row_pane_sum_is_what_minilm_sends_to_layer_1(qtbot, window, minilm_table) -> None:
    open_model(qtbot, window, "bundled")
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        type_text(qtbot, window, "monday")
    shown = blocker.args[0]
    weights = load_file(str(minilm_table.folder / "model.safetensors"))
    total = (
        weights["embeddings.word_embeddings.weight"][6928].astype(np.float64)
        + weights["embeddings.position_embeddings.weight"][1]  # [CLS] holds row 0
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    normed = (total - total.mean()) / np.sqrt(total.var() + 1e-12)
    expected = normed * weights["embeddings.LayerNorm.weight"] + weights["embeddings.LayerNorm.bias"]
    np.testing.assert_allclose(shown.combined, expected, atol=1e-5)
    view = window.panes.row_view
    assert "place 1, position-table row 2" in view.title.text()
    # Names as the pane gives them (a narrow pane prints them short: "pos 1", "layer 1").
    assert [name for name, _ in view.row_lines()] == ["token row", "position row 2", "LayerNorm, enters layer 1"]
    assert view.numbers.text().count("more]") == 3
    assert "LayerNorm(token + position + type 0); [CLS] first" in view.note.text()
    assert "[CLS] comes first" in view.note.toolTip()


def test_row_pane_on_gpt2_and_on_a_rotary_model(qtbot, window, gpt2_folder, gpt2_table, tmp_path) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        type_text(qtbot, window, " Paris")
    np.testing.assert_array_equal(blocker.args[0].combined, gpt2_table.row(6342) + gpt2_table.position_row(0))
    assert "place 1, position-table row 1" in window.panes.row_view.title.text()
    assert [name for name, _ in window.panes.row_view.row_lines()][-1] == "sum, enters layer 1"

    from tests.faults.helpers import build_rotary_folder

    open_model(qtbot, window, str(build_rotary_folder(tmp_path / "rotary")))
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS):
        type_text(qtbot, window, "hello")
    numbers = window.panes.row_view.numbers
    assert numbers.textFormat() == Qt.TextFormat.RichText  # "&nbsp;" is markup, never printed
    assert [name for name, _ in window.panes.row_view.row_lines()] == ["token row"]
    assert ". No position table: " in window.panes.row_view.note.text()  # a sentence of its own


# ----- 6. which model am I looking at ---------------------------------------------------------------
def test_notice_for_a_model_that_is_not_gpt2(qtbot, window, gpt2_folder) -> None:
    open_model(qtbot, window, "bundled")
    notice = window.model_bar.chapter_notice
    assert window.model_bar.notice_action.isVisible()
    window.resize(1600, 900)  # wide enough for the model bar in full
    qtbot.waitUntil(lambda: notice.label.text() == "Not GPT-2: the chapter's numbers differ.")
    window.resize(1024, 640)  # a laptop: the note says less, every exercise button stays on the bar
    qtbot.waitUntil(lambda: notice.label.text() == "Not GPT-2.")
    assert "(30,522 x 384)" in notice.toolTip() and notice.download.text() == "Download GPT-2"
    open_model(qtbot, window, str(gpt2_folder))
    assert not window.model_bar.notice_action.isVisible()


@pytest.mark.parametrize("spec", ["bundled"])
def test_download_button_says_why_it_cannot_and_keeps_the_model_box(qtbot, window, spec: str) -> None:
    from embedexplorer.jobs.table_jobs import LOAD

    open_model(qtbot, window, spec)
    with qtbot.waitSignal(answers(window, LOAD).failed, timeout=ANSWER_TIMEOUT_MS):
        qtbot.mouseClick(window.model_bar.chapter_notice.download, Qt.MouseButton.LeftButton)
    # Tests run with HF_HUB_OFFLINE: the download is refused in words, and the model in use stays named.
    assert "HF_HUB_OFFLINE" in window.message_bar.text()
    assert window.model_bar.box.currentText() == spec
    assert "Still using all-MiniLM-L6-v2" in window.facts_label.text()
