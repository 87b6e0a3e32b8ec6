"""Several queries scored against every row in one read of the table.

A token's vector after each layer is compared with the whole table: up to a dozen
queries at once. BLAS's matrix product for so few columns first copies the table into
packed blocks, which took longer than a pass per query; the C loop (``_scan.c``) reads
each row once, for every query, while it is in the first cache. Rows are float32, or
bfloat16 bits (half the bytes to read). Without a vectorised C build, numpy's product
is the answer.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .scan_threads import shared_pass

try:
    from . import _scan
except ImportError:  # built without a C compiler
    _scan = None  # type: ignore[assignment]


def vectorised() -> bool:
    """Whether the C loop is built for this CPU's vector instructions (the plain build loses to BLAS)."""
    return _scan is not None and _scan.INSTRUCTIONS != "plain"


def scores_many(rows: np.ndarray, queries: np.ndarray, bf16_bits: bool = False) -> np.ndarray:
    """``queries @ rows.T`` in float32: row i's dot product with query q at ``[q, i]``.

    ``rows`` are float32, or with ``bf16_bits`` the uint16 bits of bfloat16 numbers. Each
    score is a float32 sum of ``rows.shape[1]`` products of the numbers as given, so it
    is within ``neighbours.float32_error_bound`` of their exact product, as BLAS's is.
    """
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if queries.ndim != 2 or rows.ndim != 2 or queries.shape[1] != rows.shape[1]:
        raise ValueError(f"queries of shape {queries.shape} do not fit rows of shape {rows.shape}")
    expected = np.uint16 if bf16_bits else np.float32
    if rows.dtype != expected:
        raise ValueError(f"rows must be {np.dtype(expected).name} here, not {rows.dtype}")
    out = np.zeros((queries.shape[0], rows.shape[0]), dtype=np.float32)
    if out.size == 0 or rows.shape[1] == 0:
        return out
    rows = np.ascontiguousarray(rows)
    if not vectorised():
        wide = (rows.astype(np.uint32) << 16).view(np.float32) if bf16_bits else rows
        return np.asarray(queries @ wide.T, dtype=np.float32)
    shared_pass(rows.size, partial(_scan.scores_many, rows, bf16_bits, queries, rows.shape[1], out))
    return out
