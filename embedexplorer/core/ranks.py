"""Where one row stands among all rows: its rank by cosine to a query, counted as top_k orders them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .neighbours import Screen, exact_scores, float32_error_bound


@dataclass(frozen=True)
class Rank:
    """A row's place in the list of all rows sorted by cosine to a query.

    Attributes
    ----------
    rank:
        1 for the row nearest the query; the same order as ``neighbours.top_k``
        (cosine first, ties by the lower id), so rank r is the r-th neighbour.
    of:
        How many rows were ranked (the table less the rows left out).
    cosine:
        The row's cosine to the query.
    """

    rank: int
    of: int
    cosine: float


def rank_of(
    unit: np.ndarray,
    query: np.ndarray,
    row: int,
    exclude: Iterable[int] = (),
    screen: Screen | None = None,
) -> Rank:
    """The rank of ``row`` among all rows of ``unit`` by cosine to ``query``.

    One rounded pass over the table (the screen or float32) finds the rows that
    are surely above ``row``; the few whose rounded score is too close to call
    are scored exactly, as ``top_k`` does, so a row ranked r here is the r-th
    of a neighbour list long enough to hold it. ``row`` must not be excluded.
    """
    excluded = {int(i) for i in exclude}
    if row in excluded:
        raise ValueError(f"row {row} is left out of the ranking, so it has no rank")
    query = np.asarray(query, dtype=np.float32)
    length = float(np.linalg.norm(query.astype(np.float64)))
    of = unit.shape[0] - len({i for i in excluded if 0 <= i < unit.shape[0]})
    if length == 0:  # every cosine is 0: top_k lists rows in id order
        before = row - sum(1 for i in excluded if i < row)
        return Rank(before + 1, of, 0.0)
    target = float(exact_scores(unit, np.array([row]), query)[0])
    if screen is not None:
        scores, margin = screen.scores(query), screen.error_bound(length)
    else:
        scores, margin = unit @ query, float32_error_bound(unit.shape[1], length)
    for i in excluded:
        scores[i] = -np.inf
    # A row whose rounded score is more than two margins above the target's exact score
    # is above it whatever the rounding; rows within that window are scored exactly.
    window = 2.0 * margin
    surely_above = int(np.count_nonzero(scores > target + window))
    close = np.flatnonzero(np.abs(scores - target) <= window)
    close = close[close != row]
    if close.size:
        exact = exact_scores(unit, close, query)
        surely_above += int(np.count_nonzero((exact > target) | ((exact == target) & (close < row))))
    return Rank(surely_above + 1, of, target / length)
