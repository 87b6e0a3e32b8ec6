"""The selected token on the map: its star, its name placed where it covers least, and its neighbours' rings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF

from ...core.common.constants import NO_FAMILY
from ..style import fonts, theme
from .canvas_parts import CanvasParts, scene_points
from .labels import star_label_corner
from .sizes import (
    STAR_LABEL_CLEARANCE,
)


class SelectionMarks(CanvasParts):
    """The star, its name and the rings of the selected token's nearest rows."""

    def set_selection(
        self,
        token: str,
        at: tuple[float, float] | None,
        neighbours: Sequence[tuple[float, float] | None],
        names: Sequence[str] = (),
    ) -> None:
        """The selected token as a star and its neighbours as rings (``names`` say which they are)."""
        if at is None:
            self.clear_selection()
            return
        names = list(names) or [f"neighbour {i + 1}" for i in range(len(neighbours))]
        self._selection = (token, at, list(neighbours), names)
        self._draw_selection()

    def _ring_hidden(self, name: str) -> bool:
        """A ring on a word of a hidden family is left out with its family."""
        if self.map is None or not self._hidden:
            return False
        hidden = {i for i, f in enumerate(self.map.families) if f in self._hidden}
        return any(
            self.map.labels[i] == name and int(self.map.family_of[i]) in hidden
            for i in np.flatnonzero(self.map.family_of != NO_FAMILY).tolist()
        )

    def _draw_selection(self) -> None:
        token, at, places, names = self._selection
        if at is None:
            return
        colour = theme.accent()
        self._query_item.setData(
            x=[at[0]], y=[at[1]], brush=pg.mkBrush(colour), pen=pg.mkPen("k", width=self._sized(1)), data=[token],
        )
        rings = [(p, n) for p, n in zip(places, names, strict=False) if p is not None and not self._ring_hidden(n)]
        self._neighbour_item.setData(
            x=[p[0] for p, _ in rings],
            y=[p[1] for p, _ in rings],
            data=[n for _, n in rings],
            brush=pg.mkBrush(None),
            pen=pg.mkPen(colour, width=self._sized(2)),
        )
        self._query_label.setText(fonts.for_map(token, self.labels.font), color=colour)
        self._query_label.setPos(at[0], at[1])
        self._query_label.setVisible(True)
        self._place_query_label()
        self.labels.set_selected(token)
        self._set_labels()
        self._overlays_changed()

    def _place_query_label(self) -> None:
        """The selected token's name on the side of its star where it fits and covers the fewest rings and dots.

        The other labels keep out of it.
        """
        at = self._selection[1]
        if at is None:
            return
        view = self.plot.getViewBox()
        size = self._query_label.textItem.boundingRect().size()
        star = view.mapViewToScene(QPointF(*at))
        rings, dots = (self._scene_points(view, points) for points in self._label_obstacles())
        corner = star_label_corner(
            star, size, view.sceneBoundingRect(), (rings, dots), self._sized(STAR_LABEL_CLEARANCE)
        )
        box = QRectF(-corner[0] * size.width(), -corner[1] * size.height(), size.width(), size.height())
        anchor = self._query_label.anchor
        reserved = (at[0], at[1], box.left(), box.top(), box.width(), box.height())
        if corner != (anchor.x(), anchor.y()) or self.labels.reserved != reserved:
            self._query_label.setAnchor(corner)
            self.labels.set_reserved(at, box)

    def _label_obstacles(self) -> tuple[np.ndarray, np.ndarray]:
        """Where the rings and the dots shown are, in map coordinates."""
        xs, ys = self._neighbour_item.getData()
        rings = np.column_stack([np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)]).reshape(-1, 2)
        dots = self.map.coords[self._visible_mask()] if self.map is not None else np.empty((0, 2))
        return rings, dots

    @staticmethod
    def _scene_points(view: pg.ViewBox, points: np.ndarray) -> np.ndarray:
        return scene_points(view, points)

    @property
    def selection(self) -> tuple[str, tuple[float, float] | None, list[tuple[float, float]]]:
        """The selected token, its place, and the rings drawn now (those of hidden families left out)."""
        xs, ys = self._neighbour_item.getData()
        return self._selection[0], self._selection[1], [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]

    @property
    def marks(self) -> tuple[str, tuple[float, float] | None, list[tuple[tuple[float, float], str]]]:
        """The selected token, its place, and every ring's place and name: those of hidden families too,
        for a web page whose reader may show their family again."""
        token, at, places, names = self._selection
        return token, at, [(place, name) for place, name in zip(places, names, strict=False) if place is not None]

    @property
    def ring_names(self) -> list[str]:
        """The names of the rings drawn now (each is also its ring's hover tip)."""
        return [str(d) for d in self._neighbour_item.data["data"]]

    def clear_selection(self) -> None:
        self._selection = ("", None, [], [])
        self._query_item.setData(x=[], y=[])
        self._neighbour_item.setData(x=[], y=[])
        self._query_label.setVisible(False)
        self.labels.set_reserved(None)
        self.labels.set_selected("")
        self._set_labels()
        self._overlays_changed()
        if self._isolated:
            self.isolate(False)
