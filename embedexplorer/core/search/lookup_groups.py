"""IQ4_XS, TQ2_0 and MXFP4 tables copied sixteen rows at a time for their first pass (``quants_lookup.h``).

Their numbers are codes into small tables of values (IQ4_NL's 16 values, MXFP4's e2m1 values) or
2-bit codes (TQ2_0): the copy keeps the codes as stored, four bytes of each of 16 rows to a 64-byte
load, so the AVX-512 VNNI scan reads about the stored bytes once (a bfloat16 copy was 4-8 times as
many).  It is made when the table opens, in C on every core, instead of that bfloat16 copy.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..common.plain_pages import empty_on_plain_pages
from .scan_threads import shared_pass

# GGUF types scanned through this copy, with ``_quants.c``'s code for each.
LOOKUP_KINDS = {"IQ4_XS": 11, "TQ2_0": 12, "MXFP4": 13}


def lookup_groups(blocks: np.ndarray, width: int, kind: int, quants: Any) -> np.ndarray:
    """``blocks`` (rows of ``kind``'s stored blocks) copied sixteen rows at a time, the last group padded
    with zero rows, in one pass in C shared by a few threads."""
    size = int(quants.lookup_groups_size(kind, blocks.shape[0], width))
    out = empty_on_plain_pages((size,), np.uint8)
    shared_pass(blocks.shape[0] * width, partial(quants.lookup_groups, blocks, kind, width, out))
    return out
