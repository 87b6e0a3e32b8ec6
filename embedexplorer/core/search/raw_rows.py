"""A float32 table searched as it is: its rows and one reciprocal length per row, no unit copy.

A one-shot command (one neighbour query, one cosine) needs no unit table: the lengths
take one read of the table, and a query one more (``rows @ q`` times the reciprocal
lengths), which is what a plain numpy script does. The exact scores, here and for every
later query of the table, are float64 from the stored float32 numbers, so the answer
does not depend on which first pass found the candidates: this one, the float32 unit
rows or their bfloat16 roundings (``bf16_rows``).
"""

from __future__ import annotations

import numpy as np

from .neighbours import accumulation_error, random_pairs

try:
    from . import _every
except ImportError:  # built without a C compiler
    _every = None  # type: ignore[assignment]

_UNIT_ROUNDOFF = 2.0**-24
# Rows read at a time for the lengths (8 MB of float64).
_LENGTH_BYTES = 8 << 20
# Rows whose lengths are outside this range are left out of the float32 first pass's proof
# (products of numbers that small or large leave float32's range): see ``RawRows.safe``.
SAFE_LENGTHS = (1e-30, 1e30)


def float64_lengths(rows: np.ndarray) -> np.ndarray:
    """Each float32 row's length, summed in float64: one read of the table (C where it is built, else numpy)."""
    lengths = np.empty(rows.shape[0], dtype=np.float64)
    step = max(1, _LENGTH_BYTES // max(1, rows.shape[1] * 8))
    in_c = _every is not None and rows.shape[1] > 0
    for start in range(0, rows.shape[0], step):
        block = rows[start : start + step]
        if in_c and isinstance(block, np.ndarray) and block.dtype == np.float32 and block.flags.c_contiguous:
            _every.row_squares(block, rows.shape[1], lengths[start : start + step])
        else:
            lengths[start : start + step] = np.einsum("ij,ij->i", block, block, dtype=np.float64)
    return np.sqrt(lengths)


def row_inverses(rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """1 / |row| in float64 for rows ``ids`` alone (0 for a row pointing nowhere), summed as ``float64_lengths``."""
    picked = np.ascontiguousarray(rows[np.asarray(ids, dtype=np.intp)], dtype=np.float32)
    lengths = float64_lengths(picked.reshape(-1, rows.shape[1]))
    usable = np.isfinite(lengths) & (lengths > 0)
    inverse = np.zeros(lengths.shape, dtype=np.float64)
    inverse[usable] = 1.0 / lengths[usable]
    return inverse


def unit_row(rows: np.ndarray, token_id: int) -> np.ndarray:
    """One float32 row scaled to length 1 in float64, without reading the rest of the table."""
    row = np.asarray(rows[token_id], dtype=np.float64)
    scale = float(row_inverses(rows, np.array([token_id]))[0])
    return row * scale if scale else np.zeros_like(row)


def baseline_cosine(
    rows: np.ndarray, rows_with_tokens: int, pairs: int = 10_000, seed: int = 0, left_out: np.ndarray | None = None
) -> float:
    """``neighbours.baseline_cosine`` from float32 rows: the same random pairs, only their rows read."""
    drawn = random_pairs(min(rows_with_tokens, rows.shape[0]), pairs, seed, left_out)
    if drawn is None:
        return 0.0
    first, second = drawn
    cosines = []
    for i in range(0, pairs, 1000):
        a, b = first[i : i + 1000], second[i : i + 1000]
        scale = row_inverses(rows, a) * row_inverses(rows, b)
        # float32 sums, as the unit rows' were: the figure is shown to three decimals.
        with np.errstate(invalid="ignore", over="ignore"):
            dots = np.einsum("ij,ij->i", rows[a], rows[b]).astype(np.float64)
        cosines.append(np.where(scale != 0, dots * scale, 0.0))
    return float(np.concatenate(cosines).mean())


class RawRows:
    """A float32 table's rows with their float64 lengths: the exact scores of neighbour queries."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows
        self.shape = rows.shape
        lengths = float64_lengths(rows) if rows.shape[1] else np.zeros(rows.shape[0])
        self.lengths = lengths  # NaN or infinite for a row holding such numbers, 0 for an all-zero row
        usable = np.isfinite(lengths) & (lengths > 0)
        self.inverse = np.zeros(rows.shape[0], dtype=np.float64)
        self.inverse[usable] = 1.0 / lengths[usable]
        self.inverse32 = self.inverse.astype(np.float32)
        live = lengths[usable]
        # float32 products of the raw numbers keep their precision for every row.
        self.safe = live.size == 0 or (live.min() >= SAFE_LENGTHS[0] and live.max() <= SAFE_LENGTHS[1])

    def unit_row(self, token_id: int) -> np.ndarray:
        """Row ``token_id`` scaled to length 1, in float64 (zero for a row pointing nowhere)."""
        row = np.asarray(self.rows[token_id], dtype=np.float64)
        scale = self.inverse[token_id]
        return row * scale if scale else np.zeros_like(row)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Every row's cosine with ``query`` times |query|, each within ``error_bound(|query|)`` of the exact one."""
        scores = self.rows @ np.asarray(query, dtype=np.float32)
        scores *= self.inverse32
        scores[self.inverse32 == 0] = 0.0  # rows pointing nowhere (their products may be NaN)
        return scores  # type: ignore[no-any-return]

    def error_bound(self, query_length: float) -> float:
        """How far a score from ``scores`` may be from the exact cosine times ``query_length``.

        The float32 sum of products is within gamma_n of the sum of the products' sizes
        (any order), at most gamma_n |row| |query| (Cauchy-Schwarz); the float32 query,
        the reciprocal length and the product with it round by 2^-24 each. 1 % on top.
        """
        return 1.01 * query_length * (accumulation_error(self.shape[1]) + 4 * _UNIT_ROUNDOFF)

    def exact_scores(self, ids: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosines times |query| of rows ``ids``, in float64 from the stored numbers (0 for rows pointing nowhere)."""
        query64 = np.asarray(query, dtype=np.float64)
        out = np.empty(ids.shape[0], dtype=np.float64)
        for start in range(0, ids.shape[0], 1024):
            chosen = ids[start : start + 1024]
            block = np.asarray(self.rows[chosen], dtype=np.float64)
            scale = self.inverse[chosen]
            with np.errstate(invalid="ignore", over="ignore"):
                dots = np.einsum("ij,j->i", block, query64) * scale
            out[start : start + 1024] = np.where(scale != 0, dots, 0.0)
        return out
