"""A file's SHA-256, computed once per file and kept in the cache (a GPT-2 table file is 500 MB).

Kept by the file's identity (path, size, modification time, inode), so a changed or
replaced file is hashed again; kept in memory too, so a process asks the disk once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .cache import file_key, load_array, save_array
from .errors import FileChangedError
from .files import open_regular

# Read in blocks of this size: the stop is heard and progress told between blocks.
_BLOCK = 8 << 20
_SUFFIX = "sha256"
_known: dict[str, str] = {}
_lock = threading.Lock()

Check = Callable[[], None]  # raises to stop (a stale request's ctx.check)
Progress = Callable[[int, int, str], None]


def file_sha256(
    path: str | Path, check: Check | None = None, progress: Progress | None = None
) -> str:
    """The hex SHA-256 of the file at ``path``; ``check`` may raise to stop between blocks."""
    key = file_key(path, _SUFFIX)
    if key is not None:
        with _lock:
            known = _known.get(key)
        if known is not None:
            return known
        stored = load_array(key, _SUFFIX, (32,), np.uint8)
        if stored is not None:
            digest = bytes(stored).hex()
            with _lock:
                _known[key] = digest
            return digest
    hasher = hashlib.sha256()
    handle, size = open_regular(path, "model file", FileChangedError)
    with handle:
        total, done = max(1, size), 0
        while True:
            block = handle.read(_BLOCK)
            if not block:
                break
            hasher.update(block)
            done += len(block)
            if check is not None:
                check()
            if progress is not None:
                progress(done, total, "Fingerprinting the model file")
    digest = hasher.hexdigest()
    if key is not None:
        save_array(key, _SUFFIX, np.frombuffer(bytes.fromhex(digest), dtype=np.uint8))
        with _lock:
            _known[key] = digest
    return digest
