"""How much each compared token changed, as the map colours it: one number a token id, a scale, a sentence.

The map follows this (the state's ``map_change``) without knowing about comparisons: a
point's share on the scale is 0 for the most changed and 1 for unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from .comparison import Comparison

OVERLAP = "overlap"
ROW_COSINE = "row cosine"
MEASURES = (OVERLAP, ROW_COSINE)


@dataclass(frozen=True, eq=False)  # compared by identity: a new colouring is a new object
class MapChange:
    """Each compared token's change (by id of table A), what it measures and between which tables."""

    measure: str  # OVERLAP or ROW_COSINE
    values: dict[int, float]
    low: float  # the value drawn as the most changed
    high: float  # the value drawn as unchanged
    a: str
    b: str
    k: int
    # Another scale shown the same way (vocabulary health): its own caption, and the legend's texts
    # for the scale's two ends, its middle and a token without a value; empty for a comparison.
    caption: str = ""
    legend: tuple[str, ...] = ()
    heading: str = ""  # the key's title beside the map: what the colours are ("Health score")

    def share(self, value: float) -> float:
        """Where ``value`` sits on the scale, from 0 (most changed) to 1 (unchanged)."""
        if self.high <= self.low:
            return 1.0
        return min(1.0, max(0.0, (value - self.low) / (self.high - self.low)))

    def value_of(self, ids: tuple[int, ...]) -> float | None:
        """A point's value: its token's, the mean of its tokens' for a word of several; None if one was not compared."""
        found = [self.values.get(i) for i in ids]
        if not found or any(v is None for v in found):
            return None
        return sum(v for v in found if v is not None) / len(found)

    def key_heading(self) -> str:
        """The title of the key that lists the scale's colours beside the map (short: the key is narrow)."""
        return self.heading or "Change, A to B"

    def sentence(self) -> str:
        """What the colours mean, for the map's caption."""
        if self.caption:
            return self.caption
        if self.measure == OVERLAP:
            what = f"neighbours kept of k = {self.k} (red 0, blue {self.k})"
        else:
            what = f"cosine of a token's two rows (red {self.low:.3f}, blue {self.high:.3f})"
        return f"Colour: change from A ({self.a}) to B ({self.b}): {what}; grey: not compared (not in B)"


def map_change_of(comparison: Comparison, measure: str = OVERLAP) -> MapChange:
    """The per-token values of ``comparison`` by ``measure``; the row cosine needs rows of one width."""
    ids = comparison.ids_a.tolist()
    if measure == ROW_COSINE and comparison.row_cosine is not None:
        cosines = comparison.row_cosine
        low = float(cosines.min())
        values = dict(zip(ids, cosines.tolist(), strict=True))
        return MapChange(ROW_COSINE, values, min(low, 0.999), 1.0, comparison.a, comparison.b, comparison.k)
    values = dict(zip(ids, comparison.overlap.astype(float).tolist(), strict=True))
    return MapChange(OVERLAP, values, 0.0, float(comparison.k), comparison.a, comparison.b, comparison.k)
