"""Analogies: A - B + C with the inputs left out or included, an expected word's rank, the CLI's answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embedexplorer.core.exercises.analogies import NO_CLAIM, solve_analogy
from tests.core.test_cli import run_json
from tests.core.test_sources import run_cli


def brute_analogy(table, a: int, b: int, c: int, exclude: tuple[int, ...]) -> list[tuple[int, float]]:
    """Every row ranked by float64 cosine to unit[a] - unit[b] + unit[c], ties by id."""
    rows = np.asarray(table.rows, dtype=np.float64)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    vector = unit[a] - unit[b] + unit[c]
    scores = unit @ vector / np.linalg.norm(vector)
    ids = np.setdiff1d(np.arange(len(scores)), exclude)
    order = ids[np.lexsort((ids, -scores[ids]))]
    return [(int(i), float(scores[i])) for i in order]


def test_king_man_woman_on_minilm_both_ways(minilm_table) -> None:
    ids = tuple(minilm_table.query(w).id for w in ("king", "man", "woman"))
    left_out = solve_analogy(minilm_table, "king", "man", "woman", k=10, expect="queen")
    expected = brute_analogy(minilm_table, *ids, exclude=ids)
    assert [n.id for n in left_out.neighbours] == [i for i, _ in expected[:10]]
    assert [n.cosine for n in left_out.neighbours] == pytest.approx([c for _, c in expected[:10]], abs=1e-5)
    queen = minilm_table.query("queen").id
    place = [i for i, _ in expected].index(queen) + 1
    assert left_out.expected is not None and left_out.expected.rank is not None
    assert (left_out.expected.rank.rank, left_out.expected.rank.of) == (place, 30_522 - 3)
    assert "left out" in left_out.inputs_line()

    included = solve_analogy(minilm_table, "king", "man", "woman", k=10, include_inputs=True, expect="queen")
    with_inputs = brute_analogy(minilm_table, *ids, exclude=())
    assert [n.id for n in included.neighbours] == [i for i, _ in with_inputs[:10]]
    assert included.neighbours[0].token == "king"  # the reason published results differ
    assert included.expected.rank.rank == [i for i, _ in with_inputs].index(queen) + 1
    assert "included" in included.inputs_line()


def test_an_expected_input_word_is_named_not_ranked(minilm_table) -> None:
    answer = solve_analogy(minilm_table, "king", "man", "woman", expect="king")
    assert answer.expected is not None and answer.expected.rank is None
    assert "one of the three input words" in answer.expected_line()
    assert solve_analogy(minilm_table, "king", "man", "woman", expect="   ").expected is None


def test_window_words_on_gpt2_take_the_leading_space(gpt2_table) -> None:
    answer = solve_analogy(gpt2_table, "king", "man", "woman", k=5, words=True, expect="queen")
    assert [q.token for q in (answer.a, answer.b, answer.c)] == ["_king", "_man", "_woman"]
    assert answer.expected.query.token == "_queen"
    literal = solve_analogy(gpt2_table, " king", " man", " woman", k=5, expect=" queen")
    assert answer.neighbours == literal.neighbours and answer.expected == literal.expected
    assert answer.command(5) == "embedexplorer analogy ' king' ' man' ' woman' -k 5 --expect ' queen'"


def test_cli_gives_the_same_answers(gpt2_folder, gpt2_table) -> None:
    out = run_json(
        "analogy", " king", " man", " woman", "-k", "6", "--include-inputs", "--expect", " queen",
        "--model", str(gpt2_folder),
    )  # fmt: skip
    direct = solve_analogy(gpt2_table, " king", " man", " woman", k=6, include_inputs=True, expect=" queen")
    assert [n["id"] for n in out["neighbours"]] == [n.id for n in direct.neighbours]
    assert out["include_inputs"] is True and out["claim"] == NO_CLAIM
    assert out["expected"]["rank"] == direct.expected.rank.rank
    assert out["expected"]["of"] == 50_257
    assert out["query"] == {"id": direct.a.id, "token": "_king - _man + _woman"}
    text = run_cli("analogy", "king", "man", "woman", "--expect", "queen", "--model", "bundled")
    assert text.returncode == 0
    assert "left out of the answers" in text.stdout and "expected: queen is #" in text.stdout
    assert NO_CLAIM in text.stdout
    json.dumps(out)  # plain JSON all the way down
