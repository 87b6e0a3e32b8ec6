"""The map as a picture: the whole layout (legend and caption in) drawn into an image and written as PNG."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSizeF
from PySide6.QtGui import (
    QImage,
)

from ...core.common.files import atomic_write_bytes
from .canvas_parts import CanvasParts
from .sizes import (
    EXPORT_SCENE,
)


class Picture(CanvasParts):
    """The map drawn into an image and written as PNG."""

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
