"""The map pane: the canvas plus a family panel where one click hides or highlights a family."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

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
            if item.widget() is not None and item.widget() is not self.hint:
                item.widget().deleteLater()
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
    hidden_changed = Signal(set)
    word_clicked = Signal(str)

    def __init__(self, hidden: set[str] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = MapCanvas()
        self.canvas.setMinimumSize(360, 300)
        self.panel = FamilyPanel()
        self.notes = SteadyLabel(2)
        self.notes.setObjectName("hint")
        self._hidden = set(hidden or ())
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

    def show_map(self, family_map: Any, model_name: str) -> None:
        self.canvas.set_map(family_map, model_name, self._hidden)
        self.panel.set_families(family_map.families, self._hidden)
        self.notes.setText(" ".join(family_map.notes))

    def show_selection(self, token: str, at: Any, neighbours: list[Any]) -> None:
        self.canvas.set_selection(token, at, neighbours)

    def _on_hidden_changed(self, hidden: set[str]) -> None:
        self._hidden = set(hidden)
        self.canvas.set_hidden(self._hidden)
        self.hidden_changed.emit(self._hidden)
