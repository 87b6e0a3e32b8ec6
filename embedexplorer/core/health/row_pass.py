"""The numbers read from every row in one streaming pass, and the table's first principal component.

A 152,064 x 3,584 bfloat16 table is 1.09 GB stored and 2.2 GB as float32, so rows are
widened a block at a time and every per-row number is taken from the block while it is
in cache: length, finite, all-zero, and a few random projections (the near-duplicate
search's sketch). A second pass (``dot_rows``) takes the dot products with the vectors
that only the first pass and the tokenizer make known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..search.stored_rows import StoredRows
from ..search.stored_screen import StoredScreen

# Float32 numbers widened at once: 16 M (64 MB), a few blocks of any table.
BLOCK_NUMBERS = 1 << 24
# Random directions each row is projected on, for the near-duplicate search (two codes of 16 bits).
SKETCH_WIDTH = 32
# Rows the first principal component is estimated from: every row up to 2**24 numbers, an even
# spread of at least 4,096 rows above (the first component of a table is its loudest direction;
# a few thousand rows pin it down).
PCA_NUMBERS = 1 << 24
# The most reference rows whose mean is taken exactly; a larger set is an even spread of this many.
REFERENCE_ROWS = 8192
_SEED = 20240502  # fixed: the same table always gives the same answer

Rows = np.ndarray | StoredRows
Check = Callable[[int, int], None]


@dataclass
class RowFacts:
    """Per-row numbers of one table (all arrays have one entry per row)."""

    length: np.ndarray  # float64; 0 for a non-finite row
    finite: np.ndarray  # bool: every number is finite
    sketch: np.ndarray  # float32 (rows, SKETCH_WIDTH): the row's projections on fixed random directions
    sample_ids: np.ndarray  # every ``stride``-th row, kept whole for the principal component
    sample: np.ndarray  # float32 (len(sample_ids), width); non-finite rows are zeros here

    @property
    def zero(self) -> np.ndarray:
        return self.finite & (self.length == 0)


def blocks(rows: Rows) -> Iterator[tuple[int, np.ndarray]]:
    """(start, float32 rows) of consecutive blocks; non-finite numbers stay as they are.

    The block is the caller's to change until the next one is asked for. bfloat16 rows are
    widened into one buffer used again for every block: fresh 64 MB arrays would cost a
    page fault per 4 KB, which on a busy machine took longer than the widening itself.
    """
    count, width = rows.shape
    step = max(1, BLOCK_NUMBERS // max(1, width))
    if isinstance(rows, StoredRows) and rows.storage == "BF16":
        buffer = np.empty((min(step, count), width), dtype=np.uint32)
        for start in range(0, count, step):
            bits = rows.raw[start : start + step]
            out = buffer[: bits.shape[0]]
            np.left_shift(bits, 16, out=out, dtype=np.uint32)
            yield start, out.view(np.float32)
        return
    for start in range(0, count, step):
        yield start, np.array(rows[start : start + step], dtype=np.float32)


def read_rows(rows: Rows, check: Check, screen: StoredScreen | None = None) -> RowFacts:
    """Length, finiteness and sketch of every row, in one pass; ``check(done, total)`` between blocks.

    A stored table's ``screen`` already holds every row's length (float64, from the stored
    numbers, measured when the table opened): they are taken from it, not measured again.
    """
    count, width = rows.shape
    directions = np.random.default_rng(_SEED).standard_normal((width, SKETCH_WIDTH)).astype(np.float32)
    known = screen is not None and screen.lengths.shape[0] == count
    length = np.array(screen.lengths, dtype=np.float64) if known and screen is not None else np.zeros(count)
    finite = np.isfinite(length) if known else np.ones(count, dtype=bool)
    sketch = np.zeros((count, SKETCH_WIDTH), dtype=np.float32)
    # The principal component's rows are taken from the blocks as they pass: no second read.
    stride = -(-count // max(4096, PCA_NUMBERS // max(1, width)))
    sample_ids = np.arange(0, count, stride)
    sample = np.zeros((sample_ids.size, width), dtype=np.float32)
    for start, block in blocks(rows):
        stop = start + block.shape[0]
        ok = finite[start:stop] if known else np.isfinite(block).all(axis=1)
        if not ok.all():
            block[~ok] = 0.0  # a NaN would spread through every sum it joins
        if not known:
            finite[start:stop] = ok
            length[start:stop] = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
        np.matmul(block, directions, out=sketch[start:stop])
        first = -(-start // stride)  # the first sampled row in this block
        taken = block[first * stride - start :: stride]
        sample[first : first + taken.shape[0]] = taken
        check(stop, count)
    length[~finite] = 0.0
    return RowFacts(length, finite, sketch, sample_ids, sample)


def dot_rows(
    rows: Rows, vectors: np.ndarray, finite: np.ndarray, check: Check, screen: StoredScreen | None = None
) -> np.ndarray:
    """Each row's dot product with each of ``vectors`` (k, width) as float64 (rows, k); 0 for non-finite rows.

    A stored table's ``screen`` answers with its threaded C scan over the stored 16-bit rows
    (a cosine times the vector's length, within ``screen.error_bound``), times the row's length.
    """
    count = rows.shape[0]
    out = np.zeros((count, vectors.shape[0]), dtype=np.float64)
    if screen is not None and screen.shape == tuple(rows.shape):
        for column, vector in enumerate(vectors):
            scores = screen.scores(np.asarray(vector, dtype=np.float32)).astype(np.float64)
            out[:, column] = np.where(finite, scores * np.where(finite, screen.lengths, 0.0), 0.0)
            check(count * (column + 1) // len(vectors), count)
        return out
    along = np.ascontiguousarray(vectors.T, dtype=np.float32)
    for start, block in blocks(rows):
        stop = start + block.shape[0]
        bad = ~finite[start:stop]
        if bad.any():
            block[bad] = 0.0
        out[start:stop] = block @ along
        check(stop, count)
    return out


def reference_mean(rows: Rows, reference: np.ndarray) -> np.ndarray:
    """The mean of the rows marked in ``reference`` (float64), gathered by id in blocks.

    A reference set larger than ``REFERENCE_ROWS`` (a tokenizer that cannot produce many of its
    tokens) is represented by an even spread of that many of its rows: their mean is within a
    small fraction of the whole set's, and reading them is far quicker than another pass.
    """
    ids = np.flatnonzero(reference)
    if ids.size > REFERENCE_ROWS:
        ids = ids[np.linspace(0, ids.size - 1, REFERENCE_ROWS).astype(np.int64)]
    total = np.zeros(rows.shape[1], dtype=np.float64)
    for start in range(0, ids.size, 4096):
        total += np.asarray(rows[ids[start : start + 4096]], dtype=np.float64).sum(axis=0)
    return total / max(1, ids.size)


def first_component(sample: np.ndarray) -> np.ndarray:
    """The first principal component (unit length) of ``sample``'s rows, as scikit-learn's PCA finds it.

    A few steps of subspace iteration on the centred rows: eight directions, eight
    steps, then the best of them (the sample is at most 2**26 numbers, so this is quick
    where a full covariance of a 3,584-wide table would not be).
    """
    centred = np.asarray(sample, dtype=np.float32)
    centred = centred - centred.mean(axis=0, dtype=np.float64).astype(np.float32)
    width = centred.shape[1]
    k = min(8, width, max(1, centred.shape[0]))
    basis = np.random.default_rng(_SEED).standard_normal((width, k)).astype(np.float32)
    for _ in range(8):
        basis, _r = np.linalg.qr(centred.T @ (centred @ basis))
    projected = centred @ basis
    _u, _s, vt = np.linalg.svd(projected, full_matrices=False)
    component = (basis @ vt[0]).astype(np.float64)
    norm = np.linalg.norm(component)
    return component / norm if norm > 0 else component
