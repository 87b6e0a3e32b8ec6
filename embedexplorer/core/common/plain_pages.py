"""Large arrays on the memory pages that suit how they are used.

numpy asks Linux for transparent huge pages on big arrays.  Where the kernel
compacts memory to find them on the first write (``defrag=madvise``, the usual
setting), filling GPT-2's 154 MB unit table took 0.16 s instead of 0.11 s and
its 77 MB of bfloat16 rows 0.17 s instead of 0.04 s; reading them later was no
faster.  An anonymous memory map gets ordinary pages, on every platform.

The copies of quantised rows sixteen at a time are another matter: a query
scans one in a fraction of a millisecond, reading each byte once, so a miss in
the address cache per 4 KB page shows.  On huge pages (three processes each, in
turns with ordinary ones), one query over one plain read of the stored bytes went
from 1.28x-1.35x to 1.21x-1.27x (Qwen2-7B-sized IQ1_S), 1.38x-1.39x to
1.30x-1.32x (IQ2_XXS), 0.93x to 0.83x-0.86x (TQ2_0), 0.88x-0.93x to 0.84x-0.90x
(Q2_K); GPT-2-shaped, IQ2_XXS 1.48x to 1.37x and Q2_K 1.05x to 0.99x (medians of
six), the others alike.  Making a copy took as long or less (TQ2_0 0.014-0.024 s
against 0.051-0.056), but for a process's first large one while the kernel
gathers the pages (IQ1_S 0.29-0.39 s against 0.22-0.27).
"""

from __future__ import annotations

import mmap

import numpy as np

_HUGE_PAGE = 2 << 20


def empty_on_plain_pages(shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised (zero-filled) writable array like ``np.empty``, backed by an anonymous map."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size == 0:
        return np.empty(shape, dtype=dtype)
    # The array keeps the map alive; the pages go back to the system when it is collected.
    return np.frombuffer(mmap.mmap(-1, size), dtype=dtype).reshape(shape)


def empty_bytes_on_huge_pages(size: int) -> np.ndarray:
    """``size`` zero bytes starting on a 2 MB boundary of a private map that asks for transparent huge pages.

    Where the platform has none to ask for (not Linux), or the array is small, ordinary pages.
    """
    if size < 2 * _HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
        return empty_on_plain_pages((size,), np.uint8)
    # One huge page more than asked, never touched past the part used: only its address space is taken.
    mapping = mmap.mmap(-1, size + _HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    whole = np.frombuffer(mapping, dtype=np.uint8)
    skip = -whole.ctypes.data % _HUGE_PAGE
    try:  # the whole huge pages only: the tail stays on small ones, holding no more memory than it uses
        mapping.madvise(mmap.MADV_HUGEPAGE, skip, size // _HUGE_PAGE * _HUGE_PAGE)
    except OSError:  # a kernel built without them: ordinary pages, as asked for nothing
        pass
    return whole[skip : skip + size]
