"""The Layers pane's drawing: the cosine and length plots across the layers and the per-layer table.

They are the pane's costly part (two pyqtgraph plots, a legend, a table: about 30 ms of the
window's thread), so the pane builds them the first time it shows or has an answer to draw,
not while the window is built for its first frame.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QSplitter, QTableWidget

from ..style import theme
from ..style.plot_type import size_plot_text
from ..widgets.plot_legend import TitleRowLegend
from ..widgets.table_rows import KeepRows
from .layers_text import (
    BELOW_LOWEST,
    COLUMN_TIPS,
    COLUMNS,
    COSINE_BOTTOM,
    COSINE_TOP,
    GUESS_COLUMN,
    LAYER_COLUMN,
    LEGEND_TEXT_PT,
    NEAREST_COLUMN,
    ROW_COLUMN,
    TABLE_COSINE,
    TWO_COLUMN,
    label_fits,
    top_with_room,
)

# What the pane hands on to its plots when asked (tests and the window read them off the pane).
PLOT_PARTS = frozenset(
    {
        "cosine_plot",
        "length_plot",
        "nearest",
        "cosine_legend",
        "_legend_row",
        "_table_line",
        "_compare_curve",
        "_row_curve",
        "_length_curve",
        "_curve_styles",
    }
)


class LayersPlots(QSplitter):
    """Cosines across the layers above lengths across the layers above the per-layer table."""

    def __init__(self, point_tip: Callable[[str, float, float], str]) -> None:
        super().__init__(Qt.Orientation.Vertical)
        pg.setConfigOptions(antialias=True)
        # No context menus (as the map and the row): pyqtgraph's would offer axes that do not move, and its
        # menus, top-level widgets owned by Python, are left to the collector to delete.
        self.cosine_plot = pg.PlotWidget(background=theme.plot_background(), enableMenu=False)
        self.cosine_plot.setAccessibleName("cosines across the layers")
        self.cosine_plot.setYRange(COSINE_BOTTOM, COSINE_TOP, padding=0)
        self.cosine_plot.showGrid(x=True, y=True, alpha=0.2)
        self.cosine_plot.setLabel("left", "cosine")
        self._legend_row = TitleRowLegend(self.cosine_plot, LEGEND_TEXT_PT, columns=2)
        self.cosine_legend = self._legend_row.legend
        self.cosine_legend.setLabelTextColor(theme.plot_foreground())
        self.cosine_plot.setMouseEnabled(x=False, y=False)
        self.length_plot = pg.PlotWidget(background=theme.plot_background(), enableMenu=False)
        self.length_plot.setAccessibleName("lengths across the layers")
        self.length_plot.showGrid(x=True, y=True, alpha=0.2)
        self.length_plot.setLabel("left", "length")
        self.length_plot.setMouseEnabled(x=False, y=False)
        self.length_plot.setXLink(self.cosine_plot)
        foreground = theme.plot_foreground()
        self._table_line = pg.InfiniteLine(
            pos=TABLE_COSINE,
            angle=0,
            pen=pg.mkPen(foreground, width=1, style=Qt.PenStyle.DashLine),
            label="table rows: 1.000",
            # Above the line, where no cosine goes; ``fit_cosine_axis`` keeps room for it.
            labelOpts={"position": 0.97, "color": foreground, "anchors": [(1, 1), (1, 1)]},
        )
        self.lowest = COSINE_BOTTOM  # the lowest cosine drawn now, or the axis's least bottom
        self._compare_curve = pg.PlotDataItem(symbol="o", symbolBrush=theme.accent())
        colour = theme.family_colour(0)
        self._row_curve = pg.PlotDataItem(symbol="s", symbolBrush=colour)
        grey = theme.family_colour(7)
        self._length_curve = pg.PlotDataItem(symbol="t", symbolBrush=grey)
        # Each curve's colour, line width and symbol size at presentation's scale 1 (see ``set_scale``).
        self._curve_styles = (
            (self._compare_curve, theme.accent(), 3.0, 7.0),
            (self._row_curve, colour, 2.0, 5.0),
            (self._length_curve, grey, 2.0, 6.0),
        )
        self.cosine_plot.addItem(self._table_line)
        self.cosine_plot.getViewBox().sigResized.connect(self.fit_cosine_axis)
        self.cosine_plot.addItem(self._compare_curve)
        self.cosine_plot.addItem(self._row_curve)
        self.length_plot.addItem(self._length_curve)
        # Each point tells its value when the mouse rests on it.
        for curve, what in (
            (self._compare_curve, "the two tokens"),
            (self._row_curve, "vs its own table row"),
            (self._length_curve, "length"),
        ):
            curve.scatter.opts["hoverable"] = True
            curve.scatter.opts["tip"] = lambda x, y, data, what=what: point_tip(what, x, y)

        self.nearest = QTableWidget(0, len(COLUMNS))
        self.nearest.setHorizontalHeaderLabels(list(COLUMNS))
        for column, tip in enumerate(COLUMN_TIPS):
            header_item = self.nearest.horizontalHeaderItem(column)
            if header_item is not None:
                header_item.setToolTip(tip)
        self.nearest.setWordWrap(False)
        self.nearest.verticalHeader().setVisible(False)
        self.nearest.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.nearest.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.nearest.setAlternatingRowColors(True)
        self.nearest.setAccessibleName("the model's guess and the nearest table rows per layer")
        header = self.nearest.horizontalHeader()
        for column in (LAYER_COLUMN, ROW_COLUMN, TWO_COLUMN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(GUESS_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(NEAREST_COLUMN, QHeaderView.ResizeMode.Stretch)

        self.addWidget(self.cosine_plot)
        self.addWidget(self.length_plot)
        self.addWidget(self.nearest)
        self.setSizes([260, 130, 220])
        # Below these heights a plot shows nothing readable; on a screen too short for them the pane scrolls.
        for part, least in ((self.cosine_plot, 130), (self.length_plot, 70)):
            part.setMinimumHeight(least)
        KeepRows(self.nearest)  # seven layers in sight at once, at any type size

    def set_scale(self, scale: float, font: QFont) -> None:
        """Tick numbers, axis titles, legend and curves ``scale`` times their size, from the pane's ``font``."""
        for plot in (self.cosine_plot, self.length_plot):
            tick_font = size_plot_text(plot, font, scale)
        self._table_line.label.setFont(tick_font)
        self._legend_row.set_text_size(LEGEND_TEXT_PT * scale)
        for curve, colour, width, symbol in self._curve_styles:
            curve.setPen(pg.mkPen(colour, width=width * scale))
            curve.setSymbolSize(symbol * scale)
        self.fit_cosine_axis()

    def fit_cosine_axis(self) -> None:
        """The cosine axis from just below the lowest value to a top with room for the table line's label."""
        bottom = min(COSINE_BOTTOM, self.lowest - BELOW_LOWEST)
        view = self.cosine_plot.getViewBox()
        label = self._table_line.label.boundingRect().height()
        self.cosine_plot.setYRange(bottom, top_with_room(bottom, view.height(), label), padding=0)
        # Too short a plot shows the line alone: the headline gives the table rows' 1.000 as well.
        self._table_line.label.setVisible(label_fits(view.height(), label))

    def fit_legend(self) -> None:
        self._legend_row.fit()

    def clear(self) -> None:
        """No answer drawn: empty curves, legend and table, the axes without another model's numbers."""
        self.nearest.setRowCount(0)
        for curve in (self._row_curve, self._compare_curve, self._length_curve):
            curve.setData([], [])
        self.lowest = COSINE_BOTTOM
        self.fit_cosine_axis()
        self.cosine_legend.clear()
        for plot in (self.cosine_plot, self.length_plot):
            plot.getAxis("bottom").setTicks(None)
        self.show_axes(False)

    def show_axes(self, on: bool) -> None:
        """Layer numbers and lengths only with an answer: an empty chart keeps no other model's axes."""
        for axis in (self.cosine_plot.getAxis("bottom"), self.length_plot.getAxis("bottom"),
                     self.length_plot.getAxis("left")):
            axis.setStyle(showValues=on)
        if on:
            self.cosine_plot.enableAutoRange(axis="x")
            self.length_plot.enableAutoRange(axis="y")
        else:
            self.length_plot.setLabel("bottom", "")
            self.cosine_plot.setXRange(0, 1, padding=0)
            self.length_plot.setYRange(0, 1, padding=0)
