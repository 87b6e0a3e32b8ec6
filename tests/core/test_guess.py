"""Guess first: ranks among all rows, typed words as tokens, completion, suggestions and the score."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embedexplorer.core.common.errors import QueryError
from embedexplorer.core.exercises.guess import guess_outcome, suggestions
from embedexplorer.core.exercises.guess_score import GuessScore
from embedexplorer.core.tables.ranks import rank_of
from embedexplorer.core.tables.spelling import TokenIndex, word_token
from tests.gpt2_fixture import gpt2_bpe_files


def brute_rank(table, query_id: int, row: int, exclude: tuple[int, ...] = ()) -> tuple[int, float]:
    """Rank by float64 cosine of the raw rows, ties by id, the query and ``exclude`` left out."""
    unit = _unit64(table)
    scores = unit @ unit[query_id]
    keep = np.ones(len(scores), dtype=bool)
    keep[[query_id, *exclude]] = False
    ids = np.flatnonzero(keep)
    order = ids[np.lexsort((ids, -scores[ids]))]
    return int(np.flatnonzero(order == row)[0]) + 1, float(scores[row])


_UNIT64: dict[int, np.ndarray] = {}


def _unit64(table) -> np.ndarray:
    """The table's rows scaled to length 1 in float64, computed once per table (300 MB for GPT-2)."""
    if id(table) not in _UNIT64:
        rows = np.asarray(table.rows, dtype=np.float64)
        _UNIT64.clear()
        _UNIT64[id(table)] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return _UNIT64[id(table)]


def gpt2_id(token: str) -> int:
    """An id straight from GPT-2's own encoder.json (Ġ is the leading space)."""
    encoder, _ = gpt2_bpe_files()
    return json.loads(encoder.read_text(encoding="utf-8"))[token]


def test_tuesday_after_monday_on_minilm(minilm_table) -> None:
    outcome = guess_outcome(minilm_table, "monday", "tuesday")
    rank, cosine = brute_rank(minilm_table, minilm_table.query("monday").id, minilm_table.query("tuesday").id)
    assert outcome.rank.rank == rank == 1
    assert outcome.rank.of == minilm_table.rows.shape[0] - 1 == 30_521
    assert outcome.message() == f"tuesday is #1 of 30,521, cosine {cosine:.3f}"


@pytest.mark.parametrize("guess", ["week", "mondays", "king", "banana", "the"])
def test_ranks_far_down_the_list_match_brute_force(minilm_table, guess: str) -> None:
    query = minilm_table.query("monday").id
    outcome = guess_outcome(minilm_table, "monday", guess)
    rank, cosine = brute_rank(minilm_table, query, outcome.guess.id)
    assert outcome.rank.rank == rank
    assert outcome.rank.cosine == pytest.approx(cosine, abs=1e-6)
    if rank > 100:
        assert outcome.message().startswith(f"{guess} is not in the first 100: rank {rank:,} of 30,521")
    else:
        assert outcome.message().startswith(f"{guess} is #{rank} of 30,521")


def test_rank_agrees_with_the_neighbour_list(minilm_table, gpt2_table) -> None:
    """The r-th neighbour of top_k has rank r, with and without the bfloat16 screen."""
    for table, word in ((minilm_table, "paris"), (gpt2_table, " Paris")):
        query = table.query(word).id
        listed = table.neighbours(query, k=30).neighbours
        for screen in (table.screen, None):
            ranks = [
                rank_of(table.unit, table.unit[query], n.id, exclude=(query,), screen=screen).rank for n in listed
            ]
            assert ranks == list(range(1, 31))


def test_rank_on_gpt2_counts_the_other_50256_rows(gpt2_table) -> None:
    outcome = guess_outcome(gpt2_table, " Monday", "Tuesday")
    assert outcome.guess.id == gpt2_id("ĠTuesday") == 3431
    rank, _ = brute_rank(gpt2_table, gpt2_id("ĠMonday"), 3431)
    assert (outcome.rank.rank, outcome.rank.of) == (rank, 50_256)


def test_gpt2_leading_space_is_handled_for_the_learner(gpt2_table) -> None:
    assert word_token(gpt2_table, "Tuesday").id == gpt2_id("ĠTuesday")
    assert word_token(gpt2_table, "_Tuesday").id == gpt2_id("ĠTuesday")  # a completion, as shown
    assert word_token(gpt2_table, " Tuesday").id == gpt2_id("ĠTuesday")
    assert word_token(gpt2_table, "king").id == gpt2_id("Ġking")


