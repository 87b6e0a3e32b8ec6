"""The map's exports: a picture (PNG or SVG), a web page, the points (CSV or JSON); the File and Map menus' entries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog

from ...core.common.constants import EXPORT_WIDTH_RANGE
from ...core.common.errors import EmbedExplorerError
from ...map_pictures import png_texts, write_svg
from ..widgets.save_target import ask_save_target, confirm_replace, not_exported, refused_export

if TYPE_CHECKING:
    from .view import MapView


class MapExports:
    """Writes the map on ``view`` to files the user names; says what happened through the view's
    ``message`` and ``status``. Its actions are usable once a map is on screen (``set_enabled``)."""

    def __init__(self, view: MapView) -> None:
        self.view = view
        self.export_action = QAction("E&xport map...", view)
        self.export_action.triggered.connect(self.export_dialog)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.page_action = QAction("Export map as web pa&ge...", view)
        self.page_action.setToolTip("One HTML file that opens offline in any browser: zoom, pan, find, hover tips")
        self.page_action.triggered.connect(self.export_page_dialog)
        self.points_action = QAction("Export poi&nts (CSV or JSON)...", view)
        self.points_action.triggered.connect(self.export_points_dialog)
        self.actions = (self.export_action, self.page_action, self.points_action)
        self.set_enabled(False)

    def set_enabled(self, on: bool) -> None:
        for action in self.actions:
            action.setEnabled(on)

    def export_dialog(self) -> None:
        if not self.view.can_export:
            return
        start = Path(self.view.settings.export_dir or Path.home()) / "embedding-map.png"
        path, chosen = QFileDialog.getSaveFileName(
            self.view.window(),  # a dialog of the window fits the screen and its title (fitting.ScreenFit)
            "Export the map",
            str(start),
            "PNG image (*.png);;SVG drawing (*.svg)",
            options=QFileDialog.Option.DontConfirmOverwrite,  # asked below, once the suffix is known
        )
        if not path:
            return
        if "svg" in chosen.lower() and not path.lower().endswith(".svg"):
            path += ".svg"
        elif not path.lower().endswith((".png", ".svg")):
            path += ".png"
        if Path(path).exists() and not self._confirm_overwrite(path):
            return
        width = self.view.settings.export_width
        if path.lower().endswith(".png"):
            width, ok = QInputDialog.getInt(
                self.view.window(), "Export the map", "Width in pixels:", width, *EXPORT_WIDTH_RANGE, 100
            )
            if not ok:
                return
            self.view.settings.export_width = width
        self.export_to(path, width)

    def _confirm_overwrite(self, path: str) -> bool:
        return confirm_replace(self.view.window(), path)

    def export_to(self, path: str, width: int | None = None) -> bool:
        """Write the map as PNG or SVG (by suffix); says what happened through ``status``/``message``."""
        target = Path(path)
        try:
            if target.suffix.lower() == ".svg":
                write_svg(self.view.canvas, target)
            else:
                canvas = self.view.canvas
                canvas.export_png(target, width or self.view.settings.export_width, png_texts(canvas))
        except OSError as exc:
            self.view.message.emit(not_exported("map", target, exc.strerror or str(exc)), "error")
            return False
        self.view.settings.export_dir = str(target.parent)
        self.view.status.emit(f"Map exported to {target}")
        return True

    def export_page_dialog(self) -> None:
        """File > Export map as web page...: ask where, then write the page."""
        path = self._ask_target("Export the map as a web page", "embedding-map.html", "Web page (*.html)", (".html",))
        if path:
            self.export_page_to(path)

    def export_page_to(self, path: str) -> bool:
        """Write the map on screen (its hidden families hidden) as one self-contained web page."""
        shown = self.view.family_map
        if shown is None:
            return False
        canvas = self.view.canvas
        change = canvas.change  # the colours by change, when the map shows them
        name, hidden, marks = self.view.model_name, canvas.hidden, canvas.marks  # marks: the star and rings
        return self._write(path, "map", lambda: _web_page(path, shown, name, hidden, change, marks))

    def export_points_dialog(self) -> None:
        """File > Export points...: the points as CSV or JSON, by the chosen kind."""
        path = self._ask_target(
            "Export the map's points", "embedding-points.csv", "CSV table (*.csv);;JSON (*.json)", (".csv", ".json")
        )
        if path:
            self.export_points_to(path)

    def export_points_to(self, path: str) -> bool:
        """Write every point (token, id, family, x, y): CSV for a ``.csv`` name, JSON otherwise."""
        shown = self.view.family_map
        if shown is None:
            return False
        return self._write(path, "points", lambda: _points(path, shown, self.view.model_name))

    def _ask_target(self, title: str, name: str, kinds: str, suffixes: tuple[str, ...]) -> str:
        """A file name from the save dialog (``save_target.ask_save_target``); "" when there is none."""
        if not self.view.can_export:
            return ""
        start = Path(self.view.settings.export_dir or Path.home()) / name
        return ask_save_target(self.view.window(), title, start, kinds, suffixes)

    def _write(self, path: str, what: str, write: Callable[[], None]) -> bool:
        target = Path(path)
        try:
            write()
        except OSError as exc:
            self.view.message.emit(not_exported(what, target, exc.strerror or str(exc)), "error")
            return False
        except EmbedExplorerError as exc:
            self.view.message.emit(refused_export(str(exc)), "error")
            return False
        self.view.settings.export_dir = str(target.parent)
        self.view.status.emit(f"{what.capitalize()} exported to {target}")
        return True


def _web_page(
    path: str,
    shown: object,
    name: str,
    hidden: object,
    change: object,
    marks: tuple[str, tuple[float, float] | None, list[tuple[tuple[float, float], str]]],
) -> None:
    from ...core.maps.web_page import Selected, write_map_page  # with the first export, not while the window opens

    token, at, rings = marks
    selected = None if at is None else Selected(token, at, tuple(rings))
    write_map_page(path, shown, name, hidden, change=change, selected=selected)  # type: ignore[arg-type]


def _points(path: str, shown: object, name: str) -> None:
    from ...core.maps.points_export import write_points

    write_points(path, shown, name)  # type: ignore[arg-type]
