"""The chapter's exercises as request kinds: guess first, completion, family distances, analogies, two texts.

Each job unpacks its request and calls one engine function; the answers are the
engine's own result types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.common.constants import COMPLETIONS
from ..core.common.errors import QueryError
from .base import JobContext, Kind, Lane
from .table_jobs import layer_recipe

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows
    from ..core.exercises.analogies import AnalogyAnswer
    from ..core.exercises.family_distances import FamilyDistances
    from ..core.exercises.guess import GuessOutcome, Suggestion
    from ..core.exercises.two_texts import TwoTokens
    from ..core.maps.family_map import FamilyMap
    from ..core.maps.word_maps import WordMap
    from ..core.text.texts import Token


# ----- guess first ------------------------------------------------------------------------------
@dataclass(frozen=True)
class GuessRequest:
    query: str | int  # the token whose neighbours are hidden
    guess: str  # what the learner typed, or a completion such as "_Tuesday"


def judge_guess(ctx: JobContext, request: GuessRequest) -> GuessOutcome:
    from ..core.exercises.guess import guess_outcome

    return guess_outcome(ctx.session.table, request.query, request.guess)


GUESS = Kind("guess", Lane.QUICK, judge_guess)


@dataclass(frozen=True)
class CompletionRequest:
    prefix: str
    limit: int = COMPLETIONS


@dataclass(frozen=True)
class Completions:
    prefix: str
    tokens: tuple[tuple[int, str], ...]  # (id, readable token)


def complete_word(ctx: JobContext, request: CompletionRequest) -> Completions:
    from ..core.tables.spelling import TokenIndex

    table = ctx.session.table
    found = TokenIndex.for_table(table).complete(request.prefix, request.limit)
    return Completions(request.prefix, tuple(found))


COMPLETE = Kind("complete", Lane.QUICK, complete_word)


@dataclass(frozen=True)
class SuggestionsRequest:
    count: int = 20


@dataclass(frozen=True)
class SuggestionsAnswer:
    model: str
    words: tuple[Suggestion, ...]


def suggest_words(ctx: JobContext, request: SuggestionsRequest) -> SuggestionsAnswer:
    from ..core.exercises.guess import suggestions

    table = ctx.session.table
    return SuggestionsAnswer(table.name, tuple(suggestions(table, request.count)))


SUGGEST = Kind("suggest", Lane.QUICK, suggest_words)


# ----- which family sits furthest away ----------------------------------------------------------
@dataclass(frozen=True)
class DistancesRequest:
    """The families ranked by distance on ``family_map`` (the map the window shows), hidden ones left out."""

    hidden: frozenset[str] = frozenset()
    family_map: FamilyMap | WordMap | None = field(default=None, compare=False)


def rank_family_distances(ctx: JobContext, request: DistancesRequest) -> FamilyDistances:
    from ..core.exercises.family_distances import family_distances
    from ..core.maps.family_map import FamilyMap

    table = ctx.session.table
    on_map = request.family_map
    if not isinstance(on_map, FamilyMap):
        raise QueryError("The family map is not drawn yet; wait for it, then ask again.")
    return family_distances(table, on_map, request.hidden)


FAMILY_DISTANCES = Kind("family_distances", Lane.QUICK, rank_family_distances)


# ----- analogies --------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnalogyRequest:
    a: str
    b: str
    c: str
    k: int = 8
    include_inputs: bool = False
    expect: str = ""


def analogy(ctx: JobContext, request: AnalogyRequest) -> AnalogyAnswer:
    from ..core.exercises.analogies import solve_analogy

    return solve_analogy(
        ctx.session.table,
        request.a,
        request.b,
        request.c,
        request.k,
        include_inputs=request.include_inputs,
        expect=request.expect or None,
        words=True,
    )


ANALOGY = Kind("analogy", Lane.QUICK, analogy)


# ----- two texts side by side -------------------------------------------------------------------
# Tokens each text box shows at most: the exercise is about a word in a short sentence.
MAX_PAIR_TOKENS = 64


@dataclass(frozen=True)
class PairTokensRequest:
    first_text: str
    second_text: str


@dataclass(frozen=True)
class PairTokens:
    """The tokens of both texts, and the places of a word they share (None when they share none)."""

    first_text: str
    second_text: str
    first: tuple[Token, ...]
    second: tuple[Token, ...]
    first_place: int | None
    second_place: int | None


def split_pair(ctx: JobContext, request: PairTokensRequest) -> PairTokens:
    from ..core.exercises.two_texts import word_key

    table = ctx.session.table
    first = tuple(table.encode(request.first_text)[:MAX_PAIR_TOKENS])
    second = tuple(table.encode(request.second_text)[:MAX_PAIR_TOKENS])
    place_a = place_b = None
    keys = [word_key(t.text) for t in second]
    for place, token in enumerate(first):
        key = word_key(token.text)
        if key and key in keys:
            place_a, place_b = place, keys.index(key)
            break
    return PairTokens(request.first_text, request.second_text, first, second, place_a, place_b)


PAIR_TOKENS = Kind("pair_tokens", Lane.QUICK, split_pair)


@dataclass(frozen=True)
class TwoTextsRequest:
    first_text: str
    first_place: int  # 0-based
    second_text: str
    second_place: int


def compare_texts(ctx: JobContext, request: TwoTextsRequest) -> TwoTokens:
    from ..core.exercises.two_texts import compare

    table = ctx.session.table
    return compare(
        table,
        layer_recipe(ctx.session, table),
        request.first_text,
        request.first_place,
        request.second_text,
        request.second_place,
    )


TWO_TEXTS = Kind("two_texts", Lane.QUICK, compare_texts)
