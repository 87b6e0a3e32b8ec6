"""The map drawn with pyqtgraph: the same picture on screen and in exported files.

One scatter item per family plus one grey item for every other row (a big map holds up
to the whole vocabulary), a label layer that never lets two labels overlap, the selected
token's star and its neighbours' rings, search matches, and PNG and SVG export.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPainter,
    QPainterPath,
    QResizeEvent,
    QTextDocumentFragment,
)
from PySide6.QtWidgets import QWidget

from ..core.common.files import atomic_write_bytes
from ..core.compare.map_change import MapChange
from ..core.maps.family_map import FamilyMap
from ..core.maps.map_caption import caption_lines
from ..core.maps.word_maps import NO_FAMILY, WordMap, from_family_map
from . import fonts, theme
from .change_colours import change_colour

# Beyond this many points only family words (and rings) get labels; hover tips name the rest.
MAX_LABELLED_POINTS = 500
# Gap between a dot and its label, in pixels.
LABEL_GAP_PX = 4.0
# A big map's grey dots and its family dots, in pixels.
REST_SIZE, BIG_FAMILY_SIZE, SMALL_FAMILY_SIZE = 4, 9, 11
# The overlays' markers, in pixels at the normal scale.
HIGHLIGHT_SIZE, MATCH_SIZE, CURRENT_SIZE, STAR_SIZE, RING_SIZE = 16, 13, 22, 22, 15
LEGEND_TEXT_PT = 11.0
# The most of the canvas' height the whole caption may take before it shows its first line only.
CAPTION_SHARE = 0.3
# The least size, in scene pixels, the map is laid out at for a picture (the command line's canvas).
EXPORT_SCENE = (1000, 760)


# The corners of the star's name tried in turn: above right, below right, above left, below left.
STAR_LABEL_CORNERS = ((0.0, 1.0), (0.0, 0.0), (1.0, 1.0), (1.0, 0.0))
# How far (pixels) from a ring's or dot's centre the star's name keeps, at the normal scale.
STAR_LABEL_CLEARANCE = RING_SIZE / 2


def star_label_corner(
    star: QPointF,
    size: QSizeF,
    frame: QRectF,
    obstacles: Sequence[np.ndarray] = (),
    clearance: float = 0.0,
) -> tuple[float, float]:
    """Which corner of the selected token's name sits on its star: a TextItem anchor (x, y), pixels in.

    (0, 1), the bottom left corner, puts the name above the star and to its right. A corner that
    keeps the name inside ``frame`` comes first, then one whose box covers the fewest of the first
    ``obstacles`` (the rings: an (n, 2) array in the same pixels, each ``clearance`` round), then
    of the next (the dots), then the order of ``STAR_LABEL_CORNERS``: the name is read over the
    rings, not hidden under them.
    """
    groups = [np.asarray(points, dtype=float).reshape(-1, 2) for points in obstacles]

    def cost(order: int, corner: tuple[float, float]) -> tuple[int, ...]:
        left, top = star.x() - corner[0] * size.width(), star.y() - corner[1] * size.height()
        outside = int(not frame.contains(QRectF(left, top, size.width(), size.height())))
        covered = [
            int((
                (points[:, 0] > left - clearance) & (points[:, 0] < left + size.width() + clearance)
                & (points[:, 1] > top - clearance) & (points[:, 1] < top + size.height() + clearance)
            ).sum())
            for points in groups
        ]
        return (outside, *covered, order)

    return min(enumerate(STAR_LABEL_CORNERS), key=lambda item: cost(*item))[1]


class WordLabels(pg.GraphicsObject):
    """The map's labels in one item, placed around their dots so that no two overlap.

    Each label tries eight places around its dot (right, left, above, below, then the
    corners) and takes the first one that touches no placed label and no dot; a label
    with no room is left out (its dot's hover tip still names it). Labels are placed
    again whenever the view changes, in scene pixels, so an exported picture holds the
    same labels as the screen.
    """

    def __init__(self) -> None:
        super().__init__()
        self.font: QFont = fonts.map_font(8)
        self._metrics = QFontMetricsF(self.font)
        self._drawable_texts: dict[str, str] = {}
        self._text_widths: dict[str, float] = {}
        # A box in pixels (dx, dy, width, height) beside a point in data units that no label may cover.
        self._reserved: tuple[float, float, float, float, float, float] | None = None
        self._x = np.empty(0)
        self._y = np.empty(0)
        self._texts: list[str] = []
        self._groups: list[str] = []  # the family (or "ring") a label belongs to
        self._colours: list[QColor] = []
        self._widths: list[float] = []
        self._obstacles = np.empty((0, 2))  # dots, in data units, that labels keep clear of
        self._hidden: set[str] = set()
        self._dimmed: set[str] = set()
        self._selected = ""
        self._on = True
        self.placed: list[tuple[int, QRectF]] = []  # label index and its rectangle, scene pixels
        self._version = 0  # changes whenever what the labels say or which are wanted changes
        self._layout_key: tuple[float, float, float, float, int] | None = None
        self._offsets: list[tuple[int, float, float, float, float]] = []
        self.setAcceptedMouseButtons(pg.QtCore.Qt.MouseButton.NoButton)
        self.dot_radius = SMALL_FAMILY_SIZE / 2  # pixels; larger in presentation mode

    def set_labels(
        self,
        x: np.ndarray,
        y: np.ndarray,
        texts: Sequence[str],
        groups: Sequence[str],
        colours: Sequence[QColor],
        obstacles: np.ndarray,
    ) -> None:
        """Labels in priority order (the first ones are placed first); ``obstacles`` are (n, 2) dots."""
        self.prepareGeometryChange()
        self._x, self._y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        self._texts = [self._drawable(text) for text in texts]
        self._groups, self._colours = list(groups), list(colours)
        self._widths = [self._width(text) for text in self._texts]
        self._obstacles = np.asarray(obstacles, dtype=float).reshape(-1, 2)
        self._version += 1
        self.update()

    def _drawable(self, text: str) -> str:
        # Each new selection sets the same family words again: remember them, not re-check them.
        found = self._drawable_texts.get(text)
        if found is None:
            found = self._drawable_texts[text] = fonts.for_map(text, self.font)
        return found

    def _width(self, text: str) -> float:
        found = self._text_widths.get(text)
        if found is None:
            found = self._text_widths[text] = self._metrics.horizontalAdvance(text)
        return found

    def set_state(self, hidden: set[str], dimmed: set[str]) -> None:
        self._hidden, self._dimmed = set(hidden), set(dimmed)
        self._version += 1
        self.update()

    def set_selected(self, token: str) -> None:
        """Leave out the selected token's own label: the selection marker names it already."""
        self._selected = fonts.for_map(token, self.font)
        self._version += 1
        self.update()

    def set_reserved(self, at: tuple[float, float] | None, box: QRectF | None = None) -> None:
        """Keep ``box`` (pixels, relative to the point ``at``) clear of labels; None clears it."""
        self._reserved = None if at is None or box is None else (
            at[0], at[1], box.left(), box.top(), box.width(), box.height()
        )
        self._version += 1
        self.update()

    @property
    def reserved(self) -> tuple[float, float, float, float, float, float] | None:
        """The reserved box as (x, y of its point, left, top, width, height in pixels from it), or None."""
        return self._reserved

    def reserved_box(self, to_pixels: object) -> list[tuple[float, float, float, float]]:
        """The reserved box in the pixels of ``to_pixels`` (a function of data x, y), or nothing."""
        if self._reserved is None:
            return []
        x, y, dx, dy, w, h = self._reserved
        px, py = to_pixels(x, y)  # type: ignore[operator]
        return [(px + dx, py + dy, px + dx + w, py + dy + h)]

    def set_on(self, on: bool) -> None:
        self._on = on
        self._version += 1
        self.setVisible(on)

    def set_font(self, font: QFont, dot_radius: float) -> None:
        """Another size of type (presentation mode) and of the dots the labels keep clear of."""
        self.prepareGeometryChange()
        self.font, self._metrics, self.dot_radius = font, QFontMetricsF(font), dot_radius
        self._drawable_texts.clear()
        self._text_widths.clear()
        self._widths = [self._width(text) for text in self._texts]
        self._version += 1
        self.update()

    def _wanted(self, i: int) -> bool:
        return self._groups[i] not in self._hidden and self._texts[i] != self._selected

    @property
    def shown(self) -> list[str]:
        """The labels that fit now (placed for the current view)."""
        return [self._texts[i] for i, _ in self.layout()] if self._on else []

    @property
    def wanted(self) -> list[str]:
        """Every label that would be drawn if there were room."""
        return [t for i, t in enumerate(self._texts) if self._wanted(i)] if self._on else []

    def entries(self) -> tuple[np.ndarray, np.ndarray, list[str], list[QColor], list[float], list[bool], np.ndarray]:
        """x, y (data units), texts, colours, widths (pixels), which are wanted, obstacle dots (data units)."""
        wanted = [self._wanted(i) and self._on for i in range(len(self._texts))]
        return self._x, self._y, self._texts, self._colours, self._widths, wanted, self._obstacles

    @property
    def metrics(self) -> QFontMetricsF:
        return self._metrics

    def layout(self) -> list[tuple[int, QRectF]]:
        """Place the labels for the current view: (index, scene rectangle) of each that fits."""
        view = self.getViewBox()
        if view is None or not self._texts:
            self.placed = []
            return self.placed
        to_scene = self.sceneTransform()
        sx = to_scene.m11() * self._x + to_scene.m21() * self._y + to_scene.m31()
        sy = to_scene.m12() * self._x + to_scene.m22() * self._y + to_scene.m32()
        ox = to_scene.m11() * self._obstacles[:, 0] + to_scene.m21() * self._obstacles[:, 1] + to_scene.m31()
        oy = to_scene.m12() * self._obstacles[:, 0] + to_scene.m22() * self._obstacles[:, 1] + to_scene.m32()
        # Placed once per zoom (and per change of labels): a pan only moves them all together,
        # so their places around the dots, and the fact that none overlap, stay as they are.
        key = (to_scene.m11(), to_scene.m12(), to_scene.m21(), to_scene.m22(), self._version)
        if key != self._layout_key:
            wanted = [self._wanted(i) for i in range(len(self._texts))]

            def to_scene_pixels(x: float, y: float) -> tuple[float, float]:
                point = to_scene.map(QPointF(x, y))
                return point.x(), point.y()

            reserved = self.reserved_box(to_scene_pixels)
            found = place_labels(
                sx, sy, self._widths, self._metrics.height(), wanted, ox, oy, None, reserved, radius=self.dot_radius
            )
            self._offsets = [
                (i, rect.left() - sx[i], rect.top() - sy[i], rect.width(), rect.height()) for i, rect in found
            ]
            self._layout_key = key
        bounds = view.sceneBoundingRect()
        placed = []
        for i, dx, dy, w, h in self._offsets:
            rect = QRectF(sx[i] + dx, sy[i] + dy, w, h)
            if bounds.contains(rect):
                placed.append((i, rect))
        self.placed = placed
        return placed

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange: object = None) -> tuple[float | None, float | None]:  # noqa: N802 - pyqtgraph's name
        values = self._x if ax == 0 else self._y
        return (float(values.min()), float(values.max())) if values.size else (None, None)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        # Text is sized in pixels, so a label may reach anywhere in view: claim the view.
        rect = self.viewRect()
        return QRectF() if rect is None else rect

    def shape(self) -> QPainterPath:
        return QPainterPath()  # never "under the mouse": hovers and clicks go to the points

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph's name
        self.prepareGeometryChange()
        super().viewTransformChanged()

    def paint(self, painter: QPainter, *args: object) -> None:
        if not self._texts or not self._on:
            return
        placed = self.layout()
        to_scene = self.sceneTransform()
        # Draw in scene units: the painter maps them to the screen, or to the exported picture.
        painter.setTransform(to_scene.inverted()[0] * painter.transform())
        painter.setFont(self.font)
        ascent = self._metrics.ascent()
        for i, rect in placed:
            painter.setOpacity(0.3 if self._groups[i] in self._dimmed else 1.0)
            painter.setPen(self._colours[i])
            painter.drawText(QPointF(rect.left(), rect.top() + ascent), self._texts[i])


