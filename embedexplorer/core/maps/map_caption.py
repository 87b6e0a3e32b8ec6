"""A map's caption as plain lines: the window's canvas, its pictures and the web page say the same."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from ..text.texts import fixed
from .word_maps import NO_FAMILY, WordMap


def caption_lines(shown: WordMap, model_name: str, hidden: Collection[str] = ()) -> list[str]:
    """What the map shows and keeps, in sentences; the first line starts with ``model_name``."""
    counts = shown.family_counts()
    visible = {name: n for name, n in counts.items() if name not in hidden and n}
    rest = int((shown.family_of == NO_FAMILY).sum())
    between = shown.between_family_cosine
    if rest:
        first = (
            f"{model_name}: {shown.description}, {rest + sum(visible.values()):,} shown; "
            f"{sum(visible.values())} family words in {len(visible)} families"
        )
    else:
        first = f"{model_name}: {sum(visible.values())} words in {len(visible)} families"
    lines = [first, f"{shown.layout.name} map: it keeps {shown.layout.keeps}."]
    if not np.isnan(between):
        # A ratio to a mean that rounds to zero is noise (an untrained table's is about 0).
        ratio = f"ratio {shown.family_ratio:.1f}" if abs(between) >= 0.005 else "no ratio: that is about 0"
        lines.append(
            f"On all {shown.width} numbers: mean cosine within a family {fixed(shown.within_family_cosine, 2)}, "
            f"between families {fixed(between, 2)} ({ratio})."
        )
    multi = [n for n in shown.notes if "tokens" in n]
    if multi:
        lines.append(f"{len(multi)} word(s) were not single tokens: see the notes below the map.")
    return lines
