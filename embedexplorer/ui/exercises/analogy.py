"""The chapter's "king - man + woman" question: A - B + C, the k nearest rows, and what was left out."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.common.constants import K_RANGE
from ...core.exercises.chapter_model import NO_CLAIM
from ...jobs.exercise_jobs import AnalogyRequest
from ..style import fonts
from ..widgets.steady_label import SteadyLabel
from ..widgets.table_rows import KeepRows

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.exercises.analogies import AnalogyAnswer

EXPECTED_ROLE = Qt.ItemDataRole.UserRole + 2
# Answers the table shows without scrolling: the default k's eight.
ANSWERS_IN_SIGHT = 8


class AnalogyPane(QWidget):
    """Three words in, the rows nearest A - B + C out; the switch says whether the inputs may answer."""

    requested = Signal(object)  # AnalogyRequest

    def __init__(self, k: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.inputs = [QLineEdit(text) for text in ("king", "man", "woman")]
        for box, name in zip(self.inputs, ("A", "B", "C"), strict=True):
            box.setAccessibleName(f"word {name}")
            box.returnPressed.connect(self.submit)
        self.expected = QLineEdit("queen")
        self.expected.setPlaceholderText("optional")
        self.expected.setAccessibleName("the word you expect")
        self.expected.returnPressed.connect(self.submit)
        self.k_box = QSpinBox()
        self.k_box.setRange(*K_RANGE)
        self.k_box.setValue(k)
        self.k_box.setPrefix("k = ")
        self.include_inputs = QCheckBox("Let A, B and C themselves answer")
        self.include_inputs.setToolTip(
            "Published analogy results usually leave the three input words out; with them in, "
            "A itself is often the nearest row."
        )
        self.include_inputs.toggled.connect(lambda _on: self.submit())
        self.go = QPushButton("&Find")
        self.go.clicked.connect(self.submit)

        self.heading = SteadyLabel(1)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["token", "id", "cosine"])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setTabKeyNavigation(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        KeepRows(self.table, ANSWERS_IN_SIGHT)  # at any type size: presentation mode's too
        self.inputs_line = SteadyLabel(1)
        self.expected_line = SteadyLabel(1)
        for line in (self.heading, self.inputs_line, self.expected_line):  # markup of their own; values escaped
            line.setTextFormat(Qt.TextFormat.RichText)
        # Plain text in a read-only box: quotes stay quotes, and the whole line selects and pastes.
        self.command_line = QLineEdit()
        self.command_line.setReadOnly(True)
        self.command_line.setAccessibleName("the same answer on the command line")
        self.command_line.setToolTip("The command that gives the same answer: select it and paste it into a terminal")
        self.claim = QLabel(NO_CLAIM)
        self.claim.setWordWrap(True)
        self.claim.setObjectName("hint")

        grid = QGridLayout()
        for column, (text, box) in enumerate(zip(("&A", "minus &B", "plus &C"), self.inputs, strict=True)):
            label = QLabel(text)
            label.setBuddy(box)
            grid.addWidget(label, 0, column)
            grid.addWidget(box, 1, column)
        expected_label = QLabel("&Expected")
        expected_label.setBuddy(self.expected)
        grid.addWidget(expected_label, 0, 3)
        grid.addWidget(self.expected, 1, 3)
        grid.addWidget(self.k_box, 1, 4)
        grid.addWidget(self.go, 1, 5)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.include_inputs)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.inputs_line)
        layout.addWidget(self.expected_line)
        command = QHBoxLayout()
        command.addWidget(QLabel("Same answer:"))
        command.addWidget(self.command_line, 1)
        layout.addLayout(command)
        layout.addWidget(self.claim)
        self._model = ""

    @property
    def model(self) -> str:
        """The model the answers are of (its command line's --model)."""
        return self._model

    @model.setter
    def model(self, spec: str) -> None:
        if spec != self._model:
            self.clear_answer()  # the lines of another model's answer would mislead
        self._model = spec

    def clear_answer(self) -> None:
        """No answer: no rows, no heading, no lines about one."""
        self.heading.setText("")
        self.table.setRowCount(0)
        for line in (self.inputs_line, self.expected_line):
            line.setText("")
        self.command_line.clear()

    def request(self) -> AnalogyRequest:
        a, b, c = (box.text() for box in self.inputs)
        return AnalogyRequest(a, b, c, self.k_box.value(), self.include_inputs.isChecked(), self.expected.text())

    def submit(self) -> None:
        if all(box.text().strip() for box in self.inputs):
            self.requested.emit(self.request())
        else:
            self.show_message("Type a word in each of A, B and C.")

    def show_answer(self, answer: AnalogyAnswer) -> None:
        note = f" ({escape(answer.note)})" if answer.note else ""
        self.heading.setText(f"Nearest to <b>{escape(answer.label)}</b>{note}")
        expected_id = None if answer.expected is None else answer.expected.query.id
        self.table.setRowCount(len(answer.neighbours))
        for row, neighbour in enumerate(answer.neighbours):
            items = (
                QTableWidgetItem(fonts.for_window(neighbour.token)),
                QTableWidgetItem(f"{neighbour.id}"),
                QTableWidgetItem(f"{neighbour.cosine:.3f}"),
            )
            items[1].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for column, item in enumerate(items):
                if neighbour.id == expected_id:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                    item.setData(EXPECTED_ROLE, True)
                self.table.setItem(row, column, item)
        self.table.scrollToTop()
        self.inputs_line.setText(escape(answer.inputs_line()))
        self.expected_line.setText(f"<b>{escape(answer.expected_line())}</b>" if answer.expected else "")
        self.command_line.setText(answer.command(self.k_box.value(), self.model or None))
        self.command_line.setCursorPosition(0)

    def show_message(self, message: str) -> None:
        """A failed question: its message, and nothing left of the answer before it."""
        self.clear_answer()
        self.heading.setText(escape(message))

    def tokens(self) -> list[str]:
        items = (self.table.item(r, 0) for r in range(self.table.rowCount()))
        return [item.text() for item in items if item is not None]


class AnalogyDialog(QDialog):
    """The analogy pane in a window of its own, beside the main one (not modal)."""

    def __init__(self, k: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Analogies: A - B + C")
        self.setModal(False)
        self.pane = AnalogyPane(k, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.pane)
        self.resize(620, 520)
