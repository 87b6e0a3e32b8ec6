"""GGUF tables of 32-number blocks (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL) copied sixteen rows at a time.

The copy (``quants_groups32.h``) holds each block's float16 scale (and min) as stored and its codes
arranged for one vector instruction per four numbers of 16 rows: the same bytes as the stored
blocks, scanned at the cache's or memory's bandwidth.  Q4_1, Q5_0, Q5_1 and IQ4_NL get it at open
(instead of a bfloat16 copy, 3-4 times their bytes, which was cached on disk); Q4_0, whose blocks
are scanned as stored, from its second query on (``StoredScreen``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from .scan_threads import shared_pass

# The GGUF types scanned by their groups from the open on, with their codes in ``_quants.c``.
BLOCK32_KINDS = {"Q4_1": 5, "Q5_0": 6, "Q5_1": 7, "IQ4_NL": 8}
Q4_0_KIND = 1
# The kinds whose numbers are d q + m: their grouped scan needs a measured spread (``quants_groups32.h``).
MIN_KINDS = (BLOCK32_KINDS["Q4_1"], BLOCK32_KINDS["Q5_1"])
# Bytes of a group of 16 rows per block, as ``GROUP32_BYTES``: 16 stored blocks' bytes.
_STORED_BLOCK_BYTES = {Q4_0_KIND: 18, 5: 20, 6: 22, 7: 24, 8: 18}


def group_bytes(kind: int) -> int:
    """Bytes of one block of a group of 16 rows (16 times the stored block's)."""
    return 16 * _STORED_BLOCK_BYTES[kind]


def block32_groups(blocks: np.ndarray, kind: int, width: int, quants: Any) -> np.ndarray:
    """The rows of ``blocks`` (uint8, as stored) in groups of sixteen, the last padded with zero rows,
    in one pass in C shared by a few threads."""
    groups = -(-blocks.shape[0] // 16)
    out = np.empty(groups * (width // 32) * group_bytes(kind), dtype=np.uint8)
    shared_pass(blocks.shape[0] * width, partial(quants.block32_groups, blocks, kind, width, out))
    return out