def test_a_guess_of_several_tokens_offers_completions(gpt2_table) -> None:
    with pytest.raises(QueryError, match="one token is needed; try .*_Tuesday"):
        word_token(gpt2_table, "tuesday")  # " tuesday" is two tokens in GPT-2
    with pytest.raises(QueryError, match="the word itself"):
        guess_outcome(gpt2_table, " Monday", "Monday")
    with pytest.raises(QueryError, match="Type a word"):
        guess_outcome(gpt2_table, " Monday", "   ")


def test_completion_ignores_case_and_the_space_mark(gpt2_table, minilm_table) -> None:
    offered = TokenIndex.for_table(gpt2_table).complete("tues")
    tokens = [t for _, t in offered]
    assert {"_Tuesday", "Tuesday"} <= set(tokens)
    assert tokens.index("_Tuesday") < tokens.index("Tuesday")  # the word inside a sentence first
    assert all(t.lstrip("_").casefold().startswith("tues") for t in tokens)
    whole = [t for _, t in TokenIndex.for_table(minilm_table).complete("mon")]
    assert whole[0] == "mon" and "monday" in whole
    assert whole.index("monday") < whole.index("##monday") if "##monday" in whole else True
    assert TokenIndex.for_table(minilm_table).complete("   ") == []


def test_twenty_suggestions_in_the_models_own_spelling(gpt2_table, minilm_table) -> None:
    gpt2 = suggestions(gpt2_table)
    assert len(gpt2) == 20 and len({s.id for s in gpt2}) == 20
    assert [(s.token, s.id) for s in gpt2[:2]] == [("_Paris", 6342), ("_France", 4881)]  # the chapter's ids
    assert [s.token for s in gpt2[:9]] == [
        "_Paris", "_France", "_cat", "_Monday", "_happy", "_doctor", "_king", "_Tokyo", "_seven",
    ]  # fmt: skip
    for s in gpt2:
        assert [t.id for t in gpt2_table.encode(s.text)] == [s.id]
    minilm = suggestions(minilm_table)
    assert len(minilm) == 20
    assert [s.token for s in minilm[:6]] == ["paris", "france", "cat", "monday", "happy", "doctor"]
    for s in minilm:
        assert [t.id for t in minilm_table.encode(s.text)] == [s.id]


def test_score_counts_exact_and_close_guesses(minilm_table) -> None:
    score = GuessScore(k=8)
    assert score.summary() == "No guesses yet."
    query = minilm_table.query("monday").id
    ranks = []
    for guess in ("tuesday", "week", "banana"):
        score = score.add(guess_outcome(minilm_table, "monday", guess))
        ranks.append(brute_rank(minilm_table, query, minilm_table.query(guess).id)[0])
    exact, close = sum(r == 1 for r in ranks), sum(r <= 8 for r in ranks)
    assert (score.guesses, score.exact, score.close) == (3, exact, close)
    assert score.summary() == f"3 guesses: {exact} #1, {close} in the top 8"
    assert 0 < exact < close < 3  # the three guesses do fall in three different bands


def test_ranks_on_a_half_precision_table_follow_its_own_search(tmp_path) -> None:
    """A bfloat16 table is searched as stored: guesses and analogies rank by the same passes."""
    import torch

    from embedexplorer import open_table
    from embedexplorer.core.exercises.analogies import solve_analogy
    from embedexplorer.core.search.stored_rows import StoredRows
    from tests.core.test_half_precision import half_folder

    folder, stored = half_folder(tmp_path / "model", torch.bfloat16)
    table = open_table(str(folder))
    try:
        assert isinstance(table.rows, StoredRows)
        query = table.query("monday").id
        listed = table.neighbours(query, k=12).neighbours
        for place, neighbour in enumerate(listed, start=1):
            assert guess_outcome(table, "monday", neighbour.token).rank.rank == place
        unit = stored / np.maximum(np.linalg.norm(stored, axis=1, keepdims=True), 1e-300)
        scores = unit @ unit[query]
        scores[query] = -np.inf
        scores[~np.isfinite(scores)] = 0.0  # rows that point nowhere score 0, as the search says
        ids = np.arange(len(scores))
        order = ids[np.lexsort((ids, -scores))]
        far = int(order[5000])
        assert guess_outcome(table, "monday", table.tokens[far]).rank.rank == 5001
        answer = solve_analogy(table, "king", "man", "woman", k=5, expect="queen")
        assert answer.expected is not None and answer.expected.rank is not None
        assert [n.id for n in answer.neighbours] == [
            n.id for n in table.analogy("king", "man", "woman", k=5).neighbours
        ]
    finally:
        table.close()
