"""A map coloured by vocabulary health: each point by its token's score, on the map's change scale.

The map already colours points by a number per token (``compare.map_change.MapChange``);
health hands it the negated score, so the scale's red end is the most untrained-looking
rows (a score of twice the threshold or more) and its blue end the rows scoring 0 or less.
"""

from __future__ import annotations

from ..compare.map_change import MapChange
from .report import HealthReport

HEALTH = "health"


def health_colouring(report: HealthReport) -> MapChange:
    """The map's colouring by ``report``'s scores (a point of several tokens takes their mean)."""
    values = dict(enumerate((-report.score).tolist()))
    top = 2 * report.threshold
    caption = (
        f"Colour: vocabulary health score of {report.model} (red: {top:g} or more, the most untrained-looking; "
        f"blue: 0 or less; the threshold {report.threshold:g} is half way)"
    )
    legend = (f"score >= {top:g}", f"score {report.threshold:g} (threshold)", "score <= 0", "no score")
    return MapChange(
        HEALTH, values, -top, 0.0, report.model, "", 0, caption=caption, legend=legend, heading="Health score"
    )
