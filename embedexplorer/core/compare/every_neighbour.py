"""The k nearest rows of many rows at once, exactly: blockwise float32 products, every number of every row.

A block of query rows is multiplied with the whole table by BLAS (the time goes there) and
the block's scores are scaled by the rows' reciprocal lengths, so no unit copy of the table
is made: the memory is the table plus one block of scores. Choosing each row's k best of
50,000 scores with numpy's ``argpartition`` took longer than the product, so each row first
gets a bar from a sample of its scores (the k-th best of every 16th column can only be at
or below the k-th best of all) and only the scores at or above it, a few hundred, are sorted.
Ties are broken by the lower id, as a stable sort of plain numpy's scores does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# Bytes of one block of scores (query rows x table rows, float32).
BLOCK_BYTES = 96 << 20
# Every SAMPLE_STRIDE-th score sets a row's bar; tables this small are sorted whole.
SAMPLE_STRIDE = 16
SMALL_TABLE = 4096
# Rows whose whole line of scores is counted at once for a rank.
RANK_ROWS = 32


@dataclass(frozen=True)
class Nearest:
    """For each query row: its k nearest rows (positions in the table given) and their cosines,
    best first, and the rank of a named target row among all rows (1 = nearest), if asked."""

    ids: np.ndarray  # (queries, k) int64
    cosines: np.ndarray  # (queries, k) float32
    target_ranks: np.ndarray | None  # (queries,) int64


def inverse_lengths(rows: np.ndarray) -> np.ndarray:
    """1 / |row| for each row in float32 (summed in float64); 0 for an empty or unreadable row."""
    lengths = np.empty(rows.shape[0], dtype=np.float64)
    step = max(1, (8 << 20) // max(1, rows.shape[1] * 8))
    for start in range(0, rows.shape[0], step):
        block = np.asarray(rows[start : start + step], dtype=np.float64)
        lengths[start : start + step] = np.sqrt(np.einsum("ij,ij->i", block, block))
    good = np.isfinite(lengths) & (lengths > 0)
    inverse = np.zeros(rows.shape[0], dtype=np.float32)
    inverse[good] = (1.0 / lengths[good]).astype(np.float32)
    return inverse


def rows_per_block(rows: int) -> int:
    return int(max(16, min(2048, BLOCK_BYTES // max(1, 4 * rows))))


def nearest_of_all(
    rows: np.ndarray,
    queries: np.ndarray,
    k: int,
    *,
    inverse: np.ndarray | None = None,
    targets: np.ndarray | None = None,
    step: Callable[[int], None] | None = None,
) -> Nearest:
    """The k nearest rows of each of ``rows[queries]`` among all ``rows``, the query itself left out.

    ``rows`` is a float32 array (a mapped table is fine: it is only read). ``targets`` names
    one row per query whose rank among all rows is wanted. ``step(done)`` is called after
    each block with the number of queries done; it may raise to stop the work.
    """
    count = int(rows.shape[0])
    if not 1 <= k < count:
        raise ValueError(f"k must be between 1 and {count - 1}, not {k}")
    inverse = inverse_lengths(rows) if inverse is None else inverse
    queries = np.asarray(queries, dtype=np.int64)
    ids = np.empty((queries.size, k), dtype=np.int64)
    cosines = np.empty((queries.size, k), dtype=np.float32)
    ranks = None if targets is None else np.empty(queries.size, dtype=np.int64)
    per_block = rows_per_block(count)
    for start in range(0, queries.size, per_block):
        block = queries[start : start + per_block]
        scores = _block_scores(rows, inverse, block)
        picked = slice(start, start + block.size)
        bar = _bars(scores, k)
        ids[picked], cosines[picked], candidates = _best_k(scores, bar, k)
        if ranks is not None and targets is not None:
            ranks[picked] = _ranks(scores, bar, candidates, targets[picked])
        # Let go of this block's scores before the next is made: two at once doubled the memory.
        del scores, bar, candidates
        if step is not None:
            step(start + block.size)
    return Nearest(ids, cosines, ranks)


def _block_scores(rows: np.ndarray, inverse: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Cosines of the block's rows with every row, the block's own row set to -inf."""
    left = np.asarray(rows[block], dtype=np.float32) * inverse[block, None]
    scores = left @ rows.T
    scores *= inverse
    if not np.isfinite(left).all():  # a row of infinities or NaNs: it is near nothing
        np.nan_to_num(scores, copy=False, nan=-np.inf)
    scores[np.arange(block.size), block] = -np.inf
    return scores


def _bars(scores: np.ndarray, k: int) -> np.ndarray:
    """For each row a score at or below its k-th best: the k-th best of a sample of its columns."""
    count = scores.shape[1]
    if count <= SMALL_TABLE or count // SAMPLE_STRIDE <= 4 * k:
        sample = scores
    else:
        sample = scores[:, ::SAMPLE_STRIDE]
    return np.partition(sample, sample.shape[1] - k, axis=1)[:, sample.shape[1] - k]


def _best_k(
    scores: np.ndarray, bar: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Each row's k best columns (ties by lower column) from the scores at or above its bar."""
    row, column = np.nonzero(scores >= bar[:, None])
    values = scores[row, column]
    order = np.lexsort((column, -values, row))
    row, column, values = row[order], column[order], values[order]
    firsts = np.searchsorted(row, np.arange(scores.shape[0]))
    take = firsts[:, None] + np.arange(k)
    return column[take], values[take], (row, values)


def _ranks(
    scores: np.ndarray, bar: np.ndarray, candidates: tuple[np.ndarray, np.ndarray], targets: np.ndarray
) -> np.ndarray:
    """1 + how many columns score above each row's target column (1: the target is its nearest)."""
    lines = np.arange(scores.shape[0])
    target_scores = scores[lines, targets]
    row, values = candidates
    above = np.bincount(row[values > target_scores[row]], minlength=scores.shape[0])
    low = np.flatnonzero(target_scores < bar)  # the target is below the bar: count the whole row
    # A few rows at a time: a copy of every such row at once was a large share of the block.
    for start in range(0, low.size, RANK_ROWS):
        some = low[start : start + RANK_ROWS]
        above[some] = (scores[some] > target_scores[some, None]).sum(axis=1)
    return above + 1
