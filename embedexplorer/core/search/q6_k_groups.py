"""A Q6_K table's rows copied sixteen at a time for the grouped scan (``quants_groups_q6k.h``)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from .scan_threads import shared_pass

# The copy's 64-byte loads each stay on one cache line when it starts on one.
_LINE = 64


def q6_k_groups(blocks: np.ndarray, width: int, quants: Any) -> np.ndarray:
    """Q6_K rows copied sixteen at a time (3392 bytes per 3360 stored, the last group padded with zero
    rows), each number's six bits put together once, in one pass in C shared by a few threads."""
    size = -(-blocks.shape[0] // 16) * (width // 256) * quants.Q6K_GROUP_BLOCK_BYTES
    spare = np.empty(size + _LINE, dtype=np.uint8)
    skip = -spare.ctypes.data % _LINE
    out = spare[skip : skip + size]
    shared_pass(blocks.shape[0] * width, partial(quants.q6_k_groups, blocks, width, out))
    return out
