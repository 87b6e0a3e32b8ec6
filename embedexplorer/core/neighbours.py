"""Cosine similarity and nearest neighbours as plain functions on unit rows.

Once every row has length 1, the cosine of two rows is their dot product, so
the neighbours of a token are one matrix-vector product over the whole table
(the chapter's "Y = W . X, once more") followed by a partial sort.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

# Rows per block of unit_rows: a few MB, so each block is read from memory once and
# scaled while it is still in cache.
_BLOCK_ROWS = 4096


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """Every row scaled to length 1 (all-zero rows stay zero), as a new float32 array.

    A read-only memory-mapped ``rows`` is handed back to the page cache block by
    block, so the process never holds the raw table and the unit table at once
    (rows read later simply map in again).
    """
    unit = np.empty(rows.shape, dtype=np.float32)
    release = _page_releaser(rows)
    for start in range(0, rows.shape[0], _BLOCK_ROWS):
        block = rows[start : start + _BLOCK_ROWS]
        # einsum gives the squared norms without a block-sized temporary.
        norms = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64)).astype(np.float32)
        norms[norms == 0] = 1.0
        np.divide(block, norms[:, None], out=unit[start : start + _BLOCK_ROWS])
        release(block)
    return unit


def _page_releaser(rows: np.ndarray):  # type: ignore[no-untyped-def]
    """A function that drops a block's pages from this process when ``rows`` is a read-only file map."""
    import mmap

    mapping = getattr(rows, "_mmap", None)
    if (
        not isinstance(rows, np.memmap)
        or getattr(rows, "mode", None) != "r"
        or not isinstance(mapping, mmap.mmap)
        or not hasattr(mmap, "MADV_DONTNEED")
        or not rows.flags.c_contiguous
    ):
        return lambda block: None
    # np.memmap maps from the allocation boundary below its offset.
    base = rows.ctypes.data - rows.offset % mmap.ALLOCATIONGRANULARITY
    size, page = len(mapping), mmap.PAGESIZE

    def release(block: np.ndarray) -> None:
        start = (block.ctypes.data - base) // page * page
        end = min(size, block.ctypes.data - base + block.nbytes)
        try:
            # The file is only read, never written: dropped pages come back from the page cache.
            mapping.madvise(mmap.MADV_DONTNEED, start, end - start)
        except (OSError, ValueError):
            pass

    return release


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two vectors; 0.0 when either has no length."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
    return 0.0 if denominator == 0 else float(a @ b) / denominator


def top_k(
    unit: np.ndarray, query: np.ndarray, k: int, exclude: Iterable[int] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """The k rows of ``unit`` with the highest cosine to ``query``, best first.

    ``query`` need not have length 1; the order and cosines are those of its
    direction.  Rows in ``exclude`` (usually the query's own ids) are skipped.
    Returns ``(ids, cosines)``.
    """
    query = np.asarray(query, dtype=np.float32)
    # Scaling the query does not change the order, so only the k chosen scores are divided.
    length = float(np.sqrt(query @ query))
    scores = unit @ query
    excluded = sorted({int(i) for i in exclude})
    for row in excluded:  # one or three ids: plain item writes beat an index array
        scores[row] = -np.inf
    k = max(0, min(int(k), scores.shape[0] - len(excluded)))
    if k == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    candidates = _candidates(scores, k)
    # Sort by cosine, ties by id, so results are the same on every run.
    best = candidates[np.lexsort((candidates, -scores[candidates]))[:k]]
    cosines = scores[best] / np.float32(length) if length > 0 else scores[best]
    return best.astype(np.int64, copy=False), cosines


# Every SAMPLE_STRIDE-th score is a sample whose k-th best bounds the table's k-th best from below.
SAMPLE_STRIDE = 12
_MAX_CANDIDATES = 4096


def _candidates(scores: np.ndarray, k: int) -> np.ndarray:
    """Ids that surely hold the k highest scores (and every id tied with the k-th).

    The k-th best score of any subset is no higher than the k-th best of all,
    so every row of the top k scores at least that much.  Partitioning a
    1-in-12 sample and one comparison is about three times cheaper than an
    argpartition over the whole table, and usually leaves ~20 k candidates.
    """
    n = scores.shape[0]
    if k >= n:
        return np.arange(n)
    sample = scores[::SAMPLE_STRIDE]
    if k * 8 <= sample.shape[0]:
        bound = np.partition(sample, sample.shape[0] - k)[sample.shape[0] - k]
        if np.isfinite(bound):
            candidates = np.flatnonzero(scores >= bound)
            if candidates.size <= max(_MAX_CANDIDATES, 64 * k):
                return candidates
    # Few rows, a large k, or many equal scores (a zero query): select over everything.
    return np.argpartition(scores, -k)[-k:]


def analogy_vector(unit: np.ndarray, a: int, b: int, c: int) -> np.ndarray:
    """The 3CosAdd query for "a - b + c": unit rows added and subtracted (as gensim does)."""
    return unit[a] - unit[b] + unit[c]


def baseline_cosine(unit: np.ndarray, rows_with_tokens: int, pairs: int = 10_000, seed: int = 0) -> float:
    """Mean cosine of random pairs of distinct tokens: what "nothing in common" looks like here."""
    n = min(rows_with_tokens, unit.shape[0])
    if n < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n, size=pairs)
    second = rng.integers(0, n - 1, size=pairs)
    second = second + (second >= first)  # never pair a row with itself
    # A thousand pairs at a time: gathering all the rows at once would copy 60 MB for GPT-2.
    cosines = np.concatenate(
        [
            np.einsum("ij,ij->i", unit[first[i : i + 1000]], unit[second[i : i + 1000]])
            for i in range(0, pairs, 1000)
        ]
    )
    return float(cosines.mean())
