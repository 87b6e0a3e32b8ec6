"""What the pointer is on: one hit-test for the grown dot, the tip and the click.

pyqtgraph gives each scatter item its own hover and click: every family's item set the
view's tip for its own dots, the last to hear the move won, and a click went to whichever
item Qt found first, so in a crowded place the tip named one word and the click looked up
another. Here the canvas asks one question, ``targets_at``, and all three follow its answer:
the dots under the pointer in the order they are drawn, topmost first. The grown dot is the
first, the tip lists them (the first on top), and a click looks up the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QEnterEvent, QHelpEvent, QMouseEvent, QPainterPathStroker, QTransform
from PySide6.QtWidgets import QToolTip

from ...core.common.constants import NO_FAMILY
from ..style.plain_text import plain_tip
from .canvas_parts import CanvasParts, scene_points
from .sizes import HIGHLIGHT_SIZE

# The hover grows a dot by this many pixels (its new edge then hides what it covers).
HOVER_GROWTH = 4.0
# How many of the dots under the pointer the tip names before "and N more".
TIP_NAMES = 5
# The selected token's marker as pyqtgraph draws it: a unit star, its top point at (0, -0.5).
_STAR = pg.graphicsItems.ScatterPlotItem.Symbols["star"]


@dataclass(frozen=True)
class Target:
    """Something drawn under the pointer that a click looks up."""

    point: int  # the map's point, or -1 for the selected token's star where the map has no dot
    tip: str  # its line in the tip


class Pointing(CanvasParts):
    """The one hit-test of the map and what follows it: the grown dot, the tip and the click."""

    if TYPE_CHECKING:  # the canvas defines these
        _hover_item: pg.ScatterPlotItem
        _highlight_item: pg.ScatterPlotItem
        _hover_point: int
        _pointer_at: QPointF | None
        _tip_shown: str
        _highlight: str | None
        point_clicked: Any

        def mapToScene(self, point: Any) -> Any: ...  # noqa: N802 - Qt's name

        @property
        def ring_names(self) -> list[str]: ...

    def _scene_of(self, coords: np.ndarray) -> np.ndarray:
        """Map coordinates to scene pixels."""
        return scene_points(self.plot.getViewBox(), coords)

    def _distances(self, at: QPointF, coords: np.ndarray) -> np.ndarray:
        scene = self._scene_of(np.asarray(coords, dtype=float).reshape(-1, 2))
        return np.hypot(scene[:, 0] - at.x(), scene[:, 1] - at.y())

    @staticmethod
    def _radius(item: pg.ScatterPlotItem) -> float:
        """How far from its centre an item's dot is drawn: half its size and half its outline."""
        pen = item.opts["pen"]
        width = 0.0 if pen is None or pen.style() == pg.QtCore.Qt.PenStyle.NoPen else max(pen.widthF(), 1.0)
        return float(item.opts["size"]) / 2 + width / 2

    def _on_star(self, at: QPointF, star: tuple[float, float]) -> bool:
        """True where the star itself is drawn: its five points and their outline, not the disc around them,
        where the dots beneath the star's dot show between its points (and are what a person sees there)."""
        centre = self._scene_of(np.array([star], dtype=float))[0]
        item = self._query_item
        size = float(item.opts["size"])
        shape = QTransform.fromScale(size, size).map(_STAR)  # pixels, y down, as the scene's
        pen = item.opts["pen"]
        if pen is not None and pen.style() != Qt.PenStyle.NoPen:
            stroker = QPainterPathStroker()
            stroker.setWidth(max(pen.widthF(), 1.0))
            shape = shape.united(stroker.createStroke(shape))
        return shape.contains(QPointF(at.x() - centre[0], at.y() - centre[1]))

    def _point_at(self, place: tuple[float, float]) -> int:
        """The map's dot drawn exactly where a star or ring is (within half a pixel), or -1."""
        if self.map is None or not len(self.map):
            return -1
        star = self._scene_of(np.array([place], dtype=float))[0]
        scene = self._scene_of(self.map.coords)
        gaps = np.hypot(scene[:, 0] - star[0], scene[:, 1] - star[1])
        gaps[~self._visible_mask()] = np.inf
        best = int(np.argmin(gaps))
        return best if gaps[best] <= 0.5 else -1

    def targets_at(self, at: QPointF) -> list[Target]:
        """What is drawn under the scene point ``at``, topmost first, each map dot once."""
        shown = self.map
        if shown is None or not self.plot.getViewBox().sceneBoundingRect().contains(at):
            return []
        found: list[Target] = []
        seen: set[int] = set()

        def add(points: np.ndarray) -> None:
            for point in points.tolist():
                if point not in seen:
                    seen.add(point)
                    found.append(Target(point, self._tip_line(point)))

        token, star, _places, _names = self._selection
        if star is not None and self._query_item.isVisible():
            if self._on_star(at, star):
                point = self._point_at(star)
                if point < 0:
                    found.append(Target(-1, f"{token}  (the selected token)"))
                else:
                    add(np.array([point]))
        rings = self._neighbour_item
        if rings.isVisible() and len(rings.data):
            xs, ys = rings.getData()
            gaps = self._distances(at, np.column_stack([xs, ys]))
            half = self._radius(rings) - float(rings.opts["size"]) / 2
            on_outline = np.flatnonzero(np.abs(gaps - float(rings.opts["size"]) / 2) <= half + 0.5)
            for ring in on_outline[::-1].tolist():
                point = self._point_at((float(xs[ring]), float(ys[ring])))
                if point >= 0:
                    add(np.array([point]))
        hovered = self._hover_point
        if self._hover_item.isVisible() and 0 <= hovered < len(shown):
            if self._distances(at, shown.coords[hovered:hovered + 1])[0] <= self._radius(self._hover_item):
                add(np.array([hovered]))
        if self._highlight is not None and self._highlight_item.isVisible():
            item = self._family_items[self._highlight]
            members = np.asarray(item.data["data"], dtype=np.int64)
            gaps = self._distances(at, shown.coords[members])
            add(members[gaps <= self._sized(HIGHLIGHT_SIZE) / 2 + self._sized(2) / 2][::-1])
        layers = list(self._family_items.values())[::-1] + ([self._rest_item] if self._rest_item is not None else [])
        for item in layers:
            if not item.isVisible() or not len(item.data):
                continue
            members = np.asarray(item.data["data"], dtype=np.int64)
            gaps = self._distances(at, shown.coords[members])
            add(members[gaps <= self._radius(item)][::-1])  # the last drawn is on top
        return found

    def _tip_line(self, point: int) -> str:
        shown = self.map
        assert shown is not None  # targets are looked for on a map only
        family = int(shown.family_of[point])
        where = shown.families[family] if family != NO_FAMILY else "no family"
        ids = ", ".join(map(str, shown.pieces[point]))
        token, _at, _places, names = self._selection
        label = shown.labels[point]
        role = ""
        if token and label == token:
            role = ", the selected token"
        elif label in names and label in self.ring_names:
            role = f", a nearest row of {token}"
        return f"{label}  ({where}{role})  id {ids}"

    def tip_at(self, at: QPointF) -> str:
        """The tip for the scene point ``at``: the dot a click looks up first, then those beneath it."""
        targets = self.targets_at(at)
        if not targets:
            return ""
        lines = [targets[0].tip]
        if len(targets) > 1:
            lines.append("beneath it:")
            lines += ["  " + target.tip for target in targets[1:TIP_NAMES]]
            if len(targets) > TIP_NAMES:
                lines.append(f"  and {len(targets) - TIP_NAMES} more")
        return "\n".join(lines)

    def text_at(self, at: QPointF) -> str | None:
        """What a click at the scene point ``at`` looks up: the first target's text (None: nothing new)."""
        targets = self.targets_at(at)
        if not targets or targets[0].point < 0 or self.map is None:
            return None
        return self.map.texts[targets[0].point]

    def hover_at(self, at: QPointF | None) -> None:
        """Grow the dot a click at ``at`` would look up (None: the pointer left)."""
        targets = [] if at is None else [t for t in self.targets_at(at) if t.point >= 0]
        if not targets or self.map is None:
            self._hover_item.setVisible(False)
            self._hover_point = -1
            return
        point = targets[0].point
        if point == self._hover_point and self._hover_item.isVisible():
            return
        item = self._item_of(point)
        x, y = self.map.coords[point]
        self._hover_item.setData(
            x=[float(x)], y=[float(y)], size=float(item.opts["size"]) + HOVER_GROWTH,
            brush=self._brush_of(item, point), pen=item.opts["pen"],
        )
        self._hover_item.setVisible(True)
        self._hover_point = point

    def follow_pointer(self) -> None:
        """Grow again the dot under a resting pointer: what is drawn on top there may have changed."""
        if self._pointer_at is not None:
            self.hover_at(self._pointer_at)

    def _item_of(self, point: int) -> pg.ScatterPlotItem:
        assert self.map is not None
        family = int(self.map.family_of[point])
        if family == NO_FAMILY:
            assert self._rest_item is not None  # a dot in no family is drawn by the grey item
            return self._rest_item
        return self._family_items[self.map.families[family]]

    def _brush_of(self, item: pg.ScatterPlotItem, point: int) -> object:
        """The dot's own colour (a change colouring gives each dot its own)."""
        members = np.asarray(item.data["data"], dtype=np.int64)
        where = np.flatnonzero(members == point)
        own = item.data["brush"][int(where[0])] if where.size else None
        return own if own is not None else item.opts["brush"]

    # ----- the pointer: one hit-test (``Pointing``) for the grown dot, the tip and the click -----
    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        super().mouseMoveEvent(event)  # type: ignore[misc]
        at = self.mapToScene(event.position().toPoint())
        self._pointer_at = QPointF(at)
        self.hover_at(QPointF(at))
        if QToolTip.isVisible() and self._tip_shown:  # a tip on screen follows the pointer's dot
            tip = self.tip_at(QPointF(at))
            if tip != self._tip_shown:
                self._show_tip(tip, event.globalPosition().toPoint())

    def enterEvent(self, event: QEnterEvent) -> None:  # noqa: N802 - Qt's name
        # A pointer already resting where the canvas appears moves no more: the dot under it grows now.
        super().enterEvent(event)  # type: ignore[misc]
        # The view's own enter event is in the view's pixels, its frame included; the scene maps the viewport's.
        inside = self.viewport().mapFrom(self, event.position().toPoint())  # type: ignore[attr-defined]
        self._pointer_at = QPointF(self.mapToScene(inside))
        self.hover_at(self._pointer_at)

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        self._pointer_at = None
        self.hover_at(None)
        super().leaveEvent(event)  # type: ignore[misc]

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._show_tip(self.tip_at(QPointF(self.mapToScene(event.pos()))), event.globalPos())
            return True
        return bool(super().viewportEvent(event))  # type: ignore[misc]

    def _show_tip(self, tip: str, where: QPoint) -> None:
        self._tip_shown = tip
        if tip:
            QToolTip.showText(where, plain_tip(tip), self.viewport())  # words from a file stay words
        else:
            QToolTip.hideText()

    @property
    def tip_text(self) -> str:
        """The tip shown last for a place on the map ("" when the pointer was on no dot)."""
        return self._tip_shown

    def _on_scene_clicked(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.double():  # type: ignore[attr-defined]
            return
        text = self.text_at(QPointF(event.scenePos()))  # type: ignore[attr-defined]
        if text is not None:
            self.point_clicked.emit(text)
