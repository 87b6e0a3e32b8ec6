"""Finished t-SNE and UMAP maps on disk, one file per model, word set, projection and seed."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import numpy as np

from ..common.cache import cache_dir, npy_array
from ..common.files import atomic_write_bytes, read_own_file
from ..tables.embedding_table import EmbeddingTable
from .word_sets import WordSet

# Rows sampled for a table's fingerprint: enough that different weights of the same name
# (a fine-tuned copy, a re-download) differ, few enough to read in a millisecond.
_FINGERPRINT_ROWS = 257
_LIBRARIES = {"tsne": "openTSNE", "umap": "umap-learn"}
# numpy's .npy header is 128 bytes for an array like ours; room for any version of it.
_NPY_HEADER_LIMIT = 64 * 1024


def default_cache_dir() -> Path:
    """Where maps are kept: ``maps`` in the user's EmbedExplorer cache folder."""
    return cache_dir() / "maps"


def table_fingerprint(table: EmbeddingTable) -> str:
    """The model's name, shape and a sample of its numbers: changes when the table does."""
    rows = table.rows
    count = rows.shape[0]
    picked = np.unique(np.linspace(0, count - 1, num=min(_FINGERPRINT_ROWS, count)).astype(np.int64))
    digest = hashlib.sha256(f"{table.name}\0{rows.shape}\0{rows.dtype}".encode())
    digest.update(np.ascontiguousarray(rows[picked]).tobytes())
    return digest.hexdigest()[:32]


def _library_version(method: str) -> str:
    from importlib import metadata  # 15 ms to import: only when a cached map is keyed

    try:
        return metadata.version(_LIBRARIES[method])
    except (KeyError, metadata.PackageNotFoundError):
        return "?"


class MapCache:
    """Coordinates of finished maps, found again by what made them."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_cache_dir()

    def key(self, table: EmbeddingTable, words: WordSet, method: str, seed: int) -> str:
        parts = (table_fingerprint(table), words.key, method, str(seed), _library_version(method))
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.npy"

    def load(self, key: str, rows: int) -> np.ndarray | None:
        """The stored coordinates, or None when there are none or they do not check out."""
        return self.checked(key, rows)[0]

    def checked(self, key: str, rows: int) -> tuple[np.ndarray | None, str]:
        """The stored coordinates (or None) and a note when an entry was there but did not check out.

        Such an entry (cut short, another file under its name, a header claiming a shape it
        does not hold, numbers that are not finite) is removed and the map made again: a cache
        is never trusted and never fatal.
        """
        path = self.path(key)
        if not os.path.lexists(path):
            return None, ""
        # Never through a link, never waiting on a FIFO, never more than the map's own size.
        data = read_own_file(path, rows * 2 * 8 + _NPY_HEADER_LIMIT)
        coords = None if data is None else npy_array(data, (rows, 2), np.float64)
        if coords is not None and np.isfinite(coords).all():
            return coords, ""
        try:
            path.unlink()  # a link goes, never what it names
        except OSError:
            pass
        note = f"The cached map {path.name} did not check out (not this map's {rows:,} points), so it was made again."
        return None, note

    def store(self, key: str, coords: np.ndarray) -> bool:
        """Keep ``coords``; False (and nothing half-written) when the folder cannot be written."""
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(coords, dtype=np.float64), allow_pickle=False)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.path(key), buffer.getvalue())
        except OSError:
            return False
        return True
