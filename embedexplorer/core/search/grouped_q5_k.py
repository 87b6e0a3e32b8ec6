"""A Q5_K table's first pass: its rows copied sixteen at a time when it opens, scanned by AVX-512 VNNI.

The copy (``quants_groups_q5k.h``) is 2880 bytes per 2816 stored, made in C on every core in one pass
that also measures each row's spread (the integer scan's bound needs it, as Q4_K's does).  It takes the
place of the bfloat16 copy other quantised types get: a third of its bytes, and nothing on disk.  The
first query already reads it, so a one-shot answer is as fast as the later ones.  Where the CPU has no
VNNI the table keeps the bfloat16 copy (``stored_search.screen_for_stored``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..common.plain_pages import empty_bytes_on_huge_pages
from .scan_threads import shared_pass

try:
    from . import _quants
except ImportError:  # built without a C compiler: Q5_K tables keep the bfloat16 copy
    _quants = None  # type: ignore[assignment]


def q5_k_groups(blocks: np.ndarray, width: int, quants: Any = _quants) -> tuple[np.ndarray, np.ndarray]:
    """Q5_K rows copied sixteen at a time (the last group padded with zero rows, on page-aligned memory),
    and each row's sum over its numbers of (|d s| q + |dmin m|)^2 in float64, from one pass in C."""
    groups = -(-blocks.shape[0] // quants.GROUP_ROWS)
    out = empty_bytes_on_huge_pages(groups * (width // 256) * quants.Q5_K_GROUP_BLOCK_BYTES)
    spreads = np.empty(blocks.shape[0], dtype=np.float64)
    shared_pass(blocks.shape[0] * width, partial(quants.q5_k_groups, blocks, width, out, spreads))
    return out, spreads
