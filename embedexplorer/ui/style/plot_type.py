"""Plot text at the window's size of type: tick numbers and axis titles that grow in presentation mode."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QFont

# Tick numbers and axis titles at presentation's scale 1: a little smaller than the window's type.
TICK_TEXT_PT = 8.0


def size_plot_text(
    plot: pg.PlotWidget | pg.PlotItem, font: QFont, scale: float, axes: tuple[str, ...] = ("bottom", "left")
) -> QFont:
    """Draw ``plot``'s tick numbers and axis titles ``scale`` times their size, in ``font``'s family.

    Returns the tick numbers' font, for a label drawn inside the plot to match them. An axis title
    set later keeps its size (pyqtgraph keeps the style of an axis's label).
    """
    tick_font = QFont(font)
    tick_font.setPointSizeF(TICK_TEXT_PT * scale)
    for name in axes:
        axis = plot.getAxis(name)
        axis.setStyle(tickFont=tick_font)
        axis.setLabel(axis.labelText, **{"font-size": f"{TICK_TEXT_PT * scale:g}pt"})
    return tick_font
