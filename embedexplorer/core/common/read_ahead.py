"""Map a memory-mapped table's pages in on a thread of its own, while the tokenizer loads.

The first scan of a mapped table in a new process takes a page fault every 64 KB (the
kernel maps the page cache's pages in as they are first read): 17,000 faults for a
Qwen2-sized bfloat16 table, 0.05-0.07 s of its first neighbour query, taken after the
tokenizer was ready. ``MADV_POPULATE_READ`` (Linux 5.14) maps them all in one call per
chunk, and here it runs while the process would otherwise wait for its tokenizer. A page
the file no longer has is an error of the call (EFAULT), never a SIGBUS; a kernel without
the call, or another system, maps the pages as the scan reads them, as before.
"""

from __future__ import annotations

import _thread
import sys

import numpy as np

# Not named by Python's mmap module (3.11); Linux's value for every architecture.
MADV_POPULATE_READ = 22
# Bytes mapped in per call: the call holds the interpreter's lock, a millisecond or two per chunk.
_CHUNK = 16 << 20


def map_in_background(array: np.ndarray) -> bool:
    """Start mapping in the pages behind ``array`` (a numpy memmap) on a thread; False when not done here."""
    mapping = getattr(array, "_mmap", None)  # numpy.memmap keeps its mmap.mmap object here
    if mapping is None or not sys.platform.startswith("linux") or getattr(mapping, "closed", False):
        return False
    _thread.start_new_thread(_map_in, (mapping,))  # no start handshake: the caller goes on at once
    return True


def _map_in(mapping: object) -> None:
    try:
        size = len(mapping)  # type: ignore[arg-type]
        for start in range(0, size, _CHUNK):
            mapping.madvise(MADV_POPULATE_READ, start, min(_CHUNK, size - start))  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        pass  # an older kernel (EINVAL), a file cut short (EFAULT) or a closed map: the scan maps as it reads
