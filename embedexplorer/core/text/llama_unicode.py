"""Characters as llama.cpp classifies them (its src/unicode.cpp), from its own tables.

llama.cpp's tables come from one Unicode version and its own reading of it (a lowercase
map, a "NFD" that keeps only the first code point, whitespace as a fixed set), so the
engine reads the same tables instead of Python's unicodedata.
"""

from __future__ import annotations

from functools import lru_cache
from typing import cast

import numpy as np

from . import llama_unicode_data as data

UNDEFINED, NUMBER, LETTER, SEPARATOR, ACCENT_MARK, PUNCTUATION, SYMBOL, CONTROL = 1, 2, 4, 8, 16, 32, 64, 128
CATEGORIES = 0xFF
WHITESPACE, LOWERCASE = 0x100, 0x200
MAX_CODEPOINT = 0x110000


@lru_cache(maxsize=1)
def flag_table() -> np.ndarray:
    """Flags of every code point, as llama.cpp's unicode_cpt_flags_array builds them."""
    starts = np.array(data.RANGE_FLAGS[0::2], dtype=np.int64)
    values = np.array(data.RANGE_FLAGS[1::2], dtype=np.uint16)
    table = np.repeat(values[:-1], np.diff(starts))
    table[list(data.WHITESPACE)] |= WHITESPACE
    table[list(data.LOWERCASE[1::2])] |= LOWERCASE
    return table


def flags_of(codepoints: list[int]) -> list[int]:
    """The flags of each code point (UNDEFINED past the last one), in one vectorised look-up."""
    if not codepoints:
        return []
    points = np.array(codepoints, dtype=np.int64)
    table = flag_table()
    out = np.full(points.shape, UNDEFINED, dtype=np.uint16)
    inside = points < MAX_CODEPOINT
    out[inside] = table[points[inside]]
    return cast(list[int], out.tolist())


@lru_cache(maxsize=1)
def _lowercase() -> dict[int, int]:
    pairs = data.LOWERCASE
    return dict(zip(pairs[0::2], pairs[1::2], strict=True))


def to_lower(codepoint: int) -> int:
    return _lowercase().get(codepoint, codepoint)


@lru_cache(maxsize=1)
def _nfd_ranges() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    triples = np.array(data.NFD_RANGES, dtype=np.int64).reshape(-1, 3)
    return triples[:, 0], triples[:, 1], triples[:, 2]


def nfd_first(codepoints: list[int]) -> list[int]:
    """llama.cpp's unicode_cpts_normalize_nfd: each code point becomes the first of its decomposition."""
    if not codepoints:
        return []
    firsts, lasts, replacements = _nfd_ranges()
    points = np.array(codepoints, dtype=np.int64)
    index = np.searchsorted(firsts, points, side="right") - 1
    hit = (index >= 0) & (points <= lasts[np.maximum(index, 0)])
    return np.where(hit, replacements[np.maximum(index, 0)], points).tolist()
