"""Map > Axes from directions: pairs for the x axis and for the y axis of a map on two directions."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QWidget

from ...core.common.errors import QueryError
from ...core.directions.spec import DEFAULT_PAIRS, DirectionSpec, parse_pairs

DEFAULT_X_PAIRS = ", ".join(f"{a}->{b}" for a, b in DEFAULT_PAIRS)
DEFAULT_Y_PAIRS = "man->king, woman->queen"


class AxesDialog(QDialog):
    """Map > Axes from directions: pairs for the x axis and for the y axis."""

    def __init__(
        self, x_pairs: str = DEFAULT_X_PAIRS, y_pairs: str = DEFAULT_Y_PAIRS, parent: QWidget | None = None
    ) -> None:
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
