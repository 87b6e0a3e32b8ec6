"""The map's scatter items: one style per family drawn fast, and overlays a click passes through."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import (
    QColor,
)

from ..style import theme


class UniformScatter(pg.ScatterPlotItem):
    """A scatter whose points all share the item's one style (a family's colour, the grey rest).

    pyqtgraph looks up each point's picture in its symbol atlas with a Python loop over the
    points: 0.4 s for a whole vocabulary, all of it in the GUI thread. When no point has a
    style of its own, one lookup serves them all.
    """

    def updateSpots(self, dataSet: np.ndarray | None = None) -> None:  # noqa: N802, N803 - pyqtgraph's names
        data = self.data if dataSet is None else dataSet
        if not (self.opts["pxMode"] and self.opts["useCache"]):
            super().updateSpots(dataSet)
            return
        missing = data["sourceRect"]["w"] == 0
        if not missing.any():
            super().updateSpots(dataSet)
            return
        own_style = (
            (data["size"][missing] != -1).any()
            # None is false, a pen, brush or symbol name true: any true entry is a style of its own.
            or any(data[column][missing].astype(bool).any() for column in ("symbol", "pen", "brush"))
            or self._hover_restyles()
        )
        if own_style:
            super().updateSpots(dataSet)
            return
        first = np.flatnonzero(missing)[:1]
        style = list(zip(*self._style(["symbol", "size", "pen", "brush"], data=data, idx=first), strict=True))
        data["sourceRect"][missing] = self.fragmentAtlas[style][0]
        self._maybeRebuildAtlas()
        self._updateMaxSpotSizes(data=data)
        self.invalidate()

    def mouseClickEvent(self, ev: object) -> None:  # noqa: N802 - pyqtgraph's name
        ev.ignore()  # type: ignore[attr-defined]  # the canvas's one hit-test answers clicks (pointing.py)

    def _hover_restyles(self) -> bool:
        return bool(self.opts["hoverable"]) and any(
            self.opts["hover" + name.title()] != default
            for name, default in (("symbol", None), ("size", -1), ("pen", None), ("brush", None))
        )


class OverlayScatter(pg.ScatterPlotItem):
    """Markers drawn over the map's dots (the grown dot under the pointer, star, rings, matches).

    No item answers a click itself: the canvas's one hit-test (pointing.py) says which dot it names.
    """

    def mouseClickEvent(self, ev: object) -> None:  # noqa: N802 - pyqtgraph's name
        ev.ignore()  # type: ignore[attr-defined]


def legend_sample(symbol: str, size: int, brush: object, pen: object) -> pg.ScatterPlotItem:
    """A marker for the legend only (never added to the plot)."""
    return pg.ScatterPlotItem(symbol=symbol, size=size, brush=brush, pen=pen)


def rest_colour(big: bool) -> QColor:
    """Grey for the rows in no family: light, so that thousands of them stay a background."""
    grey = QColor("#9a9a9a") if not theme.is_dark() else QColor("#8a8a8a")
    grey.setAlpha(55 if big else 170)
    return grey
