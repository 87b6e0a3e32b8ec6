"""The colour scale of the map coloured by change, as Qt colours: the engine's scale (core/maps/colours.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor

from ...core.maps.colours import NOT_COMPARED as NOT_COMPARED_HEX
from ...core.maps.colours import change_rgb

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.map_change import MapChange

NOT_COMPARED = QColor(NOT_COMPARED_HEX)

# The scale's samples a key shows: its most changed end, its middle, its unchanged end, and grey (no value).
KEY_SHARES = (0.0, 0.5, 1.0, None)
_COMPARISON_KEY = ("most changed", "half way", "unchanged", "not in B")


def change_colour(share: float | None) -> QColor:
    """The colour of a point ``share`` of the way from most changed (0) to unchanged (1); grey for None."""
    return QColor(*change_rgb(share))


def change_key(change: MapChange) -> list[tuple[QColor, str]]:
    """What a key says of the map coloured by ``change``: each sample's colour and what it means."""
    texts = change.legend or _COMPARISON_KEY
    return [(change_colour(share), text) for share, text in zip(KEY_SHARES, texts, strict=True)]
