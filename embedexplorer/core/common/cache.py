"""Where the engine keeps what it worked out about a model file, so the next open skips the work.

Entries are keyed by the file's identity (path, size, modification time, inode) and
what was read from it, so a changed or replaced file never finds a stale entry.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
from pathlib import Path

import numpy as np

from .files import FileState, atomic_write_bytes, open_own_file, read_own_file

APP_NAME = "EmbedExplorer"
# Bump when the layout of an entry changes, so old entries are never read as new ones.
CACHE_FORMAT = 1
# Entries up to this size are copied into memory when read: a file cut short while it is
# open then costs nothing (a mapped one would end the process with SIGBUS).  Larger ones
# (the first-pass rows of a quantised table) stay mapped and are checked before each read.
IN_MEMORY_LIMIT = 64 * 1024 * 1024


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
    """A cached array of exactly this shape and type; None when there is none.

    Small entries come back as a copy in memory, large ones memory-mapped read-only
    (``mapped_state`` gives their FileState, to check before reading).  A symbolic link,
    a FIFO or a file of the wrong size is no entry: it is never followed nor waited on.
    """
    if key is None:
        return None
    path = cache_dir() / f"{key}.{suffix}"
    expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if expected <= IN_MEMORY_LIMIT:
        data = read_own_file(path, expected)
        if data is None or len(data) != expected:
            return None
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != expected:
            return None
        return np.memmap(path, dtype=dtype, mode="r", shape=shape)
    except (OSError, ValueError):
        return None


def npy_array(data: bytes, shape: tuple[int, ...], dtype: type) -> np.ndarray | None:
    """The array in ``data`` (numpy's .npy format) when it is exactly ``shape`` of ``dtype``; else None.

    The header is read and checked before anything is allocated: a file that claims
    (10^11, 2) is refused, not met with "out of memory", and a .npz, a pickle or text
    under the name is no entry either.  Never unpickles.
    """
    from numpy.lib import format as npy

    stream = io.BytesIO(data)
    try:
        version = npy.read_magic(stream)
        if version == (1, 0):
            found, fortran, kind = npy.read_array_header_1_0(stream, max_header_size=64 * 1024)
        elif version in ((2, 0), (3, 0)):
            found, fortran, kind = npy.read_array_header_2_0(stream, max_header_size=64 * 1024)
        else:
            return None
    except (ValueError, OSError, EOFError, SyntaxError):
        return None
    wanted = np.dtype(dtype)
    if tuple(found) != tuple(shape) or fortran or kind != wanted or kind.hasobject:
        return None
    body = data[stream.tell() :]
    if len(body) != int(np.prod(shape, dtype=np.int64)) * wanted.itemsize:
        return None
    return np.frombuffer(body, dtype=wanted).reshape(shape).copy()


def mapped_state(array: np.ndarray) -> FileState | None:
    """The size and time of the file behind a mapped cache entry, or None for one in memory."""
    name = getattr(array, "filename", None)
    if not isinstance(array, np.memmap) or name is None:
        return None
    try:
        return FileState(name)
    except OSError:
        return None


def discard(key: str | None, *suffixes: str) -> None:
    """Remove entries found wrong (they are made again); a link is removed, never what it names."""
    if key is None:
        return
    for suffix in suffixes:
        try:
            (cache_dir() / f"{key}.{suffix}").unlink(missing_ok=True)
        except OSError:
            pass


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

    Returns the array and its temporary path; ``keep`` renames it into place.  The
    temporary is opened without following links: one planted under its name is replaced.
    """
    if key is None:
        return None
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{key}.{suffix}.{os.getpid()}.tmp"
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        with open_own_file(temporary, fresh=True) as handle:
            handle.truncate(size)
            array = np.memmap(handle, dtype=dtype, mode="r+", shape=shape)
        return array, temporary
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
