"""The numbers behind one token: its row, its position row, and their sum."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ..jobs.table_jobs import RowAnswer
from . import theme
from .steady_label import SteadyLabel

SHOWN_NUMBERS = 6  # the chapter prints the first six numbers of a row


def format_row(row: np.ndarray, shown: int = SHOWN_NUMBERS) -> str:
    """The chapter's way to print a row: ``[-0.219, +0.042, ... 762 more]``."""
    head = ", ".join(f"{value:+.3f}" for value in row[:shown])
    rest = len(row) - shown
    return f"[{head}, ... {rest:,} more]" if rest > 0 else f"[{head}]"


class RowView(QWidget):
    """Shows a RowAnswer; the plot draws every value, the text the first few as in the book."""

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._result: RowAnswer | None = None
        self.title = SteadyLabel(1, "Select a token to see its row.")
        # The token row, its position row and their sum, one line each (the tooltip has them whole).
        self.numbers = SteadyLabel(3, wrap=False)
        self.numbers.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = SteadyLabel(1)
        self.note.setObjectName("hint")

        self.plot_widget = pg.PlotWidget()
        self.plot_widget.setMinimumHeight(140)
        self.plot_widget.setMenuEnabled(False)
        self.plot_widget.setLabel("bottom", "number in the row")
        self.plot_widget.setLabel("left", "value")
        self.plot_widget.showGrid(x=False, y=True, alpha=0.2)
        for axis in ("bottom", "left"):  # the book prints plain values, not "x0.001" units
            self.plot_widget.getAxis(axis).enableAutoSIPrefix(False)
        self.legend = self.plot_widget.addLegend(offset=(8, 4), labelTextSize="8pt", colCount=3)
        self._curves = {
            "token": self.plot_widget.plot(name="token row"),
            "position": self.plot_widget.plot(name="position row"),
            "sum": self.plot_widget.plot(name="sum: what enters layer 1"),
        }

        self.show_position = QCheckBox("Position row and sum")
        self.show_position.setChecked(True)
        self.show_position.setToolTip("Also draw the row of the token's place in the text, and the sum of both")
        self.show_position.toggled.connect(lambda _on: self._redraw())
        self.copy_button = QPushButton("Copy row")
        self.copy_button.setToolTip("Copy every number of the token's row to the clipboard")
        self.copy_button.clicked.connect(self.copy_row)
        self.copy_button.setEnabled(False)

        controls = QHBoxLayout()
        controls.addWidget(self.show_position)
        controls.addStretch(1)
        controls.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.numbers)
        layout.addWidget(self.plot_widget, 1)
        layout.addLayout(controls)
        layout.addWidget(self.note)
        self.apply_palette()

    def show_row(self, result: RowAnswer) -> None:
        self._result = result
        row = result.row
        length = float(np.linalg.norm(row))
        self.title.setText(
            f"<b>row {result.token.id:,}</b> &nbsp; {escape(result.token.token)} &nbsp; "
            f"({len(row):,} numbers, length {length:.2f}, place {result.place + 1:,} in the text)"
        )
        lines = [f"token row: &nbsp;&nbsp;{format_row(row)}"]
        if result.position_row is not None and result.combined is not None:
            lines.append(f"position row {result.place + 1:,}: {format_row(result.position_row)}")
            lines.append(f"sum (enters layer 1): {format_row(result.combined)}")
        self.numbers.setText("<br>".join(lines))
        self.note.setText(result.note)
        self.copy_button.setEnabled(True)
        self._redraw()

    def clear(self) -> None:
        self._result = None
        self.title.setText("Select a token to see its row.")
        self.numbers.clear()
        self.note.clear()
        self.copy_button.setEnabled(False)
        for curve in self._curves.values():
            curve.setData([], [])

    def _redraw(self) -> None:
        result = self._result
        if result is None:
            return
        x = np.arange(len(result.row))
        position, combined = result.position_row, result.combined
        with_position = self.show_position.isChecked() and position is not None and combined is not None
        self._curves["token"].setData(x, result.row)
        self._curves["position"].setData(x if with_position else [], position if with_position else [])
        self._curves["sum"].setData(x if with_position else [], combined if with_position else [])
        for name, curve in self._curves.items():
            self.legend.removeItem(curve)
            if name == "token" or with_position:
                self.legend.addItem(curve, curve.name())

    def copy_row(self) -> None:
        if self._result is None:
            return
        text = ", ".join(f"{value:.6g}" for value in self._result.row)
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(f"Copied the {len(self._result.row):,} numbers of row {self._result.token.id:,}.")

    def apply_palette(self) -> None:
        self.plot_widget.setBackground(theme.plot_background())
        self._curves["token"].setPen(pg.mkPen(theme.family_colour(0), width=1.5))
        self._curves["position"].setPen(pg.mkPen(theme.family_colour(1), width=1))
        self._curves["sum"].setPen(pg.mkPen(theme.family_colour(2), width=1))