def place_labels(
    sx: np.ndarray,
    sy: np.ndarray,
    widths: Sequence[float],
    height: float,
    wanted: Sequence[bool],
    ox: np.ndarray,
    oy: np.ndarray,
    bounds: QRectF | None,
    reserved: Sequence[tuple[float, float, float, float]] = (),
    radius: float = SMALL_FAMILY_SIZE / 2,
) -> list[tuple[int, QRectF]]:
    """Place labels in pixels around their dots (sx, sy), in order, clear of each other and of the dots (ox, oy).

    Each label tries eight places (right, left, above, below, then the corners) and takes
    the first that stays inside ``bounds`` and touches nothing placed; one with no room is
    left out (``bounds`` None: no edge). ``reserved`` boxes (left, top, right, bottom), such
    as the selected token's own name beside its star, are kept clear too; ``radius`` is the
    dots' radius in pixels. Returns (label index, rectangle) of each placed label.
    """
    # Plain floats, not QRectF: this runs in the GUI thread for every new selection, and a
    # call into Qt per test would cost several times the test itself.
    edge = None if bounds is None else (bounds.left(), bounds.top(), bounds.right(), bounds.bottom())
    grid = _Grid(32.0)
    for px, py in zip(ox.tolist(), oy.tolist(), strict=True):
        if edge is None or (edge[0] <= px <= edge[2] and edge[1] <= py <= edge[3]):
            grid.add((px - radius, py - radius, px + radius, py + radius))
    for box in reserved:
        grid.add(box)
    placed: list[tuple[int, QRectF]] = []
    gap = radius + LABEL_GAP_PX - 2
    corner = gap * 0.7
    xs, ys = sx.tolist(), sy.tolist()
    for i in range(len(widths)):
        x, y = xs[i], ys[i]
        if not wanted[i] or (edge is not None and not (edge[0] <= x <= edge[2] and edge[1] <= y <= edge[3])):
            continue
        w = widths[i]
        for dx, dy in (
            (gap, -height / 2), (-gap - w, -height / 2), (-w / 2, -gap - height), (-w / 2, gap),
            (corner, -corner - height), (-corner - w, -corner - height),
            (corner, corner), (-corner - w, corner),
        ):
            rect = (x + dx, y + dy, x + dx + w, y + dy + height)
            inside = edge is None or (
                edge[0] <= rect[0] and edge[1] <= rect[1] and rect[2] <= edge[2] and rect[3] <= edge[3]
            )
            if inside and not grid.hits(rect):
                grid.add(rect)
                placed.append((i, QRectF(rect[0], rect[1], w, height)))
                break
    return placed


