"""What a direction needs once per table: kept while the table is open, and on disk for a stored table.

The random baseline and the coordinates' spread each read the whole table; a second direction
on the same table reuses them, and a half-precision table opened again reads them from the cache.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from ..common import cache
from ..tables.embedding_table import EmbeddingTable
from .scores import stored_cache_key

T = TypeVar("T")


class LastTable(Generic[T]):
    """The value made for the table asked about last; a weak reference, so it goes with the table."""

    def __init__(self) -> None:
        self._last: tuple[weakref.ref[EmbeddingTable], T] | None = None

    def get(self, table: EmbeddingTable, make: Callable[[], T]) -> T:
        last = self._last
        if last is not None and last[0]() is table:
            return last[1]
        made = make()
        self._last = (weakref.ref(table), made)
        return made


def cached_array(
    table: EmbeddingTable, name: str, shape: tuple[int, ...], dtype: type, compute: Callable[[], np.ndarray]
) -> np.ndarray:
    """``compute()``, or what it gave the last time for this stored table (checked to be ``shape`` and ``dtype``)."""
    key = stored_cache_key(table)
    found = cache.load_array(key, name, shape, dtype)
    if found is not None:
        return found
    made = compute()
    cache.save_array(key, name, made)
    return made
