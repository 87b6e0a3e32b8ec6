"""The colour scale of the map coloured by change: red for the most changed, through yellow, to blue."""

from __future__ import annotations

from PySide6.QtGui import QColor

# ColorBrewer's seven-class RdYlBu, read apart by most colour-blind eyes too. Mixing its two ends
# alone would pass through grey, which is the colour of a token that was not compared.
STOPS = ("#d73027", "#fc8d59", "#fee090", "#ffffbf", "#e0f3f8", "#91bfdb", "#4575b4")
NOT_COMPARED = QColor(150, 150, 150)


def change_colour(share: float | None) -> QColor:
    """The colour of a point ``share`` of the way from most changed (0) to unchanged (1); grey for None."""
    if share is None:
        return QColor(NOT_COMPARED)
    where = min(1.0, max(0.0, share)) * (len(STOPS) - 1)
    low = min(int(where), len(STOPS) - 2)
    start, end, t = QColor(STOPS[low]), QColor(STOPS[low + 1]), where - low
    pairs = ((start.red(), end.red()), (start.green(), end.green()), (start.blue(), end.blue()))
    return QColor(*(round(a + (b - a) * t) for a, b in pairs))