_Box = tuple[float, float, float, float]  # left, top, right, bottom


class _Grid:
    """Boxes bucketed by cell, so testing a new label against hundreds stays quick."""

    def __init__(self, cell: float) -> None:
        self.cell = cell
        self.cells: dict[tuple[int, int], list[_Box]] = {}

    def _keys(self, box: _Box) -> list[tuple[int, int]]:
        c = self.cell
        return [
            (gx, gy)
            for gx in range(int(box[0] // c), int(box[2] // c) + 1)
            for gy in range(int(box[1] // c), int(box[3] // c) + 1)
        ]

    def add(self, box: _Box) -> None:
        for key in self._keys(box):
            self.cells.setdefault(key, []).append(box)

    def hits(self, box: _Box) -> bool:
        left, top, right, bottom = box
        # Touching edges do not count, as with QRectF.intersects.
        return any(
            left < other[2] and other[0] < right and top < other[3] and other[1] < bottom
            for key in self._keys(box)
            for other in self.cells.get(key, ())
        )


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

    def _hover_restyles(self) -> bool:
        return bool(self.opts["hoverable"]) and any(
            self.opts["hover" + name.title()] != default
            for name, default in (("symbol", None), ("size", -1), ("pen", None), ("brush", None))
        )


class OverlayScatter(pg.ScatterPlotItem):
    """Markers drawn over the map's dots (the grown dot under the pointer, star, rings, matches).

    A click on one goes on to the dot beneath: pyqtgraph hands a click to the topmost item with
    a point there, and the grown dot under the pointer is always topmost, so it would swallow it.
    """

    def mouseClickEvent(self, ev: object) -> None:  # noqa: N802 - pyqtgraph's name
        ev.ignore()  # type: ignore[attr-defined]


def _legend_sample(symbol: str, size: int, brush: object, pen: object) -> pg.ScatterPlotItem:
    """A marker for the legend only (never added to the plot)."""
    return pg.ScatterPlotItem(symbol=symbol, size=size, brush=brush, pen=pen)


class MapCanvas(pg.GraphicsLayoutWidget):
    """Scatter of a map's points, a legend, a caption, the selected token's place and search matches.

    Families can be hidden or highlighted; the highlight and the matches are drawn as
    items on top rather than by restyling every point.
    """

    point_clicked = Signal(str)  # what a clicked point stands for, ready to look up
    matches_changed = Signal(int, int)  # how many points match the search, which one is current (-1: none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self._axis_titles = {"bottom": "direction 1 of the map", "left": "direction 2 of the map"}
        for axis, title in self._axis_titles.items():
            self.plot.setLabel(axis, title)
        self.plot.getViewBox().sigResized.connect(self._fit_axis_titles)
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
            # The axes draw the grid, so each reaches across the whole plot and is painted again
            # whenever anything in it changes (a new star and rings, a hovered point). Kept as a
            # picture on the screen, that costs a copy, not a replay of every line and tick.
            self.plot.getAxis(axis).setCacheMode(pg.QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # The legend sits beside the plot, not on it, so it never hides a point.
        self.legend = pg.LegendItem(labelTextSize=f"{LEGEND_TEXT_PT:g}pt")
        side = self.addLayout(row=0, col=1)
        side.addItem(self.legend, row=0, col=0)
        side.addLabel("", row=1, col=0)
        side.layout.setRowStretchFactor(1, 10)
        side.setMaximumWidth(200)
        self.ci.layout.setColumnStretchFactor(0, 10)
        self._legend_column = side
        self.show_legend(False)  # on screen the family panel is the legend; pictures get this one
        self.caption = pg.LabelItem(justify="left")
        self._caption_html = ""  # the whole caption; a short canvas shows its first line only
        self._caption_fit: tuple[float, int] | None = None  # the room and height it was last fitted to
        self._caption_short = False  # True while only the first line is shown
        self.addItem(self.caption, row=1, col=0, colspan=2)
        self.map: WordMap | None = None
        self.change: MapChange | None = None  # points coloured by their token's change, or by family
        self._folded: list[str] | None = None
        self.model_name = ""
        self._family_items: dict[str, pg.ScatterPlotItem] = {}
        self._rest_item: pg.ScatterPlotItem | None = None
        self.labels = WordLabels()
        self.labels.setZValue(4)
        self.plot.addItem(self.labels)
        self._hidden: set[str] = set()
        self._highlight: str | None = None
        self._isolated = False
        # How many times its normal size each marker and text is drawn (presentation mode: larger).
        self.marker_scale = 1.0
        self._highlight_item = OverlayScatter(pxMode=True)
        self._highlight_item.setZValue(5)
        self._match_item = OverlayScatter(pxMode=True, symbol="o", size=MATCH_SIZE)
        self._match_item.setZValue(6)
        self._current_item = OverlayScatter(pxMode=True, symbol="o", size=CURRENT_SIZE)
        self._current_item.setZValue(7)
        self._query_item = OverlayScatter(pxMode=True, symbol="star", size=STAR_SIZE, hoverable=True)
        self._query_item.setZValue(10)
        self._neighbour_item = OverlayScatter(pxMode=True, symbol="o", size=RING_SIZE, hoverable=True)
        self._neighbour_item.setZValue(9)
        # On a faint box of the plot's own colour: read over the grid, dots and rings it may still touch.
        self._query_label = pg.TextItem(anchor=(0, 1))
        self._query_label.setZValue(11)
        # The name moves to the star's other side when a pan, zoom or resize would cut it.
        self.plot.getViewBox().sigRangeChanged.connect(self._place_query_label)
        self.plot.getViewBox().sigResized.connect(self._place_query_label)
        # The point under the pointer, drawn larger on top. pyqtgraph's own hover style would
        # restyle the hovered point inside its item and so repaint every point of the map
        # (40 ms at 50,257 points); this item repaints only the few pixels around it.
        self._hover_item = OverlayScatter(pxMode=True, symbol="o")
        self._hover_item.setZValue(8)
        self._hover_item.setVisible(False)
        self._hover_owner: pg.ScatterPlotItem | None = None
        for item in (
            self._highlight_item, self._match_item, self._current_item,
            self._neighbour_item, self._query_item, self._query_label, self._hover_item,
        ):
            self.plot.addItem(item)
        # Each marker item's size at the normal scale; family items join with each map.
        self._base_sizes: dict[pg.ScatterPlotItem, float] = {
            self._match_item: MATCH_SIZE, self._current_item: CURRENT_SIZE,
            self._query_item: STAR_SIZE, self._neighbour_item: RING_SIZE,
        }
        self._selection: tuple[str, tuple[float, float] | None, list[tuple[float, float] | None], list[str]] = (
            "", None, [], []
        )
        self._matches = np.empty(0, dtype=np.int64)
        self._current = -1
        # set by render_image: where its texts lie in the last exported picture, in pixels
        self.export_text_areas: dict[str, QRectF] = {}
        self._use_map_font()
        self.apply_palette()
        # Reached with Tab like any control: a frame in the focus colour says so (room kept when unfocused).
        self.setStyleSheet(
            "MapCanvas { border: 2px solid transparent; } MapCanvas:focus { border: 2px solid palette(highlight); }"
        )

    def _use_map_font(self) -> None:
        """Every text of the map in the bundled family, so pictures match on every machine."""
        scale = self.marker_scale
        for axis in ("bottom", "left"):
            item = self.plot.getAxis(axis)
            item.setStyle(tickFont=fonts.map_font(8 * scale))
            item.label.setFont(fonts.map_font(9 * scale))
        self.caption.item.setFont(fonts.map_font(9 * scale))
        self._query_label.textItem.setFont(fonts.map_font(10 * scale))
        self._fit_axis_titles()

    def _fit_axis_titles(self) -> None:
        """Each axis's whole title where the plot is long enough for it, else only "direction 1" or "2".

        A short canvas (a laptop in presentation mode) would cut the left title at both ends;
        the caption names the map's kind as well. Pictures are laid out large: whole titles.
        """
        view = self.plot.getViewBox()
        for axis_name, room in (("bottom", view.width()), ("left", view.height())):
            axis = self.plot.getAxis(axis_name)
            whole = self._axis_titles[axis_name]
            metrics = QFontMetricsF(axis.label.font())
            fits = metrics.horizontalAdvance(whole) <= room
            if fits:
                title = whole
            elif " of the " in whole:
                title = whole.split(" of the ")[0]
            else:  # a direction's pairs: as many as fit, then an ellipsis
                title = metrics.elidedText(whole, Qt.TextElideMode.ElideRight, max(room, 40.0))
            if axis.labelText != title:
                axis.setLabel(title)

    # ----- presentation: larger markers and text for a projector ---------------------------
    def set_marker_scale(self, scale: float) -> None:
        """Draw every marker and text of the map ``scale`` times its normal size (1.0: normal).

        Maps drawn later keep the scale; the view, the selection and the search stay as they are.
        """
        self.marker_scale = float(scale)
        self._use_map_font()
        for item, base in self._base_sizes.items():
            self._resize_item(item, base)
        self.labels.set_font(fonts.map_font(8 * self.marker_scale), self._sized(SMALL_FAMILY_SIZE) / 2)
        if self.map is not None:
            self._update_caption()
            self._restyle()  # the highlight's markers
        if self._selection[1] is not None:
            self._draw_selection()  # the star's and the rings' outlines, and the labels
        else:
            self._set_labels()
        self.show_legend(self._legend_column.isVisible())

    def _sized(self, base: float) -> float:
        """A size in pixels at the normal scale, at the scale in use."""
        return base * self.marker_scale

    def _resize_item(self, item: pg.ScatterPlotItem, base: float) -> None:
        item.setSize(self._sized(base))

    def marker_sizes(self) -> dict[str, float]:
        """The size in pixels of each kind of marker drawn now (family names, "other rows", "star", "rings")."""
        items = dict(self._family_items)
        items.update({"other rows": self._rest_item, "star": self._query_item, "rings": self._neighbour_item})
        # A point's own size, or (-1) the item's: what pyqtgraph draws.
        return {
            name: float(item.data["size"][0] if item.data["size"][0] >= 0 else item.opts["size"])
            for name, item in items.items()
            if item is not None and len(item.data)
        }

    # ----- content -----------------------------------------------------------------------
    def set_map(self, the_map: FamilyMap | WordMap, model_name: str, hidden: set[str] | None = None) -> None:
        """Draw a map: one scatter item and one brush per family, grey for the rest."""
        if hidden is not None:
            self._hidden = set(hidden)
        shown = the_map if isinstance(the_map, WordMap) else from_family_map(the_map, model_name)
        self.map, self.model_name = shown, model_name
        self._folded = None
        for item in list(self._family_items.values()) + ([self._rest_item] if self._rest_item else []):
            self.plot.removeItem(item)
            self._base_sizes.pop(item, None)
        self._family_items.clear()
        self._rest_item = None
        self._hover_item.setVisible(False)
        self._hover_owner = None
        self._isolated = False
        big = len(shown) > MAX_LABELLED_POINTS
        size = BIG_FAMILY_SIZE if big else SMALL_FAMILY_SIZE
        rest = np.flatnonzero(shown.family_of == NO_FAMILY)
        if rest.size:
            grey = _rest_colour(big)
            self._rest_item = self._scatter(rest, pg.mkBrush(grey), None, REST_SIZE if big else 7, "other rows")
            self._rest_item.setZValue(1)
        for index, family in enumerate(shown.families):
            members = np.flatnonzero(shown.family_of == index)
            colour = theme.family_colour(index)
            item = self._scatter(members, pg.mkBrush(colour), pg.mkPen(colour.darker(150), width=1), size, family)
            item.setZValue(2)
            self._family_items[family] = item
        self._colour_by_change()
        self._set_labels()
        self._axis_titles = {"bottom": shown.layout.axis_title(0), "left": shown.layout.axis_title(1)}
        self._fit_axis_titles()
        self._matches = np.empty(0, dtype=np.int64)
        self._current = -1
        self._match_item.setData(x=[], y=[])
        self._current_item.setData(x=[], y=[])
        self.clear_selection()
        self._restyle()
        self.reset_view()

    def _scatter(self, members: np.ndarray, brush: object, pen: object, size: int, name: str) -> pg.ScatterPlotItem:
        """One family's points (``size`` in pixels at the normal scale)."""
        assert self.map is not None
        coords = self.map.coords
        item = UniformScatter(
            x=coords[members, 0],
            y=coords[members, 1],
            data=members,
            brush=brush,
            pen=pen,
            size=self._sized(size),
            pxMode=True,
            hoverable=True,
            tip=self._tip,
            name=name,
        )
        self._base_sizes[item] = size
        item.sigClicked.connect(self._on_clicked)
        item.sigHovered.connect(self._on_hovered)
        self.plot.addItem(item)
        return item

    # ----- colour by change -----------------------------------------------------------------
    def set_change(self, change: MapChange | None) -> None:
        """Colour each point by its token's change from table A to B (None: by family again)."""
        self.change = change
        self._colour_by_change()
        self._update_caption()

    @property
    def _big(self) -> bool:
        return self.map is not None and len(self.map) > MAX_LABELLED_POINTS

    def point_colour(self, point: int) -> QColor | None:
        """A point's colour on the change scale, or None while the map shows families."""
        if self.change is None or self.map is None:
            return None
        value = self.change.value_of(self.map.pieces[point])
        return change_colour(None if value is None else self.change.share(value))

    def _colour_by_change(self) -> None:
        items = list(self._family_items.items()) + ([("", self._rest_item)] if self._rest_item else [])
        for family, item in items:
            if self.change is None:
                # Back to the item's one brush: no point keeps a style of its own (the fast drawing).
                item.data["brush"] = None
                index = self.map.families.index(family) if family and self.map is not None else -1
                item.setBrush(pg.mkBrush(theme.family_colour(index) if family else _rest_colour(self._big)))
            else:
                # One brush a value, shared: a whole vocabulary's points are not 30,000 brushes.
                brushes: dict[float | None, QBrush] = {}  # overlaps have k + 1 values
                chosen = []
                for point in item.data["data"].tolist():
                    value = self.change.value_of(self.map.pieces[point]) if self.map is not None else None
                    if value not in brushes:
                        brushes[value] = pg.mkBrush(self.point_colour(int(point)))
                    chosen.append(brushes[value])
                item.setBrush(chosen)

    def _set_labels(self) -> None:
        shown = self.map
        if shown is None:
            return
        big = len(shown) > MAX_LABELLED_POINTS
        order = np.flatnonzero(shown.family_of != NO_FAMILY) if big else np.arange(len(shown))
        order = order[:MAX_LABELLED_POINTS]
        colours = [self._label_colour(int(f)) for f in shown.family_of[order]]
        groups = [shown.families[f] if f >= 0 else "" for f in shown.family_of[order].tolist()]
        texts = [shown.labels[i] for i in order.tolist()]
        x, y = shown.coords[order, 0], shown.coords[order, 1]
        # Rings first: every neighbour gets its name before the family words fill the room.
        token, at, places, names = self._selection
        ring_x = [p[0] for p, n in zip(places, names, strict=False) if p is not None]
        ring_y = [p[1] for p, n in zip(places, names, strict=False) if p is not None]
        ring_names = [n for p, n in zip(places, names, strict=False) if p is not None]
        keep = [i for i, n in enumerate(ring_names) if not self._ring_hidden(n)]
        ring_x, ring_y, ring_names = [ring_x[i] for i in keep], [ring_y[i] for i in keep], [ring_names[i] for i in keep]
        accent = theme.accent()
        already = set(ring_names)
        rest = [i for i, t in enumerate(texts) if t not in already]
        obstacles = shown.coords[order] if not big else np.column_stack([x, y])
        extra = np.array([[a, b] for a, b in zip(ring_x, ring_y, strict=True)] + ([list(at)] if at else []))
        self.labels.set_labels(
            np.concatenate([np.asarray(ring_x, dtype=float), x[rest]]),
            np.concatenate([np.asarray(ring_y, dtype=float), y[rest]]),
            ring_names + [texts[i] for i in rest],
            ["ring"] * len(ring_names) + [groups[i] for i in rest],
            [accent] * len(ring_names) + [colours[i] for i in rest],
            np.vstack([obstacles, extra.reshape(-1, 2)]),
        )
        del token

    def _label_colour(self, family: int) -> QColor:
        if family < 0:
            return theme.plot_foreground()
        colour = theme.family_colour(family)
        return colour if theme.is_dark() else colour.darker(120)

    def _tip(self, x: float, y: float, data: object) -> str:
        shown = self.map
        if shown is None:
            return ""
        i = int(str(data))
        family = shown.family_of[i]
        where = shown.families[family] if family >= 0 else "no family"
        return f"{shown.labels[i]}  ({where})\nid {', '.join(map(str, shown.pieces[i]))}"

    def _on_hovered(self, item: pg.ScatterPlotItem, spots: Sequence[object], _event: object) -> None:
        if len(spots):
            spot = spots[0]
            pos = spot.pos()  # type: ignore[attr-defined]
            self._hover_item.setData(
                x=[pos.x()], y=[pos.y()], size=spot.size() + 4,  # type: ignore[attr-defined]
                brush=item.opts["brush"], pen=item.opts["pen"],
            )
            self._hover_item.setVisible(item.isVisible())
            self._hover_owner = item
        elif self._hover_owner is item:
            self._hover_item.setVisible(False)
            self._hover_owner = None

    @property
    def hovered(self) -> tuple[float, float] | None:
        """Where the point under the pointer is drawn larger, or None."""
        if not self._hover_item.isVisible():
            return None
        xs, ys = self._hover_item.getData()
        return float(xs[0]), float(ys[0])

    def _on_clicked(self, _item: object, spots: Sequence[object]) -> None:
        if len(spots) and self.map is not None:
            self.point_clicked.emit(self.map.texts[int(str(spots[0].data()))])  # type: ignore[attr-defined]

    @property
    def families(self) -> list[str]:
        return list(self._family_items)

    def visible_points(self, family: str) -> int:
        item = self._family_items.get(family)
        return 0 if item is None or not item.isVisible() else len(item.data)

    # ----- families: hide and highlight ---------------------------------------------------
    def set_hidden(self, hidden: set[str]) -> None:
        self._hidden = set(hidden)
        self._restyle()
        if self._selection[1] is not None:
            self._draw_selection()  # rings on a hidden family's words go with it
        else:
            self._set_labels()
        self._update_caption()
        self.set_search_matches(self._matches)

    def set_highlight(self, family: str | None) -> None:
        self._highlight = family
        self._restyle()

    @property
    def highlighted(self) -> str | None:
        return self._highlight

    @property
    def highlight_count(self) -> int:
        return len(self._highlight_item.data)

    def _restyle(self) -> None:
        dim = self._highlight is not None and self._highlight not in self._hidden
        faint = 0.12 if self._isolated else (0.3 if dim else 1.0)
        for family, item in self._family_items.items():
            item.setVisible(family not in self._hidden)
            item.setOpacity(1.0 if family == self._highlight and not self._isolated else faint)
        if self._rest_item is not None:
            self._rest_item.setOpacity(faint)
        dimmed = {f for f in self._family_items if (dim or self._isolated) and f != self._highlight}
        self.labels.set_state(self._hidden, dimmed | ({""} if self._isolated else set()))
        if dim and self._highlight is not None and not self._isolated:
            item = self._family_items[self._highlight]
            x, y = item.getData()
            colour = item.opts["brush"].color()
            self._highlight_item.setData(
                x=x, y=y, size=self._sized(HIGHLIGHT_SIZE), brush=pg.mkBrush(colour),
                pen=pg.mkPen(theme.plot_foreground(), width=self._sized(2)),
            )
        else:
            self._highlight_item.setData(x=[], y=[])
        self._hide_empty_overlays()
        self._update_caption()

    def _hide_empty_overlays(self) -> None:
        """An empty scatter still costs a paint on every frame: hide the overlays with nothing to show."""
        for item in (
            self._highlight_item, self._match_item, self._current_item, self._query_item, self._neighbour_item
        ):
            item.setVisible(len(item.data) > 0)

    def _visible_mask(self) -> np.ndarray:
        """Which points are shown: those of hidden families are not."""
        assert self.map is not None
        hidden = [i for i, f in enumerate(self.map.families) if f in self._hidden]
        return ~np.isin(self.map.family_of, hidden)

    def _update_caption(self) -> None:
        if self.map is not None:
            name = fonts.for_map(self.model_name, self.labels.font)
            self._caption_html = _caption(self.map, name, self._hidden)
            if self.change is not None:
                self._caption_html += "<br>" + html.escape(self.change.sentence(), quote=False)
            self._show_caption(self._caption_html)
            self._caption_short = False
            self._fit_caption(force=True)

    def _show_caption(self, html: str) -> None:
        self.caption.setText(html, size=f"{9 * self.marker_scale:g}pt")

    def _fit_caption(self, force: bool = False) -> None:
        """Wrap the caption at the canvas' width: a long line would widen the plot past the canvas' edge.

        On a short canvas (a laptop in presentation mode) the whole caption would leave the
        plot a strip: past ``CAPTION_SHARE`` of the height only its first line stays, the
        rest in its tooltip. Pictures always get the whole caption (``_export_geometry``).
        """
        left, _top, right, _bottom = self.ci.layout.getContentsMargins()
        room = self.viewport().width() - left - right - 2 * self.ci.layout.horizontalSpacing() - 4
        height = self.viewport().height()
        if room <= 0 or not (force or self._caption_fit != (room, height)):
            return
        self._caption_fit = (room, height)
        whole = self._caption_html
        if self._caption_short:
            self._show_caption(whole)
            self._caption_short = False
        self.caption.item.setTextWidth(room)
        if whole and self.caption.text == whole and self.caption.item.boundingRect().height() > CAPTION_SHARE * height:
            self._show_caption(whole.split("<br>")[0])
            self.caption.item.setTextWidth(room)
            self._caption_short = True
            self.caption.setToolTip(QTextDocumentFragment.fromHtml(whole).toPlainText())
        else:
            self.caption.setToolTip("")
        self.caption.updateMin()

    @property
    def caption_html(self) -> str:
        """The caption as pictures show it: whole, even while the canvas shows its first line only."""
        return self._caption_html if self._caption_short else self.caption.text

    def resizeEvent(self, event: QResizeEvent | None) -> None:  # noqa: N802 - Qt's name
        if hasattr(self, "caption"):  # pyqtgraph resizes the view before __init__ has made the caption
            self._fit_caption()
        super().resizeEvent(event)

    # ----- the selected token -------------------------------------------------------------
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
            tip=lambda x, y, data: f"{data}  (the selected token)",
        )
        rings = [(p, n) for p, n in zip(places, names, strict=False) if p is not None and not self._ring_hidden(n)]
        self._neighbour_item.setData(
            x=[p[0] for p, _ in rings],
            y=[p[1] for p, _ in rings],
            data=[n for _, n in rings],
            brush=pg.mkBrush(None),
            pen=pg.mkPen(colour, width=self._sized(2)),
            tip=lambda x, y, data: f"{data}  (a nearest row of {token})",
        )
        self._query_label.setText(fonts.for_map(token, self.labels.font), color=colour)
        self._query_label.setPos(at[0], at[1])
        self._query_label.setVisible(True)
        self._place_query_label()
        self.labels.set_selected(token)
        self._set_labels()
        self._hide_empty_overlays()

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
        """Map coordinates to scene pixels, all at once (the view's mapping is affine)."""
        origin = view.mapViewToScene(QPointF(0, 0))
        unit_x, unit_y = view.mapViewToScene(QPointF(1, 0)) - origin, view.mapViewToScene(QPointF(0, 1)) - origin
        x, y = points[:, 0:1], points[:, 1:2]
        return np.hstack([
            origin.x() + x * unit_x.x() + y * unit_y.x(),
            origin.y() + x * unit_x.y() + y * unit_y.y(),
        ])

    @property
    def selection(self) -> tuple[str, tuple[float, float] | None, list[tuple[float, float]]]:
        """The selected token, its place, and the rings drawn now (those of hidden families left out)."""
        xs, ys = self._neighbour_item.getData()
        return self._selection[0], self._selection[1], [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]

    @property
    def hidden(self) -> set[str]:
        return set(self._hidden)

    def legend_entries(self) -> list[tuple[str, QColor | None, QColor | None, int, str]]:
        """What the exported legend lists: (symbol, fill, outline, size in px, text)."""
        entries: list[tuple[str, QColor | None, QColor | None, int, str]] = []
        if self.change is not None:
            for share, text in ((0.0, "most changed"), (0.5, "half way"), (1.0, "unchanged"), (None, "not in B")):
                entries.append(("o", change_colour(share), None, 10, text))
        for family, item in self._family_items.items():
            if family not in self._hidden and self.change is None:
                colour = item.opts["brush"].color()
                entries.append(("o", colour, colour.darker(150), 10, family))
        if self._rest_item is not None:
            entries.append(("o", _rest_colour(False), None, 6, "other rows"))
        if self._selection[1] is not None:
            accent = theme.accent()
            entries.append(("star", accent, QColor("black"), 16, f"{self._selection[0]}: the selected token"))
            entries.append(("ring", None, accent, 12, "rings: its nearest rows"))
        # Presentation mode draws the legend's markers as much larger as the map's.
        return [(sym, fill, outline, round(self._sized(size)), text) for sym, fill, outline, size, text in entries]

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
        self._hide_empty_overlays()
        if self._isolated:
            self.isolate(False)

    # ----- finding things -------------------------------------------------------------------
    def search(self, text: str) -> int:
        """Mark the points whose text contains ``text`` (any case); returns how many are shown."""
        if self.map is None or not text.strip():
            return self.set_search_matches(np.empty(0, dtype=np.int64))
        needle = text.strip().casefold()
        if self._folded is None:  # once per map: 50,257 casefolds would cost each keystroke 30 ms
            self._folded = [t.casefold() for t in self.map.texts]
        found = [i for i, t in enumerate(self._folded) if needle in t]
        return self.set_search_matches(np.asarray(found, dtype=np.int64))

    def set_search_matches(self, matches: np.ndarray) -> int:
        if self.map is not None and matches.size:
            matches = matches[self._visible_mask()[matches]]
        self._matches, self._current = matches, -1
        if self.map is None or not matches.size:
            self._match_item.setData(x=[], y=[])
            self._current_item.setData(x=[], y=[])
        else:
            # Not the accent of the star and rings: a search and a selection can be on screen together.
            self._match_item.setData(
                x=self.map.coords[matches, 0], y=self.map.coords[matches, 1],
                brush=pg.mkBrush(None), pen=pg.mkPen(theme.plot_foreground(), width=2),
            )
            self._current_item.setData(x=[], y=[])
        self._hide_empty_overlays()
        self.matches_changed.emit(int(matches.size), -1)
        return int(matches.size)

    @property
    def matches(self) -> list[str]:
        return [] if self.map is None else [self.map.labels[i] for i in self._matches.tolist()]

    def next_match(self) -> str:
        """Centre the view on the next match (keeping the zoom) and ring it; its label, or ""."""
        if self.map is None or not self._matches.size:
            return ""
        self._current = (self._current + 1) % self._matches.size
        index = int(self._matches[self._current])
        x, y = self.map.coords[index]
        (x0, x1), (y0, y1) = self.plot.getViewBox().viewRange()
        self.plot.getViewBox().setRange(
            xRange=(x - (x1 - x0) / 2, x + (x1 - x0) / 2), yRange=(y - (y1 - y0) / 2, y + (y1 - y0) / 2), padding=0
        )
        self._current_item.setData(
            x=[x], y=[y], brush=pg.mkBrush(None), pen=pg.mkPen(theme.plot_foreground(), width=3)
        )
        self._hide_empty_overlays()
        self.matches_changed.emit(int(self._matches.size), self._current)
        return self.map.labels[index]

    def isolate(self, on: bool) -> bool:
        """Show the selected token and its rings alone (others faint), zoomed to them; False if none."""
        token, at, places, _names = self._selection
        if on and at is None:
            return False
        self._isolated = on
        self._restyle()
        if on and at is not None:
            points = np.array([at] + [p for p in places if p is not None], dtype=float)
            (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
            pad_x, pad_y = max((x1 - x0) * 0.15, 1e-3), max((y1 - y0) * 0.15, 1e-3)
            self.plot.getViewBox().setRange(xRange=(x0 - pad_x, x1 + pad_x), yRange=(y0 - pad_y, y1 + pad_y), padding=0)
        else:
            self.reset_view()
        del token
        return True

    @property
    def isolated(self) -> bool:
        return self._isolated

    def reset_view(self) -> None:
        """Show the whole map again."""
        self.plot.autoRange(padding=0.08)

    def set_labels_visible(self, on: bool) -> None:
        self.labels.set_on(on)

    # ----- looks and export ---------------------------------------------------------------
    def apply_palette(self) -> None:
        self.setBackground(theme.plot_background())
        foreground = theme.plot_foreground()
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).setPen(foreground)
            self.plot.getAxis(axis).setTextPen(foreground)
        self.legend.setLabelTextColor(foreground)
        self.caption.setAttr("color", foreground.name())
        self.caption.setText(self.caption.text)
        backdrop = theme.plot_background()
        backdrop.setAlpha(200)
        self._query_label.fill = pg.mkBrush(backdrop)
        self._query_label.update()

    def show_legend(self, visible: bool) -> None:
        # Filled only when shown: on screen it stays hidden, and rebuilding it costs paint time.
        self.legend.clear()
        if visible:
            self.legend.opts["labelTextSize"] = f"{LEGEND_TEXT_PT * self.marker_scale:g}pt"
            for symbol, fill, outline, size, text in self.legend_entries():
                brush = pg.mkBrush(fill) if fill is not None else pg.mkBrush(None)
                width = self._sized(2 if symbol == "ring" else 1)
                pen = pg.mkPen(outline, width=width) if outline is not None else None
                self.legend.addItem(
                    _legend_sample("o" if symbol == "ring" else symbol, size, brush, pen),
                    fonts.for_map(text, self.labels.font),
                )
            for _sample, label in self.legend.items:
                label.item.setFont(fonts.map_font(10 * self.marker_scale))
        self._legend_column.setVisible(visible)
        # As wide as its longest line needs (a long selected token, presentation's larger type).
        needed = self.legend.layout.effectiveSizeHint(pg.QtCore.Qt.SizeHint.PreferredSize).width() + 12
        self._legend_column.setMaximumWidth(round(max(self._sized(220), needed)) if visible else 0)
        self.ci.layout.activate()

    def render_image(self, width: int) -> QImage:
        """The whole map (legend and caption included) as an image ``width`` pixels wide."""
        from pyqtgraph.exporters import ImageExporter

        on_screen = self._legend_column.isVisible()
        # Taken before the legend joins: on a short canvas the legend alone stretches the layout.
        screen_geometry = self.ci.geometry()
        self.show_legend(True)
        # pyqtgraph's legend ignores the scene's scaling, so a picture wider than the screen
        # would shrink it beside the axis text: scaled with the rest while exporting.
        ignores = pg.QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations
        self.legend.setFlag(ignores, False)
        self._export_geometry(screen_geometry)
        try:
            exporter = ImageExporter(self.ci)
            exporter.parameters()["width"] = int(width)
            image = exporter.export(toBytes=True)
            if image is not None and not image.isNull():
                self.export_text_areas = self._text_areas_in(image)
        finally:
            self.legend.setFlag(ignores, True)
            self.show_legend(on_screen)
            self._fit_caption(force=True)
            # Last: while the legend and the whole caption were in, the layout's least size was the
            # picture's, and the screen's geometry would be stretched to it (the map then drawn
            # larger than the canvas, cut at its edges).
            self.ci.setGeometry(screen_geometry)
        if image is None or image.isNull():
            raise OSError("The map could not be drawn into an image.")
        return image

    def _export_geometry(self, screen_geometry: QRectF) -> None:
        """Lay the map out at least ``EXPORT_SCENE`` large for a picture (``screen_geometry``: as on screen).

        A picture drawn at the size of a laptop's canvas would give the legend half its width
        (and cut its longest line) and wrap the caption into many lines.
        """
        width = max(screen_geometry.width(), EXPORT_SCENE[0])
        height = max(screen_geometry.height(), EXPORT_SCENE[1])
        if self._caption_short:
            self._show_caption(self._caption_html)  # _fit_caption shortens it again after the picture
        self.caption.item.setTextWidth(width - 30)
        self.caption.updateMin()
        self.ci.setGeometry(QRectF(screen_geometry.topLeft(), QSizeF(width, height)))

    def _text_areas_in(self, image: QImage) -> dict[str, QRectF]:
        """Where the caption, the legend's names and the axis titles lie in an exported image.

        The exporter scales the layout's scene rectangle onto the image, so the same scaling
        maps each text item; the self-test checks that these areas are not blank.
        """
        source = self.ci.sceneBoundingRect()
        sx, sy = image.width() / source.width(), image.height() / source.height()

        def mapped(rect: QRectF) -> QRectF:
            x, y = (rect.x() - source.x()) * sx, (rect.y() - source.y()) * sy
            return QRectF(x, y, rect.width() * sx, rect.height() * sy)

        areas = {"caption": mapped(self.caption.item.sceneBoundingRect())}
        names = [label.item.sceneBoundingRect() for _sample, label in self.legend.items]
        if names:
            legend = names[0]
            for rect in names[1:]:
                legend = legend.united(rect)
            areas["legend names"] = mapped(legend)
        for axis in ("bottom", "left"):
            areas[f"{axis} axis title"] = mapped(self.plot.getAxis(axis).label.sceneBoundingRect())
        return areas

    def export_png(self, path: str | Path, width: int = 1600, texts: dict[str, str] | None = None) -> None:
        """Write a PNG atomically: a failed write (full disk, no permission) leaves no file.

        ``texts`` become the PNG's text chunks (where the map came from).
        """
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        image = self.render_image(width)
        for key, value in (texts or {}).items():
            image.setText(key, value)
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        # The stubs say bytes, but PySide6 6.11 accepts only a str format here.
        if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
            raise OSError("The map image could not be encoded as PNG.")
        buffer.close()
        atomic_write_bytes(path, bytes(data.data()), through_link=True)


def _rest_colour(big: bool) -> QColor:
    """Grey for the rows in no family: light, so that thousands of them stay a background."""
    grey = QColor("#9a9a9a") if not theme.is_dark() else QColor("#8a8a8a")
    grey.setAlpha(55 if big else 170)
    return grey


def _caption(shown: WordMap, model_name: str, hidden: set[str]) -> str:
    lines = caption_lines(shown, model_name, hidden)
    lines[0] = f"<b>{model_name}</b>{lines[0][len(model_name):]}"
    return "<br>".join(lines)
