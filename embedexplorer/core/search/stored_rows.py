"""A token table kept as its file stores it (half precision or quantised), giving float32 rows on demand.

A bfloat16 table of 545 M weights is 1.09 GB in its file and 2.2 GB as float32, so
half-precision and quantised tables stay mapped as they are; indexing one gives
float32 rows (exact: every bfloat16, float16 and dequantised number is a float32),
like indexing a float32 table does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# Storage names, as safetensors and GGUF spell them, whose rows the C scan reads in place.
HALF_KINDS = {"BF16": 0, "F16": 1}


def widen_bf16(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16) as float32: bfloat16 is the top half of a float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def widen_f16(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float32)


class StoredRows:
    """Rows of a table in their stored form; ``rows[index]`` gives them as float32.

    Parameters
    ----------
    raw:
        The stored rows, one per table row: uint16 bits for "BF16"/"F16", or the
        bytes of a row's quantised blocks (uint8) for GGUF types such as "Q4_K".
    storage:
        The stored type's name.
    width:
        Numbers per row.
    decode:
        Turns a 2-D selection of ``raw`` into float32 rows of ``width`` numbers.
    """

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(
        self, raw: np.ndarray, storage: str, width: int, decode: Callable[[np.ndarray], np.ndarray]
    ) -> None:
        self.raw = raw
        self.storage = storage
        self.shape = (int(raw.shape[0]), int(width))
        self._decode = decode

    @classmethod
    def half(cls, bits: np.ndarray, storage: str) -> StoredRows:
        """bfloat16 or float16 rows given as their uint16 bits."""
        decode = widen_bf16 if storage == "BF16" else widen_f16
        return cls(bits, storage, bits.shape[1], decode)

    @property
    def half_kind(self) -> int | None:
        """The C scan's code for these rows' type, or None when they must be decoded first."""
        return HALF_KINDS.get(self.storage)

    @property
    def nbytes(self) -> int:
        """Bytes of the stored rows (what a full read of the table reads)."""
        return int(self.raw.nbytes)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> np.ndarray:
        if isinstance(index, tuple):  # rows first, then numbers within them
            head = self[index[0]]
            return head[(slice(None), *index[1:])] if head.ndim == 2 else head[index[1:]]
        picked = self._pick(index)
        if picked.ndim == 1:
            return self._decode(picked[None, :])[0]
        if picked.shape[0] == 0:
            return np.empty((0, self.shape[1]), dtype=np.float32)
        return self._decode(picked)

    def _pick(self, index: Any) -> np.ndarray:
        if isinstance(index, (list, np.ndarray)):
            index = np.asarray(index)
            if index.dtype == np.bool_:
                return self.raw[index]
            return self.raw[index.astype(np.intp, copy=False)]
        return self.raw[index]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = self[:]
        return whole if dtype is None else whole.astype(dtype)

    def blocks(self, rows_per_block: int) -> Any:
        """(start, float32 rows) for consecutive blocks of the table."""
        for start in range(0, self.shape[0], rows_per_block):
            yield start, self[start : start + rows_per_block]


class UnitRows:
    """A stored table's rows scaled to length 1 in float32, computed for the rows asked for.

    Exact work (a query's own row, cosines) uses the screen's float64 ``unit_rows``; this
    view serves what float32 is enough for (the baseline's mean of random pairs, maps).
    """

    ndim = 2

    def __init__(self, rows: StoredRows, screen: Any) -> None:
        self.rows, self.screen = rows, screen
        self.shape = rows.shape

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> np.ndarray:
        if isinstance(index, slice):
            index = np.arange(self.shape[0])[index]
        picked = self.rows[index]
        scale = self.screen.scale[index]
        scale = scale[:, None] if picked.ndim == 2 else scale
        # Rows pointing nowhere (scale 0) are zero, also when they hold infinity or NaN (a damaged
        # quantised block): NaN x 0 would otherwise carry into the baseline and the maps.
        with np.errstate(invalid="ignore", over="ignore"):
            return np.where(scale != 0, picked * scale, np.float32(0.0))  # type: ignore[no-any-return]
