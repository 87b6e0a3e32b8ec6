"""Where the engine keeps what it worked out about a model file, so the next open skips the work.

Entries are keyed by the file's identity (path, size, modification time, inode) and
what was read from it, so a changed or replaced file never finds a stale entry.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np

from .files import atomic_write_bytes

APP_NAME = "EmbedExplorer"
# Bump when the layout of an entry changes, so old entries are never read as new ones.
CACHE_FORMAT = 1


def cache_dir() -> Path:
    """The user's cache folder for EmbedExplorer (``EMBEDEXPLORER_CACHE_DIR`` overrides it).

    The platform's cache location, under the same name as the settings: on Linux
    ``$XDG_CACHE_HOME/EmbedExplorer`` (``~/.cache/EmbedExplorer``), on macOS
    ``~/Library/Caches/EmbedExplorer``, on Windows ``%LOCALAPPDATA%\\EmbedExplorer\\cache``.
    """
    override = os.environ.get("EMBEDEXPLORER_CACHE_DIR")
    if override:
        return Path(override)
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / APP_NAME / "cache"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / APP_NAME
    return Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache") / APP_NAME


def file_key(file: Path | str, *parts: object) -> str | None:
    """A name for what was computed from ``file`` (plus ``parts``), or None when the file cannot be read."""
    try:
        path = Path(file).resolve()
        info = path.stat()
    except (OSError, RuntimeError):
        return None
    identity = "|".join(str(p) for p in (CACHE_FORMAT, path, info.st_size, info.st_mtime_ns, info.st_ino, *parts))
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def load_array(key: str | None, suffix: str, shape: tuple[int, ...], dtype: type) -> np.ndarray | None:
    """A cached array of exactly this shape and type, memory-mapped read-only; None when there is none."""
    if key is None:
        return None
    path = cache_dir() / f"{key}.{suffix}"
    expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    try:
        if path.stat().st_size != expected:
            return None
        if expected == 0:
            return np.zeros(shape, dtype=dtype)
        return np.memmap(path, dtype=dtype, mode="r", shape=shape)
    except (OSError, ValueError):
        return None


def save_array(key: str | None, suffix: str, array: np.ndarray) -> None:
    """Keep ``array`` for the next open; a cache that cannot be written only costs time."""
    if key is None:
        return
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(folder / f"{key}.{suffix}", np.ascontiguousarray(array).tobytes())
    except OSError:
        pass


def new_array_file(
    key: str | None, suffix: str, shape: tuple[int, ...], dtype: type
) -> tuple[np.ndarray, Path] | None:
    """A writable file-backed array to fill block by block (big entries never sit in memory whole).

    Returns the array and its temporary path; ``keep`` renames it into place.
    """
    if key is None:
        return None
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{key}.{suffix}.{os.getpid()}.tmp"
        return np.memmap(temporary, dtype=dtype, mode="w+", shape=shape), temporary
    except (OSError, ValueError):
        return None


def keep(array: np.ndarray, temporary: Path, key: str, suffix: str) -> np.ndarray:
    """Flush a filled array and move it into place; returns it mapped read-only."""
    target = cache_dir() / f"{key}.{suffix}"
    try:
        if isinstance(array, np.memmap):
            array.flush()
        os.replace(temporary, target)
    except OSError:
        temporary.unlink(missing_ok=True)
        return array
    return np.memmap(target, dtype=array.dtype, mode="r", shape=array.shape)
