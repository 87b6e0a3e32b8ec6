"""Neighbour search over a table kept as stored: no float32 copy, no unit copy.

The first pass reads the rows as the file stores them: 16-bit rows (bfloat16, float16),
or the GGUF blocks of Q8_0, Q4_0, Q4_K and Q6_K rows (``_quants.c``, which dequantises
each number to the float32 the exact pass reads, so its bound is a 16-bit row's); Q4_1,
Q5_0, Q5_1 and IQ4_NL rows as a copy of their blocks sixteen rows at a time, made at open
where the CPU has AVX-512 VNNI (``block32_groups``, ``quants_groups32.h``), IQ4_XS, TQ2_0
and MXFP4 rows likewise (``lookup_groups``, ``quants_lookup.h``), Q2_K and Q3_K rows
(``low_bit_groups``, ``quants_groups_q2q3.h``), NVFP4, TQ1_0, IQ3_XXS and IQ3_S rows
(``fp4_ternary_groups``, ``quants_fp4_ternary.h``), and Q5_K rows (``grouped_q5_k``,
``quants_groups_q5k.h``); other quantised types (and those fourteen without VNNI) are rounded
to bfloat16 once, block by block, from the dequantised rows.
Each row's score is multiplied by its stored reciprocal length, so it is a cosine (times
the query's length) within a known bound.  ``neighbours.search`` then rescores, in
float64 from the stored numbers, every row that could be among the best: the answer is
that of a float64 search over the stored values.

The row lengths come from one threaded pass in C and are cached on disk by file
identity (``cache``), so the next open of the same file reads them instead.  A cache
entry is only trusted after a check against the table it belongs to: rows drawn at
random each open are measured (and rounded) again and must agree, so a poisoned or
damaged entry is discarded and made again, with a note, instead of giving quiet
wrong cosines.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from ..common import cache
from ..common.plain_pages import empty_on_plain_pages
from ..common.progress import ProgressCallback
from .block32_groups import BLOCK32_KINDS, MIN_KINDS
from .fp4_ternary_groups import FP4_TERNARY_KINDS
from .group_copy import copy_in_groups
from .grouped_q5_k import q5_k_groups
from .iq_groups import GRID_KINDS
from .lookup_groups import LOOKUP_KINDS
from .low_bit_groups import low_bit_screen
from .scan_threads import shared_pass
from .stored_rows import StoredRows
from .stored_screen import (
    BF16_KIND,
    BF16_ROUNDING,
    DEQUANTISED_KINDS,
    LOW_BIT_KINDS,
    Q5_K_KIND,
    QUANT_KINDS,
    SPREAD_KINDS,
    StoredScreen,
    quantised_spread,
    table_spread,
)

try:
    from . import _scan
except ImportError:  # built without a C compiler
    _scan = None  # type: ignore[assignment]
try:
    from . import _quants
except ImportError:  # built without a C compiler: quantised rows get bfloat16 roundings (or none)
    _quants = None  # type: ignore[assignment]

# Rows dequantised at a time when a quantised table's first-pass rows are built.
_BLOCK_ROWS = 2048
# Rows of a cache entry checked against the table at each open, drawn afresh each time
# (so no one can know which): a few milliseconds, and an entry with 1% of its rows wrong
# is caught with probability 1 - 0.99^512 > 99.4%.
CHECKED_ROWS = 512
# Lengths are measured in float64 by two different summations: they agree far closer than this.
_LENGTH_TOLERANCE = 1e-9

log = logging.getLogger(__name__)


def screen_for_stored(rows: StoredRows, report: ProgressCallback | None = None) -> StoredScreen:
    """The first pass for ``rows``: their own bits when half precision; for a quantised type this build scans
    as stored or by a copy sixteen rows at a time, that; else bfloat16 roundings of the rows."""
    report = report or (lambda done, total, message: None)
    key = _identity(rows)
    notes: list[str] = []
    if rows.half_kind is not None:
        lengths = _checked(cache.load_array(key, "lengths", (rows.shape[0],), np.float64), rows, None, key, notes)
        if lengths is None:
            report(0, 1, "Measuring the rows")
            lengths = half_lengths(rows.raw, rows.half_kind)
            cache.save_array(key, "lengths", lengths)
        return StoredScreen(rows.raw, rows.half_kind, lengths, 0.0, tuple(notes))
    build = _quantised_builder(rows)
    if build is not None:
        screen = build(rows, _stored_lengths(rows, key, notes, report), tuple(notes), report)
        if screen is not None:  # else rows whose mins nearly cancel their numbers: the bfloat16 copy
            return screen
    bits = cache.load_array(key, "bf16", rows.shape, np.uint16)
    lengths = cache.load_array(key, "lengths", (rows.shape[0],), np.float64)
    if bits is None or lengths is None or _checked(lengths, rows, bits, key, notes) is None:
        bits, lengths = _round_quantised(rows, key, report)
    return StoredScreen(bits, BF16_KIND, lengths, BF16_ROUNDING, tuple(notes))


# What the window shows while a copy sixteen rows at a time is made.
_ARRANGING = "Arranging the rows sixteen at a time"
_COPYING = "Copying the {storage} table sixteen rows at a time"
# Makes a quantised table's first pass from its rows, their lengths and the notes so far; None sends the table
# to the bfloat16 copy.
ScreenBuilder = Callable[[StoredRows, np.ndarray, tuple[str, ...], ProgressCallback], StoredScreen | None]


def _quantised_builder(rows: StoredRows) -> ScreenBuilder | None:
    """How this build reads ``rows``'s type without a bfloat16 copy: Q8_0, Q4_0, Q4_K and Q6_K as stored; the
    other types by a copy sixteen rows at a time where the CPU has AVX-512 VNNI; None for the rest."""
    if _quants is None or _scan is None or not rows.raw.flags.c_contiguous:
        return None
    if rows.storage in QUANT_KINDS:
        return _as_stored
    return _COPIED_AT_OPEN.get(rows.storage) if _quants.grouped_scan() else None


def _as_stored(rows: StoredRows, lengths: np.ndarray, notes: tuple[str, ...], report: ProgressCallback) -> StoredScreen:
    """Q8_0, Q4_0, Q4_K or Q6_K blocks scanned where they lie (each gets a copy at a second query: ``StoredScreen``)."""
    kind, width = QUANT_KINDS[rows.storage], rows.shape[1]
    spread = quantised_spread(rows.raw, width, lengths, kind) if kind in SPREAD_KINDS else None
    return StoredScreen(rows.raw, kind, lengths, 0.0, notes, quantised_width=width, spread=spread)


def _copy_builder(message: str) -> ScreenBuilder:
    """A builder whose screen scans the rows' copy sixteen at a time (``copy_in_groups``), made with ``message``
    shown; for Q4_1 and Q5_1 only when their spread allows the integer scan."""

    def build(
        rows: StoredRows, lengths: np.ndarray, notes: tuple[str, ...], report: ProgressCallback
    ) -> StoredScreen | None:
        kind, width = DEQUANTISED_KINDS[rows.storage], rows.shape[1]
        spread = quantised_spread(rows.raw, width, lengths, kind) if kind in MIN_KINDS else None
        if kind in MIN_KINDS and spread is None:
            return None
        text = message.format(storage=rows.storage)
        report(0, 1, text)
        copy = copy_in_groups(rows.raw, kind, width, _quants)
        report(1, 1, text)
        return StoredScreen(rows.raw, kind, lengths, 0.0, notes, quantised_width=width, spread=spread, groups=copy)

    return build


def _q5_k_copy(
    rows: StoredRows, lengths: np.ndarray, notes: tuple[str, ...], report: ProgressCallback
) -> StoredScreen | None:
    """Q5_K's copy, whose one pass also measures the spread its bound needs."""
    width, message = rows.shape[1], _COPYING.format(storage="Q5_K")
    report(0, 1, message)
    groups, spreads = q5_k_groups(rows.raw, width, _quants)
    report(1, 1, message)
    spread = table_spread(spreads, lengths)
    if spread is None:
        return None
    return StoredScreen(rows.raw, Q5_K_KIND, lengths, 0.0, notes, quantised_width=width, spread=spread, groups=groups)


