"""Rows that equal another row, exactly or nearly: found without comparing every pair.

Comparing all pairs of 152,064 rows is 11.6 billion dot products. Instead each row's
random projections (``row_pass.RowFacts.sketch``) give two 16-bit codes (which side of
16 random planes it lies); rows close in angle share a code with high probability
(two rows at cosine 0.999 share at least one of the two codes 99% of the time). Rows
sharing a code are first compared on their sketches, and the pairs that pass are
compared on their real rows. A code shared by more than ``MAX_GROUP`` rows is compared
with ``MAX_GROUP`` of them, so the work stays bounded whatever the table holds.

Rows that share one direction (a table's common lean, the offsets of Q4_K blocks) fall on
one side of most planes: the groups fill up and give millions of candidate pairs, so the
pairs are made and compared on their sketches a block at a time, and only those that pass
are kept; memory stays a few blocks whatever the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from .row_pass import SKETCH_WIDTH, Rows

# Two rows at or above this cosine are near duplicates (an angle of 2.6 degrees).
NEAR_COSINE = 0.999
# The sketch's cosine a pair must reach before its real rows are read (32 projections keep
# the cosine of two rows within about 0.15 of the truth, and far closer for close rows).
_SKETCH_COSINE = 0.9
MAX_GROUP = 256
_PIVOTS = 16  # members of a huge group every other member is compared with
_BITS = SKETCH_WIDTH // 2
# Candidate pairs made at once, and pairs whose sketches are compared at once ((n, 32) float32, twice).
_PAIR_BLOCK = 1 << 20
_SKETCH_CHUNK = 1 << 16


@dataclass
class Duplicates:
    """For each row: whether another row equals it exactly, whether one is within NEAR_COSINE, and which."""

    exact: np.ndarray  # bool
    near: np.ndarray  # bool (exact rows are near too)
    partner: np.ndarray  # int64: the closest other row found, -1 for none


def find_duplicates(
    rows: Rows, sketch: np.ndarray, length: np.ndarray, usable: np.ndarray, check: Callable[[], None]
) -> Duplicates:
    """Exact and near duplicates among the ``usable`` rows (finite, not all zero)."""
    count = sketch.shape[0]
    exact = np.zeros(count, dtype=bool)
    near = np.zeros(count, dtype=bool)
    partner = np.full(count, -1, dtype=np.int64)
    best = np.full(count, -np.inf)
    pairs = _candidate_pairs(sketch, usable, check)
    check()
    if pairs.size == 0:
        return Duplicates(exact, near, partner)
    for start in range(0, pairs.shape[0], 4096):
        chunk = pairs[start : start + 4096]
        ids = np.unique(chunk)
        where = {int(i): n for n, i in enumerate(ids)}
        got = np.array(rows[ids], dtype=np.float32)
        a = got[[where[int(i)] for i in chunk[:, 0]]]
        b = got[[where[int(i)] for i in chunk[:, 1]]]
        same = (a == b).all(axis=1)
        dots = np.einsum("ij,ij->i", a.astype(np.float64), b.astype(np.float64))
        cosine = dots / np.maximum(length[chunk[:, 0]] * length[chunk[:, 1]], 1e-300)
        cosine[same] = 1.0
        for (i, j), c, s in zip(chunk.tolist(), cosine.tolist(), same.tolist(), strict=True):
            for me, other in ((i, j), (j, i)):
                if s:
                    exact[me] = True
                if c >= NEAR_COSINE:
                    near[me] = True
                if c > best[me]:
                    best[me], partner[me] = c, other
        check()
    partner[~near] = -1
    return Duplicates(exact, near, partner)


def _candidate_pairs(sketch: np.ndarray, usable: np.ndarray, check: Callable[[], None]) -> np.ndarray:
    """(pairs, 2) int64 row ids sharing either code and close on the sketch, each pair once.

    A pair far apart in the sketch is far apart in the table: it is dropped as its block is made.
    """
    unit = sketch / np.maximum(np.linalg.norm(sketch, axis=1, keepdims=True), 1e-30)
    kept: list[np.ndarray] = []
    for block in _code_pairs(sketch, usable):
        kept.append(block[_close_on_sketch(unit, block)])
        check()  # between blocks: a stop asked for is heard
    if not kept:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.sort(np.concatenate(kept), axis=1)
    count = np.int64(sketch.shape[0])
    keys = np.unique(pairs[:, 0] * count + pairs[:, 1])  # each pair once, as one number
    return np.stack((keys // count, keys % count), axis=1)


def _close_on_sketch(unit: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Which ``pairs`` reach the sketch cosine, their sketches compared a chunk at a time."""
    close = np.empty(pairs.shape[0], dtype=bool)
    for start in range(0, pairs.shape[0], _SKETCH_CHUNK):
        chunk = pairs[start : start + _SKETCH_CHUNK]
        cosine = np.einsum("ij,ij->i", unit[chunk[:, 0]], unit[chunk[:, 1]])
        close[start : start + chunk.shape[0]] = cosine >= _SKETCH_COSINE
    return close


def _code_pairs(sketch: np.ndarray, usable: np.ndarray) -> Iterator[np.ndarray]:
    """Blocks of (pairs, 2) row ids sharing a code (bounded by MAX_GROUP per code); a pair may come twice."""
    signs = sketch > 0
    weights = 1 << np.arange(_BITS, dtype=np.int64)
    ids = np.flatnonzero(usable)
    for half in range(2):
        codes = signs[ids, half * _BITS : (half + 1) * _BITS].astype(np.int64) @ weights
        order = np.argsort(codes, kind="stable")
        sorted_codes = codes[order]
        edges = np.flatnonzero(np.diff(sorted_codes)) + 1
        starts = np.concatenate(([0], edges))
        stops = np.concatenate((edges, [sorted_codes.size]))
        sizes = stops - starts
        for size in np.unique(sizes[sizes > 1]):
            group_starts = starts[sizes == size]
            kept = min(int(size), MAX_GROUP)
            left, right = np.triu_indices(kept, 1)
            if kept < size:  # a huge group: its first MAX_GROUP all pairs, the rest against _PIVOTS of them
                rest = int(size) - kept
                left = np.concatenate((left, np.repeat(np.arange(_PIVOTS), rest)))
                right = np.concatenate((right, np.tile(np.arange(kept, int(size)), _PIVOTS)))
            step = max(1, _PAIR_BLOCK // left.size)  # groups of this size whose pairs make one block
            for first in range(0, group_starts.size, step):
                batch = group_starts[first : first + step]
                members = order[batch[:, None] + np.arange(int(size))[None, :]]
                yield np.stack((ids[members[:, left]].ravel(), ids[members[:, right]].ravel()), axis=1)
