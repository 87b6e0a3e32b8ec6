"""Where the large arrays live: the copies scanned sixteen rows at a time ask for huge pages, others do not.

Checked in the kernel's own account of the process's maps (``/proc/self/smaps``): a map advised with
``MADV_HUGEPAGE`` carries the ``hg`` flag whether or not the kernel had huge pages to give.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer.core.common.plain_pages import empty_bytes_on_huge_pages, empty_on_plain_pages
from embedexplorer.core.search import _quants, stored_search
from embedexplorer.core.search.group_copy import copy_in_groups

from ..gguf_fixture import random_blocks

linux_maps = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/proc/self/smaps").exists(), reason="reads Linux's smaps"
)


def map_flags(array: np.ndarray) -> list[str]:
    """The VmFlags of the map holding ``array``'s first byte."""
    address = array.ctypes.data
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and all(c in "0123456789abcdef-" for c in head):
            start, end = (int(x, 16) for x in head.split("-"))
            inside = start <= address < end
        elif inside and line.startswith("VmFlags:"):
            return line.split()[1:]
    raise AssertionError(f"no map holds address {address:#x}")


@linux_maps
def test_a_large_buffer_starts_on_a_huge_page_and_asks_for_them() -> None:
    size = 5 * (2 << 20) + 12_345  # not a whole number of huge pages
    buffer = empty_bytes_on_huge_pages(size)
    assert buffer.shape == (size,) and buffer.dtype == np.uint8 and buffer.flags.writeable
    assert buffer.ctypes.data % (2 << 20) == 0
    assert not buffer.any()  # zero-filled, as the copies' padding rows rely on
    buffer[-1] = 7  # the last byte is inside the map
    assert "hg" in map_flags(buffer)
    assert "hg" not in map_flags(empty_on_plain_pages((size,), np.uint8))


@linux_maps
def test_a_small_buffer_stays_on_ordinary_pages() -> None:
    buffer = empty_bytes_on_huge_pages(100_000)
    assert buffer.shape == (100_000,) and not buffer.any()
    assert "hg" not in map_flags(buffer)


@linux_maps
def test_the_grouped_copy_of_a_table_asks_for_huge_pages_and_scores_the_same() -> None:
    width, count = 768, 24_000  # an IQ2_XXS copy of 5.0 MB
    stored = random_blocks(count, width, Q.IQ2_XXS, np.random.default_rng(3), (0.002, 0.05)).reshape(count, -1)
    kind = stored_search.GRID_KINDS["IQ2_XXS"]
    groups = copy_in_groups(stored, kind, width, _quants)
    assert "hg" in map_flags(groups)
    plain = empty_on_plain_pages(groups.shape, np.uint8)
    plain[:] = groups
    lengths = np.ones(count)
    query = np.random.default_rng(4).standard_normal(width).astype(np.float32)
    on_huge = stored_search.StoredScreen(stored, kind, lengths, 0.0, quantised_width=width, groups=groups)
    on_plain = stored_search.StoredScreen(stored, kind, lengths, 0.0, quantised_width=width, groups=plain)
    np.testing.assert_array_equal(on_huge.scores(query), on_plain.scores(query))
