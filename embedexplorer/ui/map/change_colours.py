"""The colour scale of the map coloured by change, as Qt colours: the engine's scale (core/maps/colours.py)."""

from __future__ import annotations

from PySide6.QtGui import QColor

from ...core.maps.colours import NOT_COMPARED as NOT_COMPARED_HEX
from ...core.maps.colours import change_rgb

NOT_COMPARED = QColor(NOT_COMPARED_HEX)


def change_colour(share: float | None) -> QColor:
    """The colour of a point ``share`` of the way from most changed (0) to unchanged (1); grey for None."""
    return QColor(*change_rgb(share))
