"""Where one row stands among all rows: its rank by cosine to a query, counted as top_k orders them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..search.neighbours import Screen, exact_scores, float32_error_bound
from ..search.stored_rows import StoredRows
from .embedding_table import EmbeddingTable


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
    """The rank of ``row`` among all rows of float32 unit rows ``unit`` by cosine to ``query`` (as ``top_k``)."""
    if screen is not None:
        exact = partial(exact_scores, unit)
        return rank_by(unit.shape[0], query, row, exclude, screen.scores, screen.error_bound, exact)
    first_pass = unit.__matmul__
    bound = partial(float32_error_bound, unit.shape[1])
    return rank_by(unit.shape[0], query, row, exclude, first_pass, bound, partial(exact_scores, unit))


def table_rank(table: EmbeddingTable, query: np.ndarray, row: int, exclude: Iterable[int] = ()) -> Rank:
    """The rank of ``row`` among the table's rows by cosine to ``query``, read as the table's own search reads them."""
    first_pass, error_bound, exact = table.search_passes()
    return rank_by(table.rows.shape[0], query, row, exclude, first_pass, error_bound, exact)


def unit_row(table: EmbeddingTable, token_id: int) -> np.ndarray:
    """One token's row scaled to length 1, as the table's search takes it (float64 from the stored numbers)."""
    if isinstance(table.rows, StoredRows):
        return table.stored_screen.unit_rows(table.rows, token_id)
    return table.raw_rows.unit_row(token_id)


def rank_by(
    count: int,
    query: np.ndarray,
    row: int,
    exclude: Iterable[int],
    first_pass: Callable[[np.ndarray], np.ndarray],
    error_bound: Callable[[float], float],
    exact: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> Rank:
    """The rank of ``row`` among ``count`` rows, from the same passes as ``neighbours.search``.

    One rounded pass over the table finds the rows surely above ``row``; the few
    whose rounded score is too close to call are scored exactly, ties going to the
    lower id as in ``search``, so a row ranked r here is the r-th of a neighbour
    list long enough to hold it. ``row`` must not be excluded.
    """
    excluded = {int(i) for i in exclude}
    if row in excluded:
        raise ValueError(f"row {row} is left out of the ranking, so it has no rank")
    query64 = np.asarray(query, dtype=np.float64)
    length = float(np.linalg.norm(query64))
    of = count - len({i for i in excluded if 0 <= i < count})
    if length == 0:  # every cosine is 0: search lists rows in id order
        before = row - sum(1 for i in excluded if i < row)
        return Rank(before + 1, of, 0.0)
    target = float(exact(np.array([row]), query64)[0])
    scores = first_pass(np.asarray(query, dtype=np.float32))
    for i in excluded:
        scores[i] = -np.inf
    # A row whose rounded score is more than two margins above the target's exact score
    # is above it whatever the rounding; rows within that window are scored exactly.
    window = 2.0 * error_bound(length)
    above = int(np.count_nonzero(scores > target + window))
    close = np.flatnonzero(np.abs(scores - target) <= window)
    close = close[close != row]
    if close.size:
        values = exact(close, query64)
        above += int(np.count_nonzero((values > target) | ((values == target) & (close < row))))
    return Rank(above + 1, of, target / length)
