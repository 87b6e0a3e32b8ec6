"""The k nearest rows of many rows at once, exactly: a float32 screen in tiles, then float64 for the few that could win.

The work is one big product, the unit rows times the table. BLAS computes it a tile at a
time (4,096 x 4,096 scores, float32; torch's MKL where it is, else numpy's BLAS; it uses
the machine's cores), and a C loop (``search/_every.c``) reads each tile once, keeping for
every query the k best screened scores so far and every column that scores near them. At
the end each query's surviving columns (a dozen or two) are scored again in float64 from
the float32 rows, and the k best by that exact score, ties by the lower id, are the answer.

When every row is a query (``compare`` asks for all of them), the product is symmetric:
the tile of rows I with columns J is also, transposed, the tile of rows J with columns I,
so only the tiles on and above the diagonal are computed: half the multiplications of a
plain search (faiss's exact search computes them all).

No unit copy of the table is made: a tile is a block of unit query rows times the raw rows,
and the C loop scales each column by its reciprocal length as it reads it. The memory is
the table, one tile and, per query, a few hundred bytes of lists.

Why nothing is missed
---------------------
Every screened score s~ is within e of the exact cosine s (``screen_error`` proves the bound
e). For a query, let t~ be the k-th best screened score over all columns but its own. The k
columns scoring t~ or more have exact scores of at least t~ - e, so the k-th best exact score
T is at least t~ - e. A column among the exact k best (ties at T included) has s >= T, so
s~ >= s - e >= t~ - 2e. The loop's bar for a query, the k-th best screened score among the
columns read so far minus the window w >= 2e, is never above t~ - w: the k-th best of some
columns is at most the k-th best of all. So every column with s~ >= t~ - 2e was at or above
the bar when it was read and was kept; pruning drops only columns below a later bar, which
is still at most t~ - 2e. The final filter keeps s~ >= t~ - w. Every exact winner is rescored,
and the answer is the exact k best of a set that holds them all. A query whose lists fill up
(many columns within w of each other, a table of copies) is searched again on its own, with
the same proof over its whole row of screened scores.

A target's rank is 1 + the columns whose exact score is above the target's exact score t:
screened scores above t + e are surely above, those below t - e surely not, and those in
between (the band) are scored in float64 by the C loop as it reads them. The band is a few
columns when the target is near the top (a quantised copy), but a hundred or more when it sits
among the bulk of the scores (A's nearest in an unrelated table B): no list of them is kept.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..search import neighbours as nb
from ..search.raw_rows import float64_lengths
from .plain_nearest import plain_nearest

try:
    from ..search import _every
except ImportError:  # built without a C compiler
    _every = None  # type: ignore[assignment]

# Bytes of one tile of scores (float32): 4,096 x 4,096.
TILE_BYTES = 64 << 20
# Candidates kept per query before it is searched on its own: the window is about 1e-4 wide,
# so after pruning a list holds the k best and the rare near ties.
EXTRA_CANDIDATES = 24
# Rows whose lengths are outside this range are screened from a unit copy (float32 products
# of raw rows that small or large would underflow or overflow).
SAFE_LENGTHS = (1e-30, 1e30)
# torch's MKL multiplied float32 tiles about 1.2x faster than numpy's OpenBLAS here, but
# importing it maps about 200 MB: it is used when already imported or for tables this large.
TORCH_FOR_TABLES_FROM = 1 << 30
_UNIT_ROUNDOFF = 2.0**-24


@dataclass(frozen=True)
class Nearest:
    """For each query row: its k nearest rows (positions in the table given) and their cosines,
    best first, and the rank of a named target row among all rows (1 = nearest), if asked."""

    ids: np.ndarray  # (queries, k) int64
    cosines: np.ndarray  # (queries, k) float32, from the exact float64 cosines
    target_ranks: np.ndarray | None  # (queries,) int64
    threads: int = 1  # cores the products were split over
    product: str = "numpy"  # which BLAS multiplied the tiles: "torch" (MKL) or "numpy"


def inverse_lengths(rows: np.ndarray) -> np.ndarray:
    """1 / |row| for each row in float64 (0 for an empty or unreadable row)."""
    lengths = float64_lengths(rows)
    good = np.isfinite(lengths) & (lengths > 0)
    inverse = np.zeros(rows.shape[0], dtype=np.float64)
    inverse[good] = 1.0 / lengths[good]
    return inverse


def screen_error(width: int) -> float:
    """How far a screened score may be from the exact cosine of two rows.

    The screen is s~ = fl(fl(sum_i u_i x_i) * r), with u = fl(q * r_q) the float32 unit query
    and r, r_q float32 reciprocal lengths (each within 1.01 u of 1/|x|, u = 2^-24, from the
    float64 length). BLAS sums the products in some order, with or without fused steps; any
    order is within gamma_n = n u / (1 - n u) of each product's size (Higham, Accuracy and
    Stability, 3.1). So s~ = sum_i (q_i x_i / |q||x|)(1 + a_i) with |a_i| <= gamma_n + 4.1 u
    (to first order), and |s~ - s| <= (gamma_n + 4.1 u) * sum_i |q_i x_i| / |q||x| <=
    gamma_n + 4.1 u by Cauchy-Schwarz. Products below float32's normal range lose at most
    2^-149 each, times a reciprocal length under 1e30: the 1e-10 covers them.
    """
    return 1.01 * (nb.accumulation_error(width) + 5 * _UNIT_ROUNDOFF) + 1e-10


def tile_side(count: int) -> int:
    return int(max(64, min(count, int(np.sqrt(TILE_BYTES // 4)))))


def nearest_of_all(
    rows: np.ndarray,
    queries: np.ndarray,
    k: int,
    *,
    targets: np.ndarray | None = None,
    step: Callable[[int], None] | None = None,
    threads: int | None = None,
    product: str | None = None,
) -> Nearest:
    """The k nearest rows of each of ``rows[queries]`` among all ``rows``, the query itself left out.

    ``rows`` is a float32 array (a mapped table is fine: it is only read). ``targets`` names
    one row per query whose rank among all rows is wanted. ``step(done)`` is called after
    each tile with about how many queries are done; it may raise to stop the work.
    ``threads`` limits the cores (default: all of them); ``product`` names the BLAS of the tiles,
    "torch" or "numpy" (default: torch's when it is imported already or the table is large).
    """
    count, width = (int(n) for n in rows.shape)
    if not 1 <= k < count:
        raise ValueError(f"k must be between 1 and {count - 1}, not {k}")
    queries = np.asarray(queries, dtype=np.int64)
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    if _every is None:  # built without a C compiler: the same answers, in float64 throughout
        found = plain_nearest(rows, queries, k, inverse_lengths(rows), targets, step)
        return Nearest(*found, threads=1, product="numpy float64 (no C loop)")
    search = _Search(rows, queries, k, targets, _Product(rows, product, threads))
    search.run(step)
    return search.answer()


def planned_cores(rows: np.ndarray) -> tuple[int, str]:
    """The cores ``nearest_of_all(rows, ...)`` will split its tiles over (its default) and whose product."""
    if _every is None:
        return 1, "numpy float64 (no C loop)"
    product = _Product(rows, None, None)
    return product.threads, product.name


class _Search:
    """One call of ``nearest_of_all``: the queries' lists, filled tile by tile, then answered."""

    def __init__(
        self, rows: np.ndarray, queries: np.ndarray, k: int, targets: np.ndarray | None, product: _Product
    ) -> None:
        count, width = rows.shape
        self.rows, self.queries, self.k = rows, queries, k
        self.inverse = inverse_lengths(rows)
        self.screen_rows, self.scale = _screen_rows(rows, self.inverse)
        # Every row a query: the state is kept by row id and the product is symmetric.
        self.symmetric = queries.size == count and np.array_equal(np.sort(queries), np.arange(count))
        self.self_ids = np.arange(count, dtype=np.int64) if self.symmetric else queries.copy()
        n = self.self_ids.size
        self.error = screen_error(width)
        # The bar's window: 2e, rounded up past float32's rounding of "k-th best - window".
        self.window = np.float32(2.02 * self.error + 2.0**-20)
        self.cap = 2 * k + EXTRA_CANDIDATES
        self.heap = np.full((n, k), -np.inf, dtype=np.float32)
        self.filled = np.zeros(n, dtype=np.int32)
        self.bar = np.full(n, -np.inf, dtype=np.float32)
        self.cand_ids = np.zeros((n, self.cap), dtype=np.int32)
        self.cand_scores = np.zeros((n, self.cap), dtype=np.float32)
        self.cand_count = np.zeros(n, dtype=np.int32)
        self.overflow = np.zeros(n, dtype=np.uint8)
        self.product = product
        self.targets = None if targets is None else self._state_order(np.asarray(targets, dtype=np.int64))
        self.t_exact = np.zeros(n, dtype=np.float64)
        self.t_low = np.zeros(n, dtype=np.float32)
        self.t_high = np.zeros(n, dtype=np.float32)
        if self.targets is not None:
            self.t_exact = self.pair_scores(self.self_ids, self.targets)
            self.t_low, self.t_high = _outward(self.t_exact, self.error)
        self.above = np.zeros(n, dtype=np.int32)

    def _state_order(self, per_query: np.ndarray) -> np.ndarray:
        if not self.symmetric:
            return per_query
        by_row = np.empty_like(per_query)
        by_row[self.queries] = per_query
        return by_row

    # ----- the tiles -----------------------------------------------------------------------
    def run(self, step: Callable[[int], None] | None) -> None:
        count = self.rows.shape[0]
        side = tile_side(count)
        starts = list(range(0, count, side))
        out = np.empty(side * side, dtype=np.float32)
        n = self.self_ids.size
        if self.symmetric:
            tiles = [(i, j) for i in starts for j in starts if j >= i]
        else:
            tiles = [(i, j) for i in range(0, n, side) for j in starts]
        with self.product.limited():
            for done, (i, j) in enumerate(tiles, 1):
                self._tile(i, j, side, out)
                if step is not None:
                    step(min(n, n * done // len(tiles)))

    def _tile(self, i: int, j: int, side: int, out: np.ndarray) -> None:
        count = self.rows.shape[0]
        query_rows = self.self_ids[i : i + side]
        j_end = min(j + side, count)
        left = self.screen_rows[query_rows] * self.scale[query_rows, None]
        if not np.isfinite(left).all():  # a row of infinities or NaNs: it is near nothing
            np.nan_to_num(left, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        tile = out[: left.shape[0] * (j_end - j)].reshape(left.shape[0], j_end - j)
        self.product.multiply(left, self.screen_rows[j:j_end], tile)
        both = self.symmetric and j != i
        _every.screen_tile(
            tile, tile.shape[0], tile.shape[1], self.scale[j:j_end], i, j, j if both else -1, i,
            self.k, self.cap, float(self.window), self.targets is not None,
            self.heap, self.filled, self.bar, self.cand_ids, self.cand_scores, self.cand_count, self.self_ids,
            self.t_low, self.t_high, self.t_exact, self.above, self.overflow,
            self.rows, self.rows.shape[1], self.inverse,
        )  # fmt: skip

    # ----- the answer ----------------------------------------------------------------------
    def pair_scores(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Exact cosines of row pairs in float64, split over the threads."""
        first = np.ascontiguousarray(first, dtype=np.int64)
        second = np.ascontiguousarray(second, dtype=np.int64)
        out = np.empty(first.size, dtype=np.float64)
        parts = self.product.threads if first.size > 4096 else 1
        edges = np.linspace(0, first.size, parts + 1).astype(int)

        def part(p: int) -> None:
            a, b = edges[p], edges[p + 1]
            _every.pair_scores(self.rows, self.rows.shape[1], self.inverse, first[a:b], second[a:b], out[a:b])

        if parts == 1:
            part(0)
        else:
            with ThreadPoolExecutor(parts) as pool:
                list(pool.map(part, range(parts)))
        return out

    def answer(self) -> Nearest:
        n, k = self.self_ids.size, self.k
        # The final bar: the k-th best screened score minus the window (every heap is full: k < rows).
        final_bar = self.heap.min(axis=1) - self.window
        slots = np.arange(self.cap)[None, :]
        kept = (slots < self.cand_count[:, None]) & (self.cand_scores >= final_bar[:, None])
        kept[self.overflow == 1] = False
        owner, slot = np.nonzero(kept)
        columns = self.cand_ids[owner, slot].astype(np.int64)
        exact = self.pair_scores(self.self_ids[owner], columns)
        order = np.lexsort((columns, -exact, owner))
        owner, columns, exact = owner[order], columns[order], exact[order]
        firsts = np.searchsorted(owner, np.arange(n))
        take = np.minimum(firsts[:, None] + np.arange(k), max(0, owner.size - 1))
        ids = np.zeros((n, k), dtype=np.int64)
        cosines = np.zeros((n, k), dtype=np.float64)
        fine = self.overflow == 0
        ids[fine], cosines[fine] = columns[take[fine]], exact[take[fine]]
        ranks = (self.above + 1).astype(np.int64) if self.targets is not None else None
        for q in np.flatnonzero(~fine):
            ids[q], cosines[q], rank = self._alone(int(q))
            if ranks is not None:
                ranks[q] = rank
        pick = self.queries if self.symmetric else slice(None)
        return Nearest(
            ids[pick], cosines[pick].astype(np.float32), None if ranks is None else ranks[pick],
            self.product.threads, self.product.name,
        )  # fmt: skip

    def _alone(self, q: int) -> tuple[np.ndarray, np.ndarray, int]:
        """One query whose lists filled up, searched over its whole row of screened scores (same proof)."""
        row = int(self.self_ids[q])
        unit = np.nan_to_num(self.screen_rows[row] * self.scale[row], nan=0.0, posinf=0.0, neginf=0.0)
        scores = np.asarray(self.screen_rows @ unit, dtype=np.float32) * self.scale
        scores[self.scale == 0] = 0.0
        scores[row] = -np.inf
        count = scores.size
        kth = np.partition(scores, count - self.k)[count - self.k]
        columns = np.flatnonzero(scores >= kth - self.window)
        exact = self.pair_scores(np.full(columns.size, row), columns)
        order = np.lexsort((columns, -exact))[: self.k]
        rank = 0
        if self.targets is not None:
            above = int(np.count_nonzero(scores > self.t_high[q]))
            band = np.flatnonzero((scores >= self.t_low[q]) & (scores <= self.t_high[q]))
            band_exact = self.pair_scores(np.full(band.size, row), band)
            rank = above + int(np.count_nonzero(band_exact > self.t_exact[q])) + 1
        return columns[order], exact[order], rank


def _outward(exact: np.ndarray, error: float) -> tuple[np.ndarray, np.ndarray]:
    """float32 bounds at or beyond exact - error and exact + error (rounded, then one step further out)."""
    low = np.nextafter((exact - error).astype(np.float32), np.float32(-np.inf))
    high = np.nextafter((exact + error).astype(np.float32), np.float32(np.inf))
    return low, high


def _screen_rows(rows: np.ndarray, inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows the tiles multiply and each one's float32 scale (0: the row points nowhere).

    The raw rows with their reciprocal lengths, unless a length is so small or large that
    float32 products of raw numbers would lose their precision: then a unit copy.
    """
    live = inverse > 0
    lengths = 1.0 / inverse[live]
    if lengths.size == 0 or (lengths.min() >= SAFE_LENGTHS[0] and lengths.max() <= SAFE_LENGTHS[1]):
        return rows, inverse.astype(np.float32)
    return nb.unit_rows(rows), live.astype(np.float32)


class _Product:
    """float32 tile products: torch's (MKL) for a large search where its float32 is IEEE float32, else numpy's."""

    def __init__(self, rows: np.ndarray, name: str | None, threads: int | None) -> None:
        import sys

        from ..common.blas import blas_threads

        if name is None:
            name = "torch" if "torch" in sys.modules or rows.nbytes >= TORCH_FOR_TABLES_FROM else "numpy"
        self._torch = _torch_if_exact() if name == "torch" else None
        self.name = "numpy" if self._torch is None else "torch"
        # A BLAS limit (the window's long lane keeps a core for the window) holds torch's threads too.
        available = blas_threads()
        if self._torch is not None:
            available = min(available, self._torch.get_num_threads())
        self.threads = max(1, min(threads or available, available))

    def limited(self):  # type: ignore[no-untyped-def]
        """The product's threads held to ``self.threads`` while the tiles run."""
        from contextlib import contextmanager

        from ..common.blas import limit_blas

        torch = self._torch

        @contextmanager
        def held():  # type: ignore[no-untyped-def]
            if torch is None:
                with limit_blas(self.threads):
                    yield
                return
            before = torch.get_num_threads()
            torch.set_num_threads(self.threads)
            try:
                yield
            finally:
                torch.set_num_threads(before)

        return held()

    def multiply(self, left: np.ndarray, right: np.ndarray, out: np.ndarray) -> None:
        if self._torch is None:
            np.matmul(left, right.T, out=out)
            return
        torch = self._torch
        with warnings.catch_warnings():  # a read-only mapped table: torch is only reading it
            warnings.simplefilter("ignore", UserWarning)
            right_t = torch.from_numpy(right)
        torch.mm(torch.from_numpy(left), right_t.T, out=torch.from_numpy(out))


def _torch_if_exact():  # type: ignore[no-untyped-def]
    """torch, when it is installed and multiplies float32 in IEEE float32 (not bfloat16 or TF32 inside)."""
    try:
        import torch
    except ImportError:
        return None
    if torch.get_float32_matmul_precision() != "highest":
        return None
    mkldnn = getattr(getattr(torch.backends, "mkldnn", None), "matmul", None)
    if getattr(mkldnn, "fp32_precision", "ieee") not in ("ieee", "none"):
        return None
    return torch
