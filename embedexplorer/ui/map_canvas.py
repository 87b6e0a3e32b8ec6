"""The family map drawn with pyqtgraph: the same picture on screen and in exported files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPainterPath
from PySide6.QtWidgets import QWidget

from ..core.files import atomic_write_bytes
from ..core.maps import FamilyMap, MapPoint
from ..core.texts import fixed
from . import fonts, theme

# Beyond this many points the labels hide the dots; hover tips name them instead.
MAX_LABELLED_POINTS = 500
# How far above its point a label's baseline sits, in pixels (the dots are 11 px wide).
LABEL_LIFT_PX = 8.0


class WordLabels(pg.GraphicsObject):
    """Every word label of the map in one item, drawn in one pass.

    One ``TextItem`` per word costs a transform update per item on every pan and
    made the first showing of the map stall the window; here the labels are one
    paint call that places each text above its point, sized in scene pixels
    (so an exported picture scales them with everything else).
    """

    def __init__(self) -> None:
        super().__init__()
        self.font: QFont = fonts.map_font(8)
        self._x = np.empty(0)
        self._y = np.empty(0)
        self._texts: list[str] = []
        self._families: list[str] = []
        self._colours: list[QColor] = []
        self._widths: list[float] = []
        self._hidden: set[str] = set()
        self._dimmed: set[str] = set()
        self._selected = ""
        self.setAcceptedMouseButtons(pg.QtCore.Qt.MouseButton.NoButton)

    def set_labels(self, points: list[MapPoint], colours: dict[str, QColor]) -> None:
        self.prepareGeometryChange()
        self._x = np.array([p.x for p in points], dtype=float)
        self._y = np.array([p.y for p in points], dtype=float)
        self._texts = [fonts.for_map(p.token, self.font) for p in points]
        self._families = [p.family for p in points]
        self._colours = [colours[p.family] for p in points]
        metrics = QFontMetricsF(self.font)
        self._widths = [metrics.horizontalAdvance(text) for text in self._texts]
        self.update()

    def set_state(self, hidden: set[str], dimmed: set[str]) -> None:
        self._hidden, self._dimmed = set(hidden), set(dimmed)
        self.update()

    def set_selected(self, token: str) -> None:
        """Leave out the selected token's own label: the selection marker names it already."""
        self._selected = token
        self.update()

    @property
    def shown(self) -> list[str]:
        """The labels drawn now (not those of hidden families, nor the selected word's)."""
        return [
            t for t, f in zip(self._texts, self._families, strict=True) if f not in self._hidden and t != self._selected
        ]

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange: Any = None) -> tuple[float | None, float | None]:  # noqa: N802 - pyqtgraph's name
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
        if not self._texts:
            return
        to_scene = self.sceneTransform()
        scene_x = to_scene.m11() * self._x + to_scene.m21() * self._y + to_scene.m31()
        scene_y = to_scene.m12() * self._x + to_scene.m22() * self._y + to_scene.m32()
        # Draw in scene units: the painter maps them to the screen, or to the exported picture.
        painter.setTransform(to_scene.inverted()[0] * painter.transform())
        painter.setFont(self.font)
        for i, text in enumerate(self._texts):
            family = self._families[i]
            if family in self._hidden or text == self._selected:
                continue
            painter.setOpacity(0.3 if family in self._dimmed else 1.0)
            painter.setPen(self._colours[i])
            painter.drawText(QPointF(scene_x[i] - self._widths[i] / 2, scene_y[i] - LABEL_LIFT_PX), text)