def _low_bit_copy(
    rows: StoredRows, lengths: np.ndarray, notes: tuple[str, ...], report: ProgressCallback
) -> StoredScreen | None:
    """Q2_K's or Q3_K's copy (``low_bit_groups``: its screen keeps its own bound)."""
    report(0, 1, _ARRANGING)
    return low_bit_screen(rows.raw, rows.storage, lengths, notes, rows.shape[1])


# The types scanned by a copy of their rows sixteen at a time, made at open where the CPU has AVX-512 VNNI.
_COPIED_AT_OPEN: dict[str, ScreenBuilder] = {
    **dict.fromkeys([*BLOCK32_KINDS, *GRID_KINDS, *FP4_TERNARY_KINDS], _copy_builder(_ARRANGING)),
    **dict.fromkeys(LOOKUP_KINDS, _copy_builder(_COPYING)),
    "Q5_K": _q5_k_copy,
    **dict.fromkeys(LOW_BIT_KINDS, _low_bit_copy),
}


def _stored_lengths(rows: StoredRows, key: str | None, notes: list[str], report: ProgressCallback) -> np.ndarray:
    """The quantised rows' lengths: from the cache when they agree with the table, else measured and kept."""
    lengths = _checked(cache.load_array(key, "lengths", (rows.shape[0],), np.float64), rows, None, key, notes)
    if lengths is None:
        lengths = _quantised_lengths(rows, report)
        cache.save_array(key, "lengths", lengths)
    return lengths


