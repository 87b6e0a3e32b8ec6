"""The map pane: the canvas, a family panel where one click hides or highlights a family,
the families file in use, and export to PNG or SVG."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core.constants import EXPORT_WIDTH_RANGE
from ..core.errors import EmbedExplorerError
from ..core.maps import FamilyMap, save_families
from ..settings import Settings
from . import theme
from .map_canvas import MapCanvas
from .steady_label import SteadyLabel

FAMILY_PANEL_WIDTH = 140


def _swatch(colour: QColor) -> QIcon:
    pixmap = QPixmap(12, 12)
    pixmap.fill(colour)
    return QIcon(pixmap)


class FamilyPanel(QGroupBox):
    """One row per family: a checkbox shows or hides it, its name button highlights it."""

    hidden_changed = Signal(set)
    highlight_changed = Signal(object)  # family name or None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Families", parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(6, 6, 6, 6)
        self._grid.setVerticalSpacing(2)
        self.visibility: dict[str, QCheckBox] = {}
        self.highlight_buttons: dict[str, QPushButton] = {}
        self.hint = SteadyLabel(3, "Tick to show, click a name to highlight.")
        self.hint.setObjectName("hint")
        self._grid.addWidget(self.hint, 0, 0, 1, 2)
        # As wide before the map arrives as after, so the map beside it keeps its size.
        self.setMinimumWidth(FAMILY_PANEL_WIDTH)

    def set_families(self, families: list[str], hidden: set[str]) -> None:
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None and widget is not self.hint:
                widget.deleteLater()
        self.visibility.clear()
        self.highlight_buttons.clear()
        for row, family in enumerate(families):
            show = QCheckBox()
            show.setChecked(family not in hidden)
            show.setToolTip(f"Show or hide the {family}")
            show.setAccessibleName(f"show {family}")
            show.toggled.connect(lambda _on: self.hidden_changed.emit(self.hidden()))
            button = QPushButton(_swatch(theme.family_colour(row)), family)
            button.setCheckable(True)
            button.setFlat(True)
            button.setStyleSheet("text-align: left; padding: 2px 6px;")
            button.setToolTip(f"Highlight the {family} on the map (click again to stop)")
            button.clicked.connect(lambda checked, f=family: self._on_highlight(f, checked))
            self._grid.addWidget(show, row, 0)
            self._grid.addWidget(button, row, 1)
            self.visibility[family] = show
            self.highlight_buttons[family] = button
        self._grid.addWidget(self.hint, len(families), 0, 1, 2)

    def hidden(self) -> set[str]:
        return {family for family, box in self.visibility.items() if not box.isChecked()}

    def _on_highlight(self, family: str, checked: bool) -> None:
        for name, button in self.highlight_buttons.items():
            if name != family:
                button.setChecked(False)
        self.highlight_changed.emit(family if checked else None)


class MapView(QWidget):
    """The family map and what belongs to it: the families file in use and its export.

    The window asks for a map when ``families_requested`` fires and hands the answer to
    ``show_map``; messages for the user leave through ``message`` and ``status``.
    """

    hidden_changed = Signal(set)
    word_clicked = Signal(str)
    families_requested = Signal(str)  # a families file, or "" for the chapter's families
    message = Signal(str, str)  # text, level ("error", "warning", "info")
    status = Signal(str)  # a passing note for the status bar

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.family_map: FamilyMap | None = None
        self.model_name = ""
        self.families_file = settings.families_file  # "" means the chapter's families
        self._requested_file = self.families_file
        self.canvas = MapCanvas()
        self.canvas.setMinimumSize(360, 300)
        self.panel = FamilyPanel()
        self.notes = SteadyLabel(2)
        self.notes.setObjectName("hint")
        self._hidden = set(settings.hidden_families)
        self.panel.hidden_changed.connect(self._on_hidden_changed)
        self.panel.highlight_changed.connect(self.canvas.set_highlight)
        self.canvas.point_clicked.connect(self.word_clicked)

        side = QVBoxLayout()
        side.addWidget(self.panel)
        side.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.canvas, 1)
        top.addLayout(side)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top, 1)
        layout.addWidget(self.notes)

    # ----- the map ------------------------------------------------------------------------
    @property
    def requested_families(self) -> str:
        """The families file the next map should use ("" for the chapter's)."""
        return self._requested_file

    def show_map(self, family_map: FamilyMap, model_name: str) -> None:
        self.family_map, self.model_name = family_map, model_name
        self.families_file = self._requested_file
        self.settings.families_file = self.families_file
        self.canvas.set_map(family_map, model_name, self._hidden)
        self.panel.set_families(family_map.families, self._hidden)
        self.notes.setText(" ".join(family_map.notes))

    def map_failed(self, message: str) -> None:
        """A requested map could not be drawn: keep the one on screen and say why."""
        self._requested_file = self.families_file
        kept = "The map keeps the families it had." if self.family_map is not None else ""
        self.message.emit(f"The families could not be used. {message} {kept}".strip(), "error")

    def show_selection(
        self, token: str, at: tuple[float, float] | None, neighbours: tuple[tuple[float, float], ...]
    ) -> None:
        self.canvas.set_selection(token, at, list(neighbours))

    def clear_selection(self) -> None:
        self.canvas.clear_selection()

    @property
    def can_export(self) -> bool:
        return self.family_map is not None

    def _on_hidden_changed(self, hidden: set[str]) -> None:
        self._hidden = set(hidden)
        self.settings.hidden_families = sorted(hidden)
        self.canvas.set_hidden(self._hidden)
        self.hidden_changed.emit(self._hidden)

    # ----- families files ------------------------------------------------------------------
    def use_families(self, path: str) -> None:
        """Ask for a map with another families file; the current one stays if that fails."""
        self._requested_file = path
        self.families_requested.emit(path)

    def choose_families_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load a families file", self.families_file or str(Path.home()), "Families (*.json)"
        )
        if path:
            self.use_families(path)

    def save_families_dialog(self) -> None:
        if self.family_map is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Save the families",
            str(Path(self.settings.export_dir or Path.home()) / "families.json"),
            "Families (*.json)",
        )
        if path:
            self.save_families(path)

    def save_families(self, path: str) -> bool:
        """Write the families on the map as a JSON file (atomically: never half a file)."""
        if self.family_map is None:
            return False
        families: dict[str, list[str]] = {}
        for point in self.family_map.points:
            families.setdefault(point.family, []).append(point.word)
        try:
            save_families(families, path)
        except EmbedExplorerError as exc:  # says what failed and that the old file is unchanged
            self.message.emit(str(exc), "error")
            return False
        self.status.emit(f"Families saved to {path}")
        return True

    # ----- export ----------------------------------------------------------------------------
    def export_dialog(self) -> None:
        if not self.can_export:
            return
        start = Path(self.settings.export_dir or Path.home()) / "embedding-map.png"
        path, chosen = QFileDialog.getSaveFileName(
            self,
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
        width = self.settings.export_width
        if path.lower().endswith(".png"):
            width, ok = QInputDialog.getInt(self, "Export the map", "Width in pixels:", width, *EXPORT_WIDTH_RANGE, 100)
            if not ok:
                return
            self.settings.export_width = width
        self.export_to(path, width)

    def _confirm_overwrite(self, path: str) -> bool:
        answer = QMessageBox.question(
            self,
            "Replace the file?",
            f"{Path(path).name} already exists in {Path(path).parent}. Replace it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def export_to(self, path: str, width: int | None = None) -> bool:
        """Write the map as PNG or SVG (by suffix); says what happened through ``status``/``message``."""
        target = Path(path)
        try:
            if target.suffix.lower() == ".svg":
                self.canvas.export_svg(target)
            else:
                self.canvas.export_png(target, width or self.settings.export_width)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            self.message.emit(
                f"The map was not exported to {target}: {reason}. Nothing was overwritten; choose another folder.",
                "error",
            )
            return False
        self.settings.export_dir = str(target.parent)
        self.status.emit(f"Map exported to {target}")
        return True
