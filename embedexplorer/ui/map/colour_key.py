"""The key beside the map while its dots are coloured by a scale (health, change): each colour and its meaning.

The Families panel is the key while the dots have their families' colours; once a scale fills
them, this box says what the colours are instead, and hides again when the families' colours return.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QWidget

from .change_colours import change_key
from .family_editor import swatch
from .family_panel import FAMILY_PANEL_WIDTH

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.map_change import MapChange

SWATCH_PX = 12  # as large as a family's swatch


class ColourKey(QGroupBox):
    """One row a sample of the scale: its colour, then what a dot of that colour means."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(6, 6, 6, 6)
        self._grid.setVerticalSpacing(2)
        self._grid.setColumnStretch(1, 1)
        self.swatch_labels: list[QLabel] = []
        self.text_labels: list[QLabel] = []
        self.setMinimumWidth(FAMILY_PANEL_WIDTH)
        self.hide()

    def show_change(self, change: MapChange | None) -> None:
        """The scale's key for ``change``; hidden for None (the families' colours are back)."""
        for label in self.swatch_labels + self.text_labels:
            self._grid.removeWidget(label)
            label.deleteLater()
        self.swatch_labels, self.text_labels = [], []
        if change is None:
            self.hide()
            return
        self.setTitle(change.key_heading())
        for row, (colour, text) in enumerate(change_key(change)):
            sample = QLabel()
            sample.setPixmap(swatch(colour).pixmap(SWATCH_PX, SWATCH_PX))
            meaning = QLabel(text)
            meaning.setTextFormat(Qt.TextFormat.PlainText)  # a scale's words are shown as they are
            meaning.setWordWrap(True)
            self._grid.addWidget(sample, row, 0, Qt.AlignmentFlag.AlignTop)
            self._grid.addWidget(meaning, row, 1)
            self.swatch_labels.append(sample)
            self.text_labels.append(meaning)
        self.show()
