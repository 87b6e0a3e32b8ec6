"""Which family sits furthest away: families ranked by their mean cosine to all the other families.

The chapter asks the question of the flat map, but answers it "measured on the
768 numbers, not on the flat map". So every cosine here is between whole rows
(a word of several tokens is the mean of its pieces' rows, as on the map).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from ..common.errors import FamiliesError, QueryError
from ..maps.family_map import FamilyMap
from ..tables.embedding_table import EmbeddingTable
from ..text.texts import fixed


@dataclass(frozen=True)
class FamilyDistance:
    """One family: its mean cosine to the words of every other family and within itself.

    ``within`` is NaN for a family of one word (it has no pairs).
    """

    family: str
    words: int
    to_others: float
    within: float


@dataclass(frozen=True)
class FamilyDistances:
    """Families from the furthest away (lowest mean cosine to the others) to the nearest."""

    ranking: tuple[FamilyDistance, ...]

    @property
    def furthest(self) -> FamilyDistance:
        return self.ranking[0]

    def place_of(self, family: str) -> int:
        """1 for the family furthest away from the others."""
        for place, entry in enumerate(self.ranking, start=1):
            if entry.family == family:
                return place
        raise QueryError(f"There is no family {family!r} on this map.")

    def judge(self, guess: str) -> str:
        """One sentence on a guess of the family furthest away."""
        place = self.place_of(guess)
        first = self.furthest
        if place == 1:
            return (
                f"Right: {guess} sits furthest away, mean cosine {fixed(first.to_others, 3)} "
                "to the other families."
            )
        mine = self.ranking[place - 1]
        return (
            f"{guess} is #{place} of {len(self.ranking)} (mean cosine {fixed(mine.to_others, 3)} to the others); "
            f"furthest away is {first.family} ({fixed(first.to_others, 3)})."
        )

    def lines(self) -> list[str]:
        """The ranking as a small table, one family per line."""
        width = max([len("family")] + [len(e.family) for e in self.ranking])
        head = f"{'#':>2}  {'family':<{width}}  {'to the others':>13}  {'within':>6}"
        rows = [
            f"{place:>2}  {e.family:<{width}}  {fixed(e.to_others, 3):>13}  "
            f"{'-' if np.isnan(e.within) else fixed(e.within, 3):>6}"
            for place, e in enumerate(self.ranking, start=1)
        ]
        return [head, *rows]

    def to_list(self) -> list[dict[str, object]]:
        """JSON-ready rows (a family of one word has ``within`` null)."""
        return [
            {
                "family": e.family,
                "words": e.words,
                "mean_cosine_to_others": e.to_others,
                "mean_cosine_within": None if np.isnan(e.within) else e.within,
            }
            for e in self.ranking
        ]


def rank_families(rows: np.ndarray, labels: list[str]) -> FamilyDistances:
    """Rank the families of ``rows`` (one label per row) by mean cosine to every other family's rows.

    Ties keep the families' order of first appearance.
    """
    matrix = np.asarray(rows, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != len(labels):
        raise FamiliesError("Family distances need one label for every row.")
    names = list(dict.fromkeys(labels))
    if len(names) < 2:
        raise FamiliesError("Family distances need at least two families.")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1, norms)
    cosines = unit @ unit.T
    members = np.asarray(labels)
    entries = []
    for name in names:
        inside = members == name
        count = int(inside.sum())
        block = cosines[np.ix_(inside, inside)]
        pairs = block[np.triu_indices(count, k=1)]
        entries.append(
            FamilyDistance(
                family=name,
                words=count,
                to_others=float(cosines[np.ix_(inside, ~inside)].mean()),
                within=float(pairs.mean()) if pairs.size else float("nan"),
            )
        )
    order = sorted(range(len(entries)), key=lambda i: (entries[i].to_others, i))
    return FamilyDistances(tuple(entries[i] for i in order))


def family_distances(
    table: EmbeddingTable, family_map: FamilyMap, hidden: Collection[str] = ()
) -> FamilyDistances:
    """Rank the families placed on ``family_map``, less the ``hidden`` ones, on the table's full rows."""
    points = [p for p in family_map.points if p.family not in hidden]
    if not points:
        raise FamiliesError("Every family is hidden; show at least two to compare them.")
    rows = np.vstack([np.asarray(table.rows_at(list(p.ids)), dtype=np.float64).mean(axis=0) for p in points])
    return rank_families(rows, [p.family for p in points])
