"""The first pass over IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M tables: their rows sixteen at a time.

These types keep eight numbers behind one grid index, so their blocks cannot be scanned in place
cheaply; until now they were rounded once to a bfloat16 copy, 2 bytes a number (4-6 times their
stored bytes, a scan 4-6 times one read of them). Where the CPU has AVX-512 VNNI the table is
instead copied, when it opens, into planes of 2-bit grid codes and minus bits with the stored
scales as small integers (``quants_iq.h``: 0.30-0.45 bytes a number, no disk cache needed), which
``_quants.iq_scores`` scans exactly as the integer scan of the other GGUF types (same
``error_bound``). Other builds keep the bfloat16 copy.
"""

from __future__ import annotations

import numpy as np

from ..common import cache
from ..common.progress import ProgressCallback
from .scan_threads import shared_pass
from .stored_rows import StoredRows
from .stored_search import GRID_KINDS, StoredScreen, _checked, _quantised_lengths

try:
    from . import _quants
except ImportError:  # built without a C compiler
    _quants = None  # type: ignore[assignment]


class GridGroupsScreen(StoredScreen):
    """A grid type's rows as stored (``bits``) and in groups of sixteen (``groups``: ``iq_groups``'s copy,
    made at open), scanned against the query as 16-bit integers; by the stored blocks in float32 for a
    query too large or small for that, or a build without VNNI."""

    def __init__(
        self, stored: np.ndarray, groups: np.ndarray, kind: int, lengths: np.ndarray, width: int, notes: tuple[str, ...]
    ) -> None:
        super().__init__(stored, kind, lengths, 0.0, notes, quantised_width=width, groups=groups)
        self.integer = True
        self.query_rounding = float(_quants.QUERY_ROUNDING)

    def scores(self, query: np.ndarray) -> np.ndarray:
        if self.cache_file is not None:
            self.cache_file.check()  # cut short by another program: a message, not SIGBUS
        query = np.ascontiguousarray(query, dtype=np.float32)
        out = np.empty(self.shape[0], dtype=np.float32)

        def scan(progress: np.ndarray) -> None:
            _quants.iq_scores(self.groups, self.bits, self.kind, query, self.scale, out, progress)

        shared_pass(self.shape[0] * self.shape[1], scan)
        return out


def grid_groups(blocks: np.ndarray, kind: int, width: int) -> np.ndarray:
    """Rows of a grid type copied sixteen at a time (``quants_iq.h``; the last group padded with zero
    rows), in one pass in C shared by a few threads."""
    groups = -(-blocks.shape[0] // 16)
    out = np.empty(groups * (width // 256) * _quants.iq_group_bytes(kind), dtype=np.uint8)
    shared_pass(blocks.shape[0] * width, lambda progress: _quants.iq_groups(blocks, kind, width, out, progress))
    return out


def grid_screen(
    rows: StoredRows, key: str | None, report: ProgressCallback, notes: list[str]
) -> GridGroupsScreen | None:
    """The grouped first pass for a grid type's ``rows`` where this build scans it, else None."""
    kind = GRID_KINDS.get(rows.storage)
    if kind is None or _quants is None or not _quants.grouped_scan() or not rows.raw.flags.c_contiguous:
        return None
    count, width = rows.shape
    lengths = _checked(cache.load_array(key, "lengths", (count,), np.float64), rows, None, key, notes)
    if lengths is None:
        lengths = _quantised_lengths(rows, report)
        cache.save_array(key, "lengths", lengths)
    report(0, 1, "Arranging the rows sixteen at a time")
    groups = grid_groups(rows.raw, kind, width)
    return GridGroupsScreen(rows.raw, groups, kind, lengths, width, tuple(notes))
