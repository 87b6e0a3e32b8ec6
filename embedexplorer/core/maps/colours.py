"""The families' colours, as hex text: the window, its pictures and the web page draw with the same ones."""

from __future__ import annotations

# Colour-blind-safe first (Okabe-Ito), then distinct extras for custom families.
FAMILY_COLOURS = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # green
    "#D55E00",  # vermillion
    "#CC79A7",  # purple-pink
    "#8C6D31",  # brown
    "#56B4E9",  # sky blue
    "#7F7F7F",  # grey
    "#BCBD22",
    "#17BECF",
)


# The selected token's star and name and its nearest rows' rings: on a light plot, and on a dark one.
ACCENT_ON_LIGHT, ACCENT_ON_DARK = "#C00060", "#FFB000"


def family_colour_hex(index: int) -> str:
    """The colour of family ``index`` (the list repeats past its end)."""
    return FAMILY_COLOURS[index % len(FAMILY_COLOURS)]


# The map coloured by change: ColorBrewer's seven-class RdYlBu, from the most changed (red) through
# yellow to unchanged (blue), read apart by most colour-blind eyes too. Mixing its two ends alone
# would pass through grey, which is the colour of a token that was not compared.
CHANGE_STOPS = ("#d73027", "#fc8d59", "#fee090", "#ffffbf", "#e0f3f8", "#91bfdb", "#4575b4")
NOT_COMPARED = "#969696"


def change_rgb(share: float | None) -> tuple[int, int, int]:
    """The colour of a point ``share`` of the way from most changed (0) to unchanged (1); grey for None."""
    if share is None:
        return _rgb(NOT_COMPARED)
    where = min(1.0, max(0.0, share)) * (len(CHANGE_STOPS) - 1)
    low = min(int(where), len(CHANGE_STOPS) - 2)
    start, end, t = _rgb(CHANGE_STOPS[low]), _rgb(CHANGE_STOPS[low + 1]), where - low
    red, green, blue = (round(a + (b - a) * t) for a, b in zip(start, end, strict=True))
    return red, green, blue


def change_hex(share: float | None) -> str:
    return "#{:02x}{:02x}{:02x}".format(*change_rgb(share))


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    value = int(hex_colour[1:], 16)
    return (value >> 16) & 255, (value >> 8) & 255, value & 255
