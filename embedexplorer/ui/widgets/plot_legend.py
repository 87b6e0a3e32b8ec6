"""A plot's legend in its title row: above the curves, never painted over them, never cut.

pyqtgraph's own legend floats inside the plot, where it hides whatever the curves draw
under it (the two "bank"s of GPT-2 run right through its corner). Here it takes the row
the plot's title would use, with as many entries side by side as the plot's width holds.
"""

from __future__ import annotations

import pyqtgraph as pg

# The left axis's width, which the title row does not span.
LEFT_AXIS_PX = 50


class TitleRowLegend:
    """A ``pg.LegendItem`` in ``plot_widget``'s title row; call ``fit`` when the width, entries or text size change."""

    def __init__(self, plot_widget: pg.PlotWidget, text_pt: float, columns: int) -> None:
        self.plot_widget = plot_widget
        self.columns = columns
        self.legend = pg.LegendItem(labelTextSize=f"{text_pt:g}pt", colCount=columns)
        self._fitted: tuple[int, int, str] | None = None  # room, entries, text size of the last fit
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
        for columns in range(self.columns, 0, -1):
            self.legend.setColumnCount(columns)
            if self.legend.layout.preferredWidth() <= room:
                break
