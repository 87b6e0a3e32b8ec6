"""The exercises' request kinds run as the worker runs them, with a JobContext of their own (no Qt)."""

from __future__ import annotations

import pytest

from embedexplorer.core.common.errors import QueryError
from embedexplorer.jobs.base import JobContext, Session
from embedexplorer.jobs.exercise_jobs import (
    ANALOGY,
    COMPLETE,
    FAMILY_DISTANCES,
    GUESS,
    PAIR_TOKENS,
    SUGGEST,
    TWO_TEXTS,
    AnalogyRequest,
    CompletionRequest,
    DistancesRequest,
    GuessRequest,
    PairTokensRequest,
    SuggestionsRequest,
    TwoTextsRequest,
)
from embedexplorer.jobs.table_jobs import MAP, ROW, MapRequest, RowRequest


@pytest.fixture
def ctx(minilm_table) -> JobContext:  # type: ignore[no-untyped-def]
    session = Session()
    session.replace_table(minilm_table)  # the shared fixture: this session never replaces it, so never closes it
    return JobContext(session)


def test_guess_completion_and_suggestions(ctx, minilm_table) -> None:
    outcome = GUESS.run(ctx, GuessRequest(minilm_table.query("monday").id, "tuesday"))
    assert (outcome.rank.rank, outcome.rank.of) == (1, 30_521)
    completions = COMPLETE.run(ctx, CompletionRequest("tues"))
    assert completions.prefix == "tues" and (outcome.guess.id, "tuesday") in completions.tokens
    words = SUGGEST.run(ctx, SuggestionsRequest())
    assert len(words.words) == 20 and words.model == minilm_table.name


def test_family_distances_need_the_map_first(ctx) -> None:
    with pytest.raises(QueryError, match="not drawn yet"):
        FAMILY_DISTANCES.run(ctx, DistancesRequest())
    drawn = MAP.run(ctx, MapRequest(None))
    ranking = FAMILY_DISTANCES.run(ctx, DistancesRequest(frozenset({"days"}), drawn))
    assert len(ranking.ranking) == 7 and "days" not in {e.family for e in ranking.ranking}


def test_analogy_two_texts_and_the_honest_row(ctx) -> None:
    answer = ANALOGY.run(ctx, AnalogyRequest("king", "man", "woman", 5, True, "queen"))
    assert answer.neighbours[0].token == "king" and answer.expected.rank.rank == 2
    pair = PAIR_TOKENS.run(ctx, PairTokensRequest("the river bank", "my bank account"))
    assert (pair.first_place, pair.second_place) == (2, 1)
    compared = TWO_TEXTS.run(ctx, TwoTextsRequest("the river bank", 2, "my bank account", 1))
    assert compared.same_id and compared.row_cosine == 1.0
    row = ROW.run(ctx, RowRequest(6928, 0))
    assert row.position_index == 1 and row.normalised and row.place_text() == "place 1, position-table row 2"
    assert "LayerNorm" in row.recipe and row.recipe_short.startswith("Layer 1 gets LayerNorm(")
