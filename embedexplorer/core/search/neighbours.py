"""Cosine similarity and nearest neighbours as plain functions on unit rows.

Once every row has length 1, the cosine of two rows is their dot product, so
the neighbours of a token are one matrix-vector product over the whole table
(the chapter's "Y = W . X, once more") followed by a partial sort.  That pass
may be a cheaper, rounded one (``bf16_rows``): the rows it cannot rule out are
then scored exactly, so the answer does not change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..common.plain_pages import empty_on_plain_pages
from .many_scores import scores_many

try:
    from . import _pick
except ImportError:  # built without a C compiler: numpy picks the candidates
    _pick = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from .stored_rows import StoredRows

# Rows per block of unit_rows: a few MB, so each block is read from memory once and
# scaled while it is still in cache.
_BLOCK_ROWS = 4096
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def unit_rows(rows: np.ndarray | StoredRows) -> np.ndarray:
    """Every row scaled to length 1, as a new float32 array.

    All-zero rows stay zero, and so do rows holding NaN or infinity: they point
    nowhere, so no query should find them.  A read-only memory-mapped ``rows``
    is handed back to the page cache block by block, so the process never holds
    the raw table and the unit table at once (rows read later simply map in again).
    """
    unit = empty_on_plain_pages(rows.shape, np.float32)
    release = _page_releaser(rows)
    for start in range(0, rows.shape[0], _BLOCK_ROWS):
        block = rows[start : start + _BLOCK_ROWS]
        # einsum gives the squared norms without a block-sized temporary.
        exact = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
        finite = np.isfinite(exact)
        # A row of finite numbers near float32's limit (1e38) has a length float32 cannot
        # hold: scale those few rows in float64 instead of losing them.
        huge = finite & (exact > _FLOAT32_MAX)
        norms = np.where(huge, 1.0, exact).astype(np.float32)
        norms[~finite | (norms == 0)] = 1.0
        scaled = unit[start : start + _BLOCK_ROWS]
        np.divide(block, norms[:, None], out=scaled)
        if huge.any():
            scaled[huge] = np.asarray(block[huge], dtype=np.float64) / exact[huge][:, None]
        if not finite.all():
            scaled[~finite] = 0.0
        release(block)
    return unit


def _page_releaser(rows: np.ndarray | StoredRows):  # type: ignore[no-untyped-def]
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


class Screen(Protocol):
    """A cheaper pass over the unit rows whose scores are each within a known distance of the exact ones."""

    def scores(self, query: np.ndarray) -> np.ndarray: ...

    def error_bound(self, query_length: float) -> float: ...


class ManyScreen(Screen, Protocol):
    """A first pass that also scores several queries in one read of its rows."""

    def scores_many(self, queries: np.ndarray) -> np.ndarray: ...


def accumulation_error(width: int) -> float:
    """Bound on float32 rounding in a sum of ``width`` products, relative to the sum of their sizes."""
    unit_roundoff = 2.0**-24
    return width * unit_roundoff / (1 - width * unit_roundoff)


def float32_error_bound(width: int, query_length: float) -> float:
    """How far a float32 ``unit @ query`` score may be from the exact cosine (unit rows, Cauchy-Schwarz, 1 % spare).

    The sum's rounding is ``accumulation_error``; the float32 query and the unit rows' own
    rounding from the stored numbers (2^-24 each) add 3 x 2^-24, so the exact scores may be
    float64 cosines of the stored rows (``raw_rows``) as well as of the unit rows.
    """
    return 1.01 * query_length * (accumulation_error(width) + 3 * 2.0**-24)


def top_k(
    unit: np.ndarray,
    query: np.ndarray,
    k: int,
    exclude: Iterable[int] = (),
    screen: Screen | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The k rows of ``unit`` with the highest cosine to ``query``, best first.

    ``query`` need not have length 1; the order and cosines are those of its
    direction.  Rows in ``exclude`` (usually the query's own ids) are skipped.
    Returns ``(ids, cosines)``.

    Scores come from one pass over every row: ``unit @ query``, or the cheaper
    ``screen`` when given.  Either pass rounds, so every row whose score could
    still be among the k best is scored again exactly (in float64) and the k
    best of those are the answer: with or without a screen it is the same.
    """
    query = np.asarray(query, dtype=np.float32)
    if screen is not None:
        return search(unit.shape[0], query, k, exclude, screen.scores, screen.error_bound, partial(exact_scores, unit))
    return search(
        unit.shape[0],
        query,
        k,
        exclude,
        unit.__matmul__,
        partial(float32_error_bound, unit.shape[1]),
        partial(exact_scores, unit),
    )


# Picks the candidates of a first pass's scores, scores them exactly and orders them in one call (a quantised
# table's: ``StoredScreen.best_of``): ``(scores, k, window, query64)`` -> the k best ids and their exact
# scores, best first, ties by id, as ``search`` orders them; or None, and ``search`` does it step by step.
Finish = Callable[[np.ndarray, int, float, np.ndarray], tuple[np.ndarray, np.ndarray] | None]


