"""A direction from examples: word pairs (he -> she) or two word groups, as one unit vector.

The chapter says meanings live "spread across many numbers at once, as directions". A
direction is the mean of unit(B) - unit(A) over pairs, or the mean of one group's unit
rows minus the other's; both are the difference of the two sides' mean unit rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.errors import QueryError
from ..tables.embedding_table import EmbeddingTable, Query
from ..tables.ranks import unit_row
from ..tables.spelling import word_or_first_token
from .spec import ARROW, DirectionSpec
from .spec import DEFAULT_PAIRS as DEFAULT_PAIRS  # the parsing lives in spec.py; named here too
from .spec import parse_pairs as parse_pairs
from .spec import parse_words as parse_words

# Most words a side may have: a direction is made from examples a person types.
MAX_SIDE_WORDS = 1_000


@dataclass(frozen=True)
class Direction:
    """A unit vector and the tokens that made it.

    ``side_a`` and ``side_b`` are the tokens that answer for the example words (for pairs,
    ``side_a[i]`` and ``side_b[i]`` are pair i); ``difference`` is mean unit(B) - mean
    unit(A) before it was scaled to length 1.
    """

    spec: DirectionSpec
    side_a: tuple[Query, ...]
    side_b: tuple[Query, ...]
    difference: np.ndarray
    vector: np.ndarray

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def notes(self) -> tuple[str, ...]:
        """What the learner should know about their words (a word of several tokens: which piece answers)."""
        seen: dict[str, None] = {}
        for query in self.side_a + self.side_b:
            if query.note:
                seen.setdefault(query.note)
        return tuple(seen)

    @property
    def ids_a(self) -> np.ndarray:
        return np.array([q.id for q in self.side_a], dtype=np.int64)

    @property
    def ids_b(self) -> np.ndarray:
        return np.array([q.id for q in self.side_b], dtype=np.int64)


def side_token(table: EmbeddingTable, word: str) -> Query:
    """The token that answers for one example word, in the model's own spelling.

    As the other boxes do: on a byte-level vocabulary (GPT-2) "he" means " he", the word
    inside a sentence; a token's readable form ("_he", "##ing") names that token; a word of
    several tokens is answered by its first piece, and the note says so. A word the
    vocabulary does not know (it became [UNK]) is refused in one sentence.
    """
    if not isinstance(word, str) or not word.strip():
        raise QueryError("An example word is empty: type a word on each side.")
    answer = word_or_first_token(table, word)  # the window's one rule for typed words
    unknown = table.vocabulary.unknown_id
    if unknown is not None and answer.id == unknown:
        raise QueryError(f"{word.strip()!r} is not in the vocabulary of {table.name} (it would become {answer.token}).")
    return answer


def make_direction(table: EmbeddingTable, spec: DirectionSpec) -> Direction:
    """The unit vector of ``spec`` on ``table``; a QueryError in one sentence when it points nowhere."""
    if spec.groups is not None:
        if spec.pairs:
            raise QueryError("Give pairs or two groups, not both.")
        first, second = spec.groups
        if not first or not second:
            raise QueryError("Each of the two groups needs at least one word.")
        side_a = tuple(side_token(table, w) for w in _bounded(first))
        side_b = tuple(side_token(table, w) for w in _bounded(second))
        if {q.id for q in side_a} == {q.id for q in side_b}:
            raise QueryError("The two groups are the same tokens: their difference points nowhere.")
    else:
        if not spec.pairs:
            raise QueryError("Type at least one pair of words, as he->she.")
        side_a, side_b = (), ()
        for a, b in _bounded(spec.pairs):
            qa, qb = side_token(table, a), side_token(table, b)
            if qa.id == qb.id:
                same = "the same word" if a.strip() == b.strip() else f"the same token ({qa.token})"
                raise QueryError(f"{a.strip()} {ARROW} {b.strip()} is a pair of {same}: its difference is zero.")
            side_a, side_b = side_a + (qa,), side_b + (qb,)
    nowhere = table.pointing_nowhere
    for query in side_a + side_b:  # its unit row would be zero: the direction would be the other side's rows
        nowhere.check_example(query.id, query.token, table.rows, "cannot be an example of a direction")
    units_a = np.array([unit_row(table, q.id) for q in side_a], dtype=np.float64)
    units_b = np.array([unit_row(table, q.id) for q in side_b], dtype=np.float64)
    difference = units_b.mean(axis=0) - units_a.mean(axis=0)
    length = float(np.linalg.norm(difference))
    if not np.isfinite(length) or length < 1e-9:
        raise QueryError(f"The examples {spec.label} cancel out: their difference points nowhere.")
    return Direction(spec, side_a, side_b, difference, difference / length)


def _bounded(items: tuple) -> tuple:  # type: ignore[type-arg]
    if len(items) > MAX_SIDE_WORDS:
        raise QueryError(f"A direction is made from at most {MAX_SIDE_WORDS:,} examples a side, not {len(items):,}.")
    return items


# A groups file is a short list of words a person wrote.
GROUPS_FILE_LIMIT = 4 << 20


def load_groups(path: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Two word groups from a JSON file: ``{"from": ["he", "man"], "to": ["she", "woman"]}``."""
    from ..common.files import read_json

    data = read_json(path, "groups file", GROUPS_FILE_LIMIT, QueryError)
    groups = None
    if isinstance(data, dict) and set(data) >= {"from", "to"}:
        groups = (data["from"], data["to"])
    elif isinstance(data, list) and len(data) == 2:
        groups = (data[0], data[1])
    if groups is None or not all(
        isinstance(g, list) and g and all(isinstance(w, str) and w.strip() for w in g) for g in groups
    ):
        raise QueryError(
            f'The groups file {path} must hold two lists of words: {{"from": ["he", "man"], "to": ["she", "woman"]}}.'
        )
    return tuple(groups[0]), tuple(groups[1])
