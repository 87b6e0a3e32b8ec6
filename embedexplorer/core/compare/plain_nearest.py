"""Every row's k nearest rows without the C loop: float64 products, exact, slower.

An install built without a C compiler has no ``search/_every``; ``compare`` must still answer,
and answer the same. Here every score is computed in float64 from the float32 rows (the
products of two float32 numbers are exact in float64; only the sums round, far below the
gaps a tie rule could see), so no screen and no proof of a bound are needed: the k best
are read straight off each query's row of scores, ties going to the lower id as in the
screened search. It takes several times longer than the C path (the whole product in
float64, and every score sorted out per query).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# Queries scored at once: a block of float64 scores of (this x table rows).
QUERY_BLOCK = 256
# Table rows widened to float64 at once.
COLUMN_BLOCK = 8192


def plain_nearest(
    rows: np.ndarray,
    queries: np.ndarray,
    k: int,
    inverse: np.ndarray,
    targets: np.ndarray | None = None,
    step: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(ids, cosines, target ranks) of ``rows[queries]``'s k nearest rows, the query itself left out.

    ``inverse`` is 1 / |row| in float64 (0 for a row pointing nowhere, whose cosines are 0).
    """
    count = rows.shape[0]
    ids = np.empty((queries.size, k), dtype=np.int64)
    cosines = np.empty((queries.size, k), dtype=np.float32)
    ranks = None if targets is None else np.empty(queries.size, dtype=np.int64)
    for start in range(0, queries.size, QUERY_BLOCK):
        block = queries[start : start + QUERY_BLOCK]
        unit = np.asarray(rows[block], dtype=np.float64) * inverse[block, None]
        scores = np.empty((block.size, count), dtype=np.float64)
        for column in range(0, count, COLUMN_BLOCK):
            tile = np.asarray(rows[column : column + COLUMN_BLOCK], dtype=np.float64)
            tile *= inverse[column : column + COLUMN_BLOCK, None]
            scores[:, column : column + tile.shape[0]] = unit @ tile.T
        lines = np.arange(block.size)
        if ranks is not None and targets is not None:
            wanted = scores[lines, targets[start : start + block.size]]
            scores[lines, block] = -np.inf
            ranks[start : start + block.size] = 1 + (scores > wanted[:, None]).sum(axis=1)
        else:
            scores[lines, block] = -np.inf
        for line, row_scores in enumerate(scores):
            best = _k_best(row_scores, k)
            ids[start + line] = best
            cosines[start + line] = row_scores[best]
        if step is not None:
            step(start + block.size)
    return ids, cosines, ranks


def _k_best(scores: np.ndarray, k: int) -> np.ndarray:
    """The k highest scores' columns, best first, equal scores by the lower column."""
    picked = np.argpartition(-scores, k - 1)[:k]
    bar = scores[picked].min()
    # Every column at the bar competes, not only those argpartition happened to pick.
    contenders = np.flatnonzero(scores >= bar)
    order = np.lexsort((contenders, -scores[contenders]))
    return contenders[order[:k]]