def search(
    count: int,
    query: np.ndarray,
    k: int,
    exclude: Iterable[int],
    first_pass: Callable[[np.ndarray], np.ndarray],
    error_bound: Callable[[float], float],
    exact: Callable[[np.ndarray, np.ndarray], np.ndarray],
    finish: Finish | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The k best of ``count`` rows for ``query``: one rounded first pass, exact scores for the rows it cannot rule out.

    ``first_pass(query32)`` scores every row within ``error_bound(|query|)`` of what
    ``exact(ids, query)`` gives in float64 (a cosine times the query's length).
    ``query`` may be float64; the first pass gets it as float32.  ``finish`` (see ``Finish``)
    does what follows the first pass in one call where it can, with the same answer.
    """

    def bounded(query32: np.ndarray, length: float) -> tuple[np.ndarray, float]:
        return first_pass(query32), error_bound(length)

    return search_bounded(count, query, k, exclude, bounded, exact, finish)


# A first pass that gives its own margin: ``(query32, |query|)`` -> every row's score and how far any score may be
# from its exact value, for this query (``StoredScreen.bounded_scores``: a coarser copy of the query, measured).
BoundedPass = Callable[[np.ndarray, float], tuple[np.ndarray, float]]


# The whole search in one call where it can (a table whose query is in bytes: ``StoredScreen.whole_search``):
# ``(query32, query64, |query| > 0, k, excluded ids)`` -> the k best ids and their cosines as ``search_bounded``
# gives them, or None.  Both queries C-contiguous.
WholeSearch = Callable[[np.ndarray, np.ndarray, float, int, list[int]], tuple[np.ndarray, np.ndarray] | None]


def search_bounded(
    count: int,
    query: np.ndarray,
    k: int,
    exclude: Iterable[int],
    first_pass: BoundedPass,
    exact: Callable[[np.ndarray, np.ndarray], np.ndarray],
    finish: Finish | None = None,
    whole: WholeSearch | None = None,
    measured: tuple[np.ndarray, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``search`` with a first pass that says its own margin for each query; ``whole`` does it all in one call
    where it can (see ``WholeSearch``).  ``measured``: the query in float64 (C-contiguous) and its length, where the
    caller has them already (each numpy call costs a query some 10 us: the scan before has evicted its code)."""
    if measured is None:
        query64 = np.asarray(query, dtype=np.float64)
        length = math.sqrt(float(query64 @ query64))  # np.linalg.norm's very sum, without its checks
    else:
        query64, length = measured
    excluded = sorted({int(i) for i in exclude})
    k = max(0, min(int(k), count - len(excluded)))
    if k == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    if length == 0:  # every cosine is 0: the first rows, in id order
        kept = np.setdiff1d(np.arange(min(count, k + len(excluded))), excluded)[:k]
        return kept.astype(np.int64), np.zeros(k, dtype=np.float32)
    query32 = np.ascontiguousarray(query, dtype=np.float32)  # as ``whole`` takes it
    found = None if whole is None or k > _PICK_MAX_K else whole(query32, query64, length, k, excluded)
    if found is not None:
        return found
    scores, margin = first_pass(query32, length)
    for row in excluded:  # one or three ids: plain item writes beat an index array
        scores[row] = -np.inf
    found = None if finish is None or k > _PICK_MAX_K else finish(scores, k, 2.0 * margin, query64)
    if found is not None:
        return found[0], (found[1] / length).astype(np.float32)
    candidates = _candidates(scores, k, margin)
    exact_values = exact(candidates, query)
    # Sort by cosine, ties by id, so results are the same on every run.
    order = np.lexsort((candidates, -exact_values))[:k]
    return candidates[order].astype(np.int64, copy=False), (exact_values[order] / length).astype(np.float32)


def top_k_many(
    unit: np.ndarray,
    queries: np.ndarray,
    k: int,
    screen: ManyScreen | None = None,
    exact: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``top_k`` for several queries at once, with the same answers: one pass over the table for all of them.

    A pass per query reads the whole table each time; ``scores_many`` reads it once
    for every query (a token's vector after each layer: 13 queries for GPT-2 small),
    from the float32 rows or from ``screen``'s cheaper rounded ones. Each query's
    scores then go through the same selection and exact rescoring as ``top_k``, with
    the first pass's own error bound. ``exact(ids, query)`` gives the exact scores (default:
    float64 from ``unit``).
    """
    exact_of = partial(exact_scores, unit) if exact is None else exact
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    k = max(0, min(int(k), unit.shape[0]))
    if queries.shape[0] == 0:
        return []
    error_bound: Callable[[float], float]
    if screen is None:
        scores = scores_many(unit, queries)  # (queries, rows), one read of the table
        error_bound = partial(float32_error_bound, unit.shape[1])
    else:
        scores, error_bound = screen.scores_many(queries), screen.error_bound
    answers = []
    for j, query in enumerate(queries):
        length = float(np.linalg.norm(query.astype(np.float64)))
        if k == 0 or length == 0:  # top_k answers these without reading the table
            answers.append(top_k(unit, query, k))
            continue
        candidates = _candidates(scores[j], k, error_bound(length))
        values = exact_of(candidates, query)
        order = np.lexsort((candidates, -values))[:k]
        answers.append((candidates[order].astype(np.int64, copy=False), (values[order] / length).astype(np.float32)))
    return answers


def exact_scores(unit: np.ndarray, ids: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Dot products of rows ``ids`` with ``query`` in float64.

    Products of two float32 numbers are exact in float64, so these are right to
    about 1e-13, and equal rows score exactly alike wherever they sit.
    """
    query64 = np.asarray(query, dtype=np.float64)
    exact = np.empty(ids.shape[0], dtype=np.float64)
    for start in range(0, ids.shape[0], _RESCORE_ROWS):
        block = unit[ids[start : start + _RESCORE_ROWS]].astype(np.float64)
        exact[start : start + _RESCORE_ROWS] = np.einsum("ij,j->i", block, query64)
    return exact


# Every SAMPLE_STRIDE-th score is a sample whose k-th best bounds the table's k-th best from below.
SAMPLE_STRIDE = 12
_MAX_CANDIDATES = 4096
# Up to this k the candidates are picked in C (a heap of k scores); past it, by numpy's partitions.
_PICK_MAX_K = 1024
# Rows per float64 block when scoring candidates exactly (6 MB at GPT-2's width).
_RESCORE_ROWS = 1024


def _candidates(scores: np.ndarray, k: int, margin: float = 0.0) -> np.ndarray:
    """Ids of every row that could hold one of the k highest scores when each score may be off by ``margin``.

    If the k-th highest score is t, a row scoring below t - 2 * margin is beaten
    by k rows whatever the rounding.  t itself comes cheap: the k-th best of any
    subset is no higher than the k-th best of all, so partitioning a 1-in-12
    sample and one comparison with the whole table leaves ~20 k rows that hold
    the top k, about three times cheaper than an argpartition over everything.
    """
    n = scores.shape[0]
    if k >= n:
        return np.arange(n)
    window = 2.0 * margin
    if _pick is not None and k <= _PICK_MAX_K and scores.dtype == np.float32 and scores.flags.c_contiguous:
        # The same set in two passes in C (``_pick.c``): a tenth of the time right after a scan.
        ids = np.empty(n, dtype=np.int64)
        picked = _pick.candidates(scores, k, window, ids)
        if picked >= 0:  # else a score is NaN: numpy's partitions below decide, as they always have
            return ids[:picked].copy()
    sample = scores[::SAMPLE_STRIDE]
    if k * 8 <= sample.shape[0]:
        bound = np.partition(sample, sample.shape[0] - k)[sample.shape[0] - k]
        if np.isfinite(bound):
            kept = np.flatnonzero(scores >= bound - window)
            if kept.size <= max(_MAX_CANDIDATES, 64 * k):
                kept_scores = scores[kept]
                kth = np.partition(kept_scores, kept.size - k)[kept.size - k]
                return kept[kept_scores >= kth - window]
    # Few rows, a large k, or many equal scores: find the k-th over everything.
    kth = np.partition(scores, n - k)[n - k]
    return np.flatnonzero(scores >= kth - window)


def analogy_vector(unit: np.ndarray, a: int, b: int, c: int) -> np.ndarray:
    """The 3CosAdd query for "a - b + c": unit rows added and subtracted (as gensim does)."""
    return unit[a] - unit[b] + unit[c]


def random_pairs(
    rows: int, pairs: int, seed: int = 0, left_out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """``pairs`` random pairs of distinct ids below ``rows``, never one of ``left_out``; None if there are not two."""
    drawn = None
    if left_out is not None and left_out.size:
        drawn = np.setdiff1d(np.arange(rows), left_out)
        rows = int(drawn.size)
    if rows < 2:
        return None
    rng = np.random.default_rng(seed)
    first = rng.integers(0, rows, size=pairs)
    second = rng.integers(0, rows - 1, size=pairs)
    second = second + (second >= first)  # never pair a row with itself
    if drawn is not None:
        first, second = drawn[first], drawn[second]
    return first, second


def baseline_cosine(
    unit: np.ndarray, rows_with_tokens: int, pairs: int = 10_000, seed: int = 0, left_out: np.ndarray | None = None
) -> float:
    """Mean cosine of random pairs of distinct tokens: what "nothing in common" looks like here.

    ``left_out``: ids never drawn (rows pointing nowhere, whose cosine 0 would pull the mean).
    """
    drawn = random_pairs(min(rows_with_tokens, unit.shape[0]), pairs, seed, left_out)
    if drawn is None:
        return 0.0
    first, second = drawn
    # A thousand pairs at a time: gathering all the rows at once would copy 60 MB for GPT-2.
    cosines = np.concatenate(
        [
            np.einsum("ij,ij->i", unit[first[i : i + 1000]], unit[second[i : i + 1000]])
            for i in range(0, pairs, 1000)
        ]
    )
    return float(cosines.mean())
