"""Directions in the window: the pane as a tab beside the map, its request kind, and Map > Axes from directions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QWidget

from ..core.common.errors import QueryError
from ..core.directions.direction import DirectionSpec, parse_pairs
from ..jobs.direction_jobs import DIRECTION, DirectionRequest
from .directions_pane import DirectionsPane

if TYPE_CHECKING:
    from .main_window import MainWindow

DEFAULT_Y_PAIRS = "man->king, woman->queen"


class AxesDialog(QDialog):
    """Map > Axes from directions: pairs for the x axis and for the y axis."""

    def __init__(self, x_pairs: str, y_pairs: str = DEFAULT_Y_PAIRS, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Axes from directions")
        self.x_box, self.y_box = QLineEdit(x_pairs), QLineEdit(y_pairs)
        self.x_box.setAccessibleName("x axis pairs")
        self.y_box.setAccessibleName("y axis pairs")
        self.error = QLabel("")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(QLabel("The words on the map are placed at their cosine with each direction (pairs A->B)."))
        form.addRow("&x axis", self.x_box)
        form.addRow("&y axis", self.y_box)
        form.addRow(self.error)
        form.addRow(buttons)
        self.resize(560, 160)

    def specs(self) -> tuple[DirectionSpec, DirectionSpec]:
        return DirectionSpec(pairs=parse_pairs(self.x_box.text())), DirectionSpec(pairs=parse_pairs(self.y_box.text()))

    def _check(self) -> None:
        try:
            self.specs()
        except QueryError as exc:
            self.error.setText(str(exc))
            return
        self.accept()


class DirectionDesk(QObject):
    """Places the Directions pane in the window and wires it to the worker; owns the axes action."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pane = DirectionsPane()
        self._asked = False  # the pane has asked once (the first showing scores the default pairs)
        self._y_pairs = DEFAULT_Y_PAIRS
        window.right.addTab(self.pane, "&Directions")
        self.axes_action = QAction("&Axes from directions...", window)
        self.axes_action.setToolTip("Place the words on the map at their cosines with two directions made from pairs")
        self.axes_action.triggered.connect(self.ask_axes)

        channel = window.client.channel
        channel(DIRECTION).ready.connect(self.pane.show_report)
        channel(DIRECTION).failed.connect(lambda failure: self.pane.show_message(failure.message))
        channel(DIRECTION).progress.connect(self.pane.show_progress)
        self.pane.requested.connect(self._submit)
        self.pane.token_activated.connect(window.token_pane.set_text)
        window.right.currentChanged.connect(lambda _index: self._on_shown())

    def _submit(self, request: DirectionRequest) -> None:
        if self.window.loaded:
            self._asked = True
            self.window.client.submit(DIRECTION, request)
        else:
            self.pane.show_message("Open a model first.")

    def _on_shown(self) -> None:
        if self.window.right.currentWidget() is self.pane and not self._asked and self.window.loaded:
            self.pane.submit()

    def model_loaded(self) -> None:
        """A new table: the pane's direction is scored again on it when the pane is in view."""
        self._asked = False
        self._on_shown()

    def ask_axes(self) -> None:
        x = self.pane.pairs_box.text()
        dialog = AxesDialog(x, self._y_pairs, self.window)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self._y_pairs = dialog.y_box.text()
            self.window.right.setCurrentWidget(self.window.map_view)
            self.window.map_view.request_axes(*dialog.specs())