def _checked(
    lengths: np.ndarray | None, rows: StoredRows, bits: np.ndarray | None, key: str | None, notes: list[str]
) -> np.ndarray | None:
    """``lengths`` (and first-pass ``bits``) from the cache when rows drawn at random agree with the table.

    A disagreement discards the entry (it is made again by the caller) and adds a note.
    """
    if lengths is None:
        return None
    count = rows.shape[0]
    picked = np.unique(np.random.default_rng().integers(0, count, size=min(CHECKED_ROWS, count)))
    if rows.half_kind is not None:
        # The rows' own bits, measured as they were for the cache (in C: a tenth of the time of
        # widening them to float64 in numpy, which opening a 3,584-wide table waited for).
        measured = half_lengths(np.ascontiguousarray(rows.raw[picked]), rows.half_kind)
    else:
        stored = np.asarray(rows[picked], dtype=np.float64)
        measured = np.sqrt(np.einsum("ij,ij->i", stored, stored))
    cached = np.asarray(lengths[picked], dtype=np.float64)
    agree = np.isclose(cached, measured, rtol=_LENGTH_TOLERANCE, atol=0.0, equal_nan=True)
    if bits is not None and agree.all():
        rounded = np.empty((picked.size, rows.shape[1]), dtype=np.uint16)
        _scan.bf16_round(np.ascontiguousarray(rows[picked], dtype=np.float32), rounded)
        agree &= (np.asarray(bits[picked]) == rounded).all(axis=1)
    if agree.all():
        return lengths
    wrong = int((~agree).sum())
    note = (
        f"The cached first pass of this table disagreed with the table itself ({wrong} of {picked.size} rows "
        "checked), so it was thrown away and computed again from the table."
    )
    log.warning("%s (cache key %s)", note, key)
    notes.append(note)
    cache.discard(key, "lengths", "bf16")
    return None


def half_lengths(bits: np.ndarray, kind: int) -> np.ndarray:
    """Each 16-bit row's length in float64, from one pass in C shared by a few threads."""
    squares = np.empty(bits.shape[0], dtype=np.float64)
    shared_pass(bits.size, partial(_scan.half_squares, bits, kind, bits.shape[1], squares))
    return np.sqrt(squares)


def _quantised_lengths(rows: StoredRows, report: ProgressCallback) -> np.ndarray:
    """Each row's length in float64 from its dequantised numbers, block by block (the scan reads the blocks)."""
    count = rows.shape[0]
    lengths = np.empty(count, dtype=np.float64)
    message = f"Dequantising the {rows.storage} table"
    for start in range(0, count, _BLOCK_ROWS):
        block = rows[start : start + _BLOCK_ROWS]
        lengths[start : start + _BLOCK_ROWS] = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
        report(min(start + _BLOCK_ROWS, count), count, message)
    return lengths


def _round_quantised(rows: StoredRows, key: str | None, report: ProgressCallback) -> tuple[np.ndarray, np.ndarray]:
    """Dequantise block by block into bfloat16 first-pass rows and float64 lengths (kept on disk when it fits)."""
    count, width = rows.shape
    target = cache.new_array_file(key, "bf16", (count, width), np.uint16) if _room_for(count * width * 2) else None
    bits = target[0] if target is not None else empty_on_plain_pages((count, width), np.uint16)
    lengths = np.empty(count, dtype=np.float64)
    message = f"Dequantising the {rows.storage} table"
    try:
        for start in range(0, count, _BLOCK_ROWS):
            block = rows[start : start + _BLOCK_ROWS]
            lengths[start : start + _BLOCK_ROWS] = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
            _scan.bf16_round(np.ascontiguousarray(block), bits[start : start + _BLOCK_ROWS])
            report(min(start + _BLOCK_ROWS, count), count, message)
    except BaseException:
        if target is not None:
            target[1].unlink(missing_ok=True)
        raise
    if target is not None and key is not None:
        bits = cache.keep(target[0], target[1], key, "bf16")
        cache.save_array(key, "lengths", lengths)
    return bits, lengths


def _room_for(size: int) -> bool:
    """True when the cache's disk keeps at least as much free again after ``size`` more bytes."""
    folder = cache.cache_dir()
    probe = folder if folder.exists() else Path.home()
    try:
        return shutil.disk_usage(probe).free > 2 * size
    except OSError:
        return False


def _identity(rows: StoredRows) -> str | None:
    """The cache key of a mapped table: its file, where in the file, its shape and type."""
    raw = rows.raw
    file = getattr(raw, "filename", None)
    if not isinstance(raw, np.memmap) or file is None:
        return None
    return cache.file_key(file, raw.offset, rows.shape, rows.storage)
