"""A table's rows copied sixteen at a time, the copy most quantised types' first pass scans.

One entry in C, ``_quants.copy_groups`` (``quants_group_copy.h``), makes the copy of every kind scanned
this way but Q4_K, Q5_K and Q6_K; each family's header says how its copy is laid out and why.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..common.plain_pages import empty_bytes_on_huge_pages
from .scan_threads import shared_pass


def copy_in_groups(blocks: np.ndarray, kind: int, width: int, quants: Any) -> np.ndarray:
    """``blocks`` (rows of ``kind``'s stored blocks, uint8) copied sixteen rows at a time, the last group padded
    with zero rows, in one pass in C shared by a few threads."""
    out = empty_bytes_on_huge_pages(int(quants.groups_size(kind, blocks.shape[0], width)))
    shared_pass(blocks.shape[0] * width, partial(quants.copy_groups, blocks, kind, width, out))
    return out
