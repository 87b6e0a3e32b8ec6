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


def family_colour_hex(index: int) -> str:
    """The colour of family ``index`` (the list repeats past its end)."""
    return FAMILY_COLOURS[index % len(FAMILY_COLOURS)]
