"""A plot's legend in its title row: above the curves, never painted over them, never cut.

pyqtgraph's own legend floats inside the plot, where it hides whatever the curves draw
under it (the two "bank"s of GPT-2 run right through its corner). Here it takes the row
the plot's title would use, with as many entries side by side as the plot's width holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyqtgraph as pg
from pyqtgraph.graphicsItems.LegendItem import ItemSample
from PySide6.QtCore import QSizeF, Qt
from PySide6.QtWidgets import QGraphicsLayoutItem

# The left axis's width, which the title row does not span.
LEFT_AXIS_PX = 50

Entry = tuple[QGraphicsLayoutItem, QGraphicsLayoutItem]  # a legend entry: its sample, its label


class TitleRowLegend:
    """A ``pg.LegendItem`` in ``plot_widget``'s title row; call ``fit`` when the width, entries or text size change."""

    def __init__(self, plot_widget: pg.PlotWidget, text_pt: float, columns: int) -> None:
        self.plot_widget = plot_widget
        self.columns = columns
        self.legend = pg.LegendItem(labelTextSize=f"{text_pt:g}pt", colCount=columns)
        self._fitted: tuple[int, int, str] | None = None  # room, entries, text size of the last fit
        self._entries: dict[tuple[str, str], Entry] = {}  # entries measured for names not shown (yet)
        self._sample: ItemSample | None = None
        plot_item = plot_widget.getPlotItem()
        plot_item.layout.removeItem(plot_item.titleLabel)
        plot_item.titleLabel.hide()
        plot_item.layout.addItem(self.legend, 0, 1)

    def set_text_size(self, text_pt: float) -> None:
        self.legend.opts["labelTextSize"] = f"{text_pt:g}pt"
        for _sample, label in self.legend.items:
            label.setText(label.text, size=self.legend.opts["labelTextSize"])
        self.fit()

    def fit(self) -> None:
        """All entries side by side where they fit, else in fewer columns, down to one."""
        room = self.plot_widget.width() - LEFT_AXIS_PX
        # Answers redraw the legend often: lay it out again only when its room, entries or text changed.
        key = (room, len(self.legend.items), str(self.legend.opts["labelTextSize"]))
        if key == self._fitted:
            return
        self._fitted = key
        self.legend.setColumnCount(self.columns_for(room))

    def columns_for(self, room: float, entries: Sequence[Entry] | None = None) -> int:
        """The most columns, up to ``columns``, whose entries side by side fit ``room`` pixels (at least one)."""
        for columns in range(self.columns, 1, -1):
            if self.grid_size(columns, entries).width() <= room:
                return columns
        return 1

    def height_for(self, plot_width: float, names: Sequence[str] | None = None) -> float:
        """The legend's height in a plot widget ``plot_width`` pixels wide, once ``fit`` lays it out there.

        With ``names``, for entries of those names at the legend's text size, whatever it holds now:
        a pane can reserve the room its legend will take once an answer fills it.
        """
        entries = None if names is None else [self._entry(name) for name in names]
        return self.grid_size(self.columns_for(plot_width - LEFT_AXIS_PX, entries), entries).height()

    def grid_size(self, columns: int, entries: Sequence[Entry] | None = None) -> QSizeF:
        """The legend's preferred size in ``columns`` columns, added up as its grid layout does.

        Each entry is a sample and a label, filled row by row; a column is as wide as its widest
        item, a row as tall as its tallest. Computed, not laid out: asking the plot's future height
        must not move what is on screen.
        """
        layout = self.legend.layout
        items = list(self.legend.items if entries is None else entries)
        left, top, right, bottom = layout.getContentsMargins()
        if not items:
            return QSizeF(left + right, top + bottom)
        used = min(columns, len(items))
        rows = math.ceil(len(items) / used)
        widths, heights = [0.0] * (2 * used), [0.0] * rows
        for index, pair in enumerate(items):
            row, column = divmod(index, used)
            for offset, item in enumerate(pair):
                hint = item.effectiveSizeHint(Qt.SizeHint.PreferredSize)
                widths[2 * column + offset] = max(widths[2 * column + offset], hint.width())
                heights[row] = max(heights[row], hint.height())
        width = sum(widths) + layout.horizontalSpacing() * (len(widths) - 1) + left + right
        height = sum(heights) + layout.verticalSpacing() * max(0, rows - 1) + top + bottom
        return QSizeF(width, height)

    def _entry(self, name: str) -> Entry:
        """A sample and a label as the legend would add them for ``name`` at its text size (kept for the next ask)."""
        size = str(self.legend.opts["labelTextSize"])
        key = (name, size)
        if key not in self._entries:
            if self._sample is None:
                self._sample = ItemSample(pg.PlotDataItem())
            label = pg.LabelItem(justify="left", size=size)
            label.setText(name, size=size)
            self._entries[key] = (self._sample, label)
        return self._entries[key]
