"""Two texts side by side: pick a token in each; same id means the same row, only the place differs."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.text.texts import Token, fixed
from ...jobs.exercise_jobs import PairTokens, PairTokensRequest, TwoTextsRequest
from ..panes.row_view import format_row
from ..panes.token_pane import CHIP_STYLE, TOKEN_ROLE, ChipDelegate, chip_label
from ..widgets.steady_label import SteadyLabel

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.exercises.two_texts import Side, TwoTokens

TYPING_PAUSE_MS = 150
DEFAULT_TEXTS = ("the river bank", "my bank account")
# Numbers of each row shown per side: two sides share the width, and each line must show its end.
SIDE_NUMBERS = 3
# Under the comparison: what the table can and cannot tell apart, for a table with position rows and without.
_HINT_WITH_POSITIONS = (
    "The row from the table is the token alone: the same id gives the same row in both texts. "
    "Only the position row, and so the sum, says where it stands. Which bank is meant is the "
    "layers' work (chapters 6 and 7)."
)
_HINT_WITHOUT_POSITIONS = (
    "The row from the table is the token alone: the same id gives the same row in both texts. This model "
    "has no position rows: where a token stands, and which bank is meant, is the layers' work (chapters 6 and 7)."
)


class TwoTextsPane(QWidget):
    """Two text boxes with their token chips and, below, what the two picked tokens have in common."""

    tokens_wanted = Signal(object)  # PairTokensRequest
    comparison_wanted = Signal(object)  # TwoTextsRequest

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.inputs = [QLineEdit(text) for text in DEFAULT_TEXTS]
        self._wanted_places: tuple[int | None, int | None] = (None, None)
        self.chips = [self._chip_list(name) for name in ("first", "second")]
        # The token and id, its place, three rows, a note: each on a line of its own.
        self.sides = [SteadyLabel(6, wrap=False) for _ in range(2)]
        self._answer: TwoTokens | None = None
        for label in self.sides:
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._size_numbers()
        self.verdict = SteadyLabel(3)
        for label in (*self.sides, self.verdict):  # markup of their own; values escaped
            label.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setAccessibleName("what the two tokens have in common")
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(TYPING_PAUSE_MS)
        self._typing.timeout.connect(self.request_tokens)
        for box, name in zip(self.inputs, ("first", "second"), strict=True):
            box.setAccessibleName(f"{name} text")
            box.setClearButtonEnabled(True)
            box.textChanged.connect(lambda _t: self._typing.start())

        grid = QGridLayout()
        for column, (title, box) in enumerate(zip(("&First text", "&Second text"), self.inputs, strict=True)):
            buddy = QLabel(title)
            buddy.setBuddy(box)
            grid.addWidget(buddy, 0, column)
            grid.addWidget(box, 1, column)
            grid.addWidget(self.chips[column], 2, column)
            grid.addWidget(self.sides[column], 3, column)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.verdict)
        self.hint = QLabel(_HINT_WITH_POSITIONS)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setWordWrap(True)
        self.hint.setObjectName("hint")
        layout.addWidget(self.hint)
        layout.addStretch(1)

    def _chip_list(self, name: str) -> QListWidget:
        chips = QListWidget()
        chips.setFlow(QListView.Flow.LeftToRight)
        chips.setWrapping(True)
        chips.setResizeMode(QListView.ResizeMode.Adjust)
        chips.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        chips.setStyleSheet(CHIP_STYLE)
        chips.setItemDelegate(ChipDelegate(chips))
        chips.setFixedHeight(64)
        chips.setAccessibleName(f"tokens of the {name} text")
        chips.itemSelectionChanged.connect(self.request_comparison)
        return chips

    # ----- what the window asks of the pane ------------------------------------------------
    def _size_numbers(self) -> None:
        """The two rows' numbers in a fixed-width font (columns line up) as large as the window's type,
        which presentation mode enlarges: the system's fixed font alone keeps its own size."""
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(self.font().pointSizeF())
        for label in self.sides:
            label.setFont(font)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "sides"):
            self._size_numbers()
            self._fill_sides()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fill_sides()

    def _fill_sides(self) -> None:
        """Each side's rows with as many numbers as its width holds (presentation's type on a laptop: one)."""
        if self._answer is None:
            return
        for label, side in zip(self.sides, (self._answer.first, self._answer.second), strict=True):
            room = label.contentsRect().width()
            for shown in range(SIDE_NUMBERS, 0, -1):
                text = _side_text(side, shown)
                if label.whole_width(text) <= room:
                    break
            if text != label.text():
                label.setText(text)

    def texts(self) -> tuple[str, str]:
        return self.inputs[0].text(), self.inputs[1].text()

    def places(self) -> tuple[int | None, int | None]:
        return self._place(0), self._place(1)

    def set_texts(self, first: str, second: str, places: tuple[int | None, int | None] = (None, None)) -> None:
        """Show two texts (a lesson's); ``places`` (0-based) pick their tokens once they arrive."""
        self._wanted_places = places
        for box, text in zip(self.inputs, (first, second), strict=True):
            box.blockSignals(True)
            box.setText(text)
            box.blockSignals(False)
        self.request_tokens()

    def request_tokens(self) -> None:
        self._typing.stop()
        first, second = self.texts()
        self.tokens_wanted.emit(PairTokensRequest(first, second))

    def show_tokens(self, answer: PairTokens) -> None:
        if (answer.first_text, answer.second_text) != self.texts():
            return  # typed on since
        wanted = self._wanted_places
        self._wanted_places = (None, None)
        picks = (
            wanted[0] if wanted[0] is not None else answer.first_place,
            wanted[1] if wanted[1] is not None else answer.second_place,
        )
        for chips, tokens, place in zip(self.chips, (answer.first, answer.second), picks, strict=True):
            chips.blockSignals(True)
            chips.clear()
            for index, token in enumerate(tokens):
                item = QListWidgetItem(chip_label(token))
                item.setData(TOKEN_ROLE, token)
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                item.setToolTip(f"token {token.token}, id {token.id}, place {index + 1} in the text")
                chips.addItem(item)
            if tokens:
                chips.setCurrentRow(place if place is not None and place < len(tokens) else 0)
            chips.blockSignals(False)
        if not answer.first or not answer.second:
            self.verdict.setText("Type a text in each box.")
            self._answer = None  # a resize must not bring the last rows back
            for side in self.sides:
                side.clear()
            return
        self.request_comparison()

    def request_comparison(self) -> None:
        first, second = self.places()
        if first is None or second is None:
            return
        texts = self.texts()
        self.comparison_wanted.emit(TwoTextsRequest(texts[0], first, texts[1], second))

    def show_comparison(self, answer: TwoTokens) -> None:
        if (answer.first.text, answer.second.text) != self.texts():
            return
        self._answer = answer
        self._fill_sides()
        sums = "" if answer.sum_cosine is None else f" What enters layer 1: cosine {fixed(answer.sum_cosine, 3)}."
        self.verdict.setText(f"<b>{escape(answer.verdict())}</b>{escape(sums)}")
        self.hint.setText(_HINT_WITH_POSITIONS if answer.has_positions else _HINT_WITHOUT_POSITIONS)

    def show_message(self, message: str) -> None:
        self.verdict.setText(escape(message))

    def picked_tokens(self) -> list[Token | None]:
        result: list[Token | None] = []
        for chips in self.chips:
            items = chips.selectedItems()
            result.append(items[0].data(TOKEN_ROLE) if items else None)
        return result

    def _place(self, index: int) -> int | None:
        rows = self.chips[index].selectedIndexes()
        return rows[0].row() if rows else None


def _side_text(side: Side, shown: int = SIDE_NUMBERS) -> str:
    """One side's token, its place (the position-table row on a line of its own: the exercise's point) and its
    rows, each with its first ``shown`` numbers."""
    sums = side.input
    lines = [
        f"<b>{escape(side.token.token)}</b> id {side.token.id:,}",
        escape(sums.place_text()),
        f"token row:    {escape(format_row(sums.token_row, shown))}",
    ]
    if sums.position_row is not None:
        lines.append(f"position row: {escape(format_row(sums.position_row, shown))}")
    if sums.enters is not None:
        label = "LayerNorm(sum)" if sums.normalised else "sum"
        lines.append(f"{label}: {escape(format_row(sums.enters, shown))}")
    if sums.note:
        lines.append(escape(sums.note))
    return "<br>".join(line.replace("  ", "&nbsp;&nbsp;") for line in lines)


class TwoTextsDialog(QDialog):
    """The two-texts pane in a window of its own (not modal)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Two texts side by side")
        self.setModal(False)
        self.pane = TwoTextsPane(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.pane)
        self.resize(900, 420)
