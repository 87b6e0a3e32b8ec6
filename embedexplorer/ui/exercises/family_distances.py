"""Which family sits furthest away? Guess by clicking a family, then see the ranking on whole rows."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.text.texts import fixed
from ..style import theme

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.exercises.family_distances import FamilyDistances

COLUMNS = ("#", "family", "mean cosine to the other families", "within the family")


class FamilyDistancesDialog(QDialog):
    """The chapter's map question, answered "on the 768 numbers, not on the flat map".

    In guess mode the ranking stays hidden until a family button is clicked; the
    ranking itself can be asked for at once (Map > Family distances).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Which family sits furthest away?")
        self.setModal(False)
        self._distances: FamilyDistances | None = None
        self._guess: str | None = None
        self._guessing = False
        self.question = QLabel(
            "Guess before you look: which family sits furthest away from all the others? Click it."
        )
        self.question.setWordWrap(True)
        self.buttons_box = QWidget()
        self.buttons = QGridLayout(self.buttons_box)
        self.buttons.setContentsMargins(0, 0, 0, 0)
        self._buttons: dict[str, QPushButton] = {}
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setTabKeyNavigation(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.explain = QLabel(
            "Measured on all the numbers of each row, not on the flat map: for each family, the mean "
            "cosine of its words to every word of the other families (lowest first: furthest away), and "
            "beside it the mean cosine of two words of the same family. Hidden families are left out."
        )
        self.explain.setWordWrap(True)
        self.explain.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.addWidget(self.question)
        layout.addWidget(self.buttons_box)
        layout.addWidget(self.verdict)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.explain)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.close)
        self.close_button = close.button(QDialogButtonBox.StandardButton.Close)
        layout.addWidget(close)
        self.resize(560, 470)

    def start_guess(self) -> None:
        """Hide the ranking and ask for a guess."""
        self._guessing, self._guess = True, None
        self.question.show()
        self.buttons_box.show()
        self.verdict.setText("")
        self._show_table()

    def new_model(self) -> None:
        """Another model is open: a guess made for the last one would reveal this one's ranking."""
        if self._guessing:
            self.start_guess()

    def show_answer_now(self) -> None:
        """No guess: the ranking straight away."""
        self._guessing = False
        self.question.hide()
        self.buttons_box.hide()
        self.verdict.setText("")
        self._show_table()

    def show_distances(self, distances: FamilyDistances) -> None:
        self._distances = distances
        self._make_buttons([e.family for e in distances.ranking])
        if self._guess is not None and self._guess not in {e.family for e in distances.ranking}:
            self._guess = None
        self._judge()
        self._show_table()

    def show_message(self, message: str) -> None:
        self.verdict.setText(escape(message))

    def guess(self, family: str) -> None:
        self._guess = family
        self._judge()
        self._show_table()

    def families(self) -> list[str]:
        """The families in the ranking's order, as the table shows them (empty while hidden)."""
        items = (self.table.item(r, 1) for r in range(self.table.rowCount()))
        return [item.text() for item in items if item is not None]

    def _make_buttons(self, families: list[str]) -> None:
        if sorted(self._buttons) == sorted(families):
            return
        for button in self._buttons.values():
            button.deleteLater()
        self._buttons = {}
        for index, family in enumerate(sorted(families)):
            button = QPushButton(family)
            button.setToolTip(f"Guess: {family} sits furthest away")
            button.clicked.connect(lambda _checked=False, f=family: self.guess(f))
            self.buttons.addWidget(button, index // 4, index % 4)
            self._buttons[family] = button

    def _judge(self) -> None:
        if self._distances is None or self._guess is None:
            return
        self.verdict.setText(f"<b>{escape(self._distances.judge(self._guess))}</b>")

    def _show_table(self) -> None:
        distances = self._distances
        hidden = distances is None or (self._guessing and self._guess is None)
        self.table.setRowCount(0 if hidden or distances is None else len(distances.ranking))
        if hidden or distances is None:
            return
        for row, entry in enumerate(distances.ranking):
            within = "-" if entry.within != entry.within else fixed(entry.within, 3)  # NaN: one word
            cells = (f"{row + 1}", entry.family, fixed(entry.to_others, 3), within)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column != 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if entry.family == self._guess:
                    item.setBackground(theme.accent().lighter(170))
                self.table.setItem(row, column, item)
