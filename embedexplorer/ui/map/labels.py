"""The map's word labels: placed around their dots so that no two overlap, and where the star's name goes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
)

from ..style import fonts
from .sizes import (
    LABEL_GAP_PX,
    SMALL_FAMILY_SIZE,
    STAR_LABEL_CORNERS,
)


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
        # They are placed inside the view as it is then, so a dot at its edge (the map's outermost
        # words, at the zoom it opens with) has its label on the side where there is room.
        bounds = view.sceneBoundingRect()
        key = (to_scene.m11(), to_scene.m12(), to_scene.m21(), to_scene.m22(), self._version)
        if key != self._layout_key:
            wanted = [self._wanted(i) for i in range(len(self._texts))]

            def to_scene_pixels(x: float, y: float) -> tuple[float, float]:
                point = to_scene.map(QPointF(x, y))
                return point.x(), point.y()

            reserved = self.reserved_box(to_scene_pixels)
            found = place_labels(
                sx, sy, self._widths, self._metrics.height(), wanted, ox, oy, bounds, reserved, radius=self.dot_radius
            )
            self._offsets = [
                (i, rect.left() - sx[i], rect.top() - sy[i], rect.width(), rect.height()) for i, rect in found
            ]
            self._layout_key = key
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
    spacing: float = 0.0,
) -> list[tuple[int, QRectF]]:
    """Place labels in pixels around their dots (sx, sy), in order, clear of each other and of the dots (ox, oy).

    Each label tries eight places (right, left, above, below, then the corners) and takes
    the first that stays inside ``bounds`` and touches nothing placed; one with no room is
    left out (``bounds`` None: no edge). ``reserved`` boxes (left, top, right, bottom), such
    as the selected token's own name beside its star, are kept clear too; ``radius`` is the
    dots' radius in pixels. ``spacing`` pixels are kept between two labels and between a label
    and a reserved box (a picture that another program draws, whose text may come out a pixel
    larger than measured here). Returns (label index, rectangle) of each placed label.
    """
    # Plain floats, not QRectF: this runs in the GUI thread for every new selection, and a
    # call into Qt per test would cost several times the test itself.
    edge = None if bounds is None else (bounds.left(), bounds.top(), bounds.right(), bounds.bottom())
    grid = _Grid(32.0)  # the dots
    texts = _Grid(32.0)  # the labels placed and the reserved boxes: kept ``spacing`` apart
    for px, py in zip(ox.tolist(), oy.tolist(), strict=True):
        if edge is None or (edge[0] <= px <= edge[2] and edge[1] <= py <= edge[3]):
            grid.add((px - radius, py - radius, px + radius, py + radius))
    for box in reserved:
        texts.add(box)
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
            spaced = (rect[0] - spacing, rect[1] - spacing, rect[2] + spacing, rect[3] + spacing)
            if inside and not grid.hits(rect) and not texts.hits(spaced):
                texts.add(rect)
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