class MapCanvas(pg.GraphicsLayoutWidget):
    """Scatter of the family words, a legend, a caption, and the selected token's place.

    Families can be hidden or highlighted; the highlight is drawn as a second item on top
    rather than by restyling every point, and the others are dimmed by item opacity.
    """

    point_clicked = Signal(str)  # the word of a clicked point

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.setLabel("bottom", "direction 1 of the map")
        self.plot.setLabel("left", "direction 2 of the map")
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        # The legend sits beside the plot, not on it, so it never hides a point.
        self.legend = pg.LegendItem(labelTextSize="10pt")
        side = self.addLayout(row=0, col=1)
        side.addItem(self.legend, row=0, col=0)
        side.addLabel("", row=1, col=0)
        side.layout.setRowStretchFactor(1, 10)
        side.setMaximumWidth(140)
        self.ci.layout.setColumnStretchFactor(0, 10)
        self._legend_column = side
        self.show_legend(False)  # on screen the family panel is the legend; pictures get this one
        self.caption = pg.LabelItem(justify="left")
        self.addItem(self.caption, row=1, col=0, colspan=2)
        self._family_items: dict[str, pg.ScatterPlotItem] = {}
        self._points: list[MapPoint] = []
        self.labels = WordLabels()
        self.labels.setZValue(4)
        self.plot.addItem(self.labels)
        self._hidden: set[str] = set()
        self._highlight: str | None = None
        # set by render_image: where its texts lie in the last exported picture, in pixels
        self.export_text_areas: dict[str, QRectF] = {}
        self._highlight_item = pg.ScatterPlotItem(pxMode=True)
        self._highlight_item.setZValue(5)
        self._query_item = pg.ScatterPlotItem(pxMode=True, symbol="star", size=22)
        self._query_item.setZValue(10)
        self._neighbour_item = pg.ScatterPlotItem(pxMode=True, symbol="o", size=15)
        self._neighbour_item.setZValue(9)
        self._query_label = pg.TextItem(anchor=(0, 1))
        self._query_label.setZValue(11)
        for item in (self._highlight_item, self._neighbour_item, self._query_item, self._query_label):
            self.plot.addItem(item)
        self._use_map_font()
        self.apply_palette()

    def _use_map_font(self) -> None:
        """Every text of the map in the bundled family, so pictures match on every machine."""
        for axis in ("bottom", "left"):
            item = self.plot.getAxis(axis)
            item.setStyle(tickFont=fonts.map_font(8))
            item.label.setFont(fonts.map_font(9))
        self.caption.item.setFont(fonts.map_font(9))
        self._query_label.textItem.setFont(fonts.map_font(10))

    # ----- content -----------------------------------------------------------------------
    def set_map(self, family_map: FamilyMap, model_name: str, hidden: set[str] | None = None) -> None:
        """Draw a FamilyMap: one scatter item and one brush per family; ``hidden`` ones stay hidden."""
        if hidden is not None:
            self._hidden = set(hidden)
        for item in self._family_items.values():
            self.plot.removeItem(item)
        self._family_items.clear()
        self._points = list(family_map.points)
        label_colours: dict[str, QColor] = {}
        for index, family in enumerate(family_map.families):
            members = [p for p in self._points if p.family == family]
            colour = theme.family_colour(index)
            item = pg.ScatterPlotItem(
                x=np.array([p.x for p in members]),
                y=np.array([p.y for p in members]),
                data=np.arange(len(members)),
                brush=pg.mkBrush(colour),
                pen=pg.mkPen(colour.darker(150), width=1),
                size=11,
                pxMode=True,
                hoverable=True,
                hoverSize=15,
                tip=self._tip_for(members),
                name=fonts.for_map(family, self.labels.font),
            )
            item.sigClicked.connect(lambda _item, spots, m=members: self._on_clicked(m, spots))
            self.plot.addItem(item)
            self._family_items[family] = item
            label_colours[family] = colour.darker(120) if not theme.is_dark() else colour
        labelled = self._points if len(self._points) <= MAX_LABELLED_POINTS else []
        self.labels.set_labels(labelled, label_colours)
        self.caption.setText(_caption(family_map, fonts.for_map(model_name, self.labels.font)), size="9pt")
        self.clear_selection()
        self._restyle()
        self.plot.autoRange(padding=0.08)

    @staticmethod
    def _tip_for(members: list[MapPoint]) -> Callable[[float, float, object], str]:
        def tip(x: float, y: float, data: object) -> str:
            point = members[int(str(data))]
            name = f"{fonts.for_window(point.token)}  ({fonts.for_window(point.family)})"
            return f"{name}\nid {', '.join(map(str, point.ids))}"

        return tip

    def _on_clicked(self, members: list[MapPoint], spots: Sequence[pg.SpotItem]) -> None:
        if len(spots):
            self.point_clicked.emit(members[int(spots[0].data())].word)

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
        for family, item in self._family_items.items():
            visible = family not in self._hidden
            item.setVisible(visible)
            item.setOpacity(0.3 if dim and family != self._highlight else 1.0)
        dimmed = {f for f in self._family_items if dim and f != self._highlight}
        self.labels.set_state(self._hidden, dimmed)
        if dim and self._highlight is not None:
            item = self._family_items[self._highlight]
            x, y = item.getData()
            colour = item.opts["brush"].color()
            self._highlight_item.setData(
                x=x, y=y, size=16, brush=pg.mkBrush(colour), pen=pg.mkPen(theme.plot_foreground(), width=2)
            )
        else:
            self._highlight_item.setData(x=[], y=[])

    # ----- the selected token -------------------------------------------------------------
    def set_selection(self, token: str, at: tuple[float, float] | None, neighbours: list[tuple[float, float]]) -> None:
        if at is None:
            self.clear_selection()
            return
        colour = theme.accent()
        self._query_item.setData(x=[at[0]], y=[at[1]], brush=pg.mkBrush(colour), pen=pg.mkPen("k", width=1))
        xs = [p[0] for p in neighbours]
        ys = [p[1] for p in neighbours]
        self._neighbour_item.setData(x=xs, y=ys, brush=pg.mkBrush(None), pen=pg.mkPen(colour, width=2))
        self._query_label.setText(fonts.for_map(token, self.labels.font), color=colour)
        self._query_label.setPos(at[0], at[1])
        self._query_label.setVisible(True)
        self.labels.set_selected(fonts.for_map(token, self.labels.font))

    def clear_selection(self) -> None:
        self._query_item.setData(x=[], y=[])
        self._neighbour_item.setData(x=[], y=[])
        self._query_label.setVisible(False)
        self.labels.set_selected("")

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

    def show_legend(self, visible: bool) -> None:
        # Filled only when shown: on screen it stays hidden, and rebuilding it costs paint time.
        self.legend.clear()
        if visible:
            for family, item in self._family_items.items():
                if family not in self._hidden:
                    self.legend.addItem(item, item.name())
            for _sample, label in self.legend.items:
                label.item.setFont(fonts.map_font(10))
        self._legend_column.setVisible(visible)
        self._legend_column.setMaximumWidth(140 if visible else 0)
        self.ci.layout.activate()

    def render_image(self, width: int) -> QImage:
        """The whole map (legend and caption included) as an image ``width`` pixels wide."""
        from pyqtgraph.exporters import ImageExporter

        on_screen = self._legend_column.isVisible()
        self.show_legend(True)
        try:
            exporter = ImageExporter(self.ci)
            exporter.parameters()["width"] = int(width)
            image = exporter.export(toBytes=True)
            if image is not None and not image.isNull():
                self.export_text_areas = self._text_areas_in(image)
        finally:
            self.show_legend(on_screen)
        if image is None or image.isNull():
            raise OSError("The map could not be drawn into an image.")
        return image

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

    def export_png(self, path: str | Path, width: int = 1600) -> None:
        """Write a PNG atomically: a failed write (full disk, no permission) leaves no file."""
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        image = self.render_image(width)
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        # The stubs say bytes, but PySide6 6.11 accepts only a str format here.
        if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
            raise OSError("The map image could not be encoded as PNG.")
        buffer.close()
        atomic_write_bytes(path, bytes(data.data()))

    def export_svg(self, path: str | Path) -> None:
        """Write an SVG drawing of the whole map, atomically.

        Qt's own SVG generator paints the scene; pyqtgraph's SVGExporter cannot parse
        the path data that Qt 6.12 writes.
        """
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF
        from PySide6.QtGui import QPainter
        from PySide6.QtSvg import QSvgGenerator

        on_screen = self._legend_column.isVisible()
        self.show_legend(True)
        source = self.ci.sceneBoundingRect()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        generator = QSvgGenerator()
        generator.setOutputDevice(buffer)
        generator.setSize(source.size().toSize())
        generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
        generator.setTitle("EmbedExplorer family map")
        painter = QPainter(generator)
        try:
            self.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)
        finally:
            painter.end()
            self.show_legend(on_screen)
        buffer.close()
        atomic_write_bytes(path, bytes(data.data()))


def _caption(family_map: FamilyMap, model_name: str) -> str:
    width = family_map.projection.axes.shape[1]
    between = family_map.between_family_cosine
    # A ratio to a mean that rounds to zero is noise (an untrained table's is about 0).
    ratio = f"ratio {family_map.family_ratio:.1f}" if abs(between) >= 0.005 else "no ratio: that is about 0"
    lines = [
        f"<b>{model_name}</b>: {len(family_map.points)} words in {len(family_map.families)} families",
        "The map shows the two directions in which they differ most; "
        f"it keeps {family_map.explained_variance:.1%} of the spread.",
        f"On all {width} numbers: mean cosine within a family {fixed(family_map.within_family_cosine, 2)}, "
        f"between families {fixed(between, 2)} ({ratio}).",
    ]
    if family_map.notes:
        lines.append(f"{len(family_map.notes)} word(s) were not single tokens: see the notes below the map.")
    return "<br>".join(lines)
