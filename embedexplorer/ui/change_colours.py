"""The colour scale of the map coloured by change: red for the most changed, through pale yellow, to blue."""

from __future__ import annotations

from PySide6.QtGui import QColor

# ColorBrewer's RdYlBu ends and middle: read apart by most colour-blind eyes too.
CHANGED = (215, 48, 39)
MIDDLE = (254, 224, 144)
KEPT = (69, 117, 180)
NOT_COMPARED = QColor(150, 150, 150)


def change_colour(share: float | None) -> QColor:
    """The colour of a point ``share`` of the way from most changed (0) to unchanged (1); grey for None."""
    if share is None:
        return QColor(NOT_COMPARED)
    start, end, t = (CHANGED, MIDDLE, share * 2) if share < 0.5 else (MIDDLE, KEPT, share * 2 - 1)
    return QColor(*(round(a + (b - a) * t) for a, b in zip(start, end, strict=True)))
