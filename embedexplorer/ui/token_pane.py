"""Text in, token chips out: each chip shows a token's readable form and its id."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .flow_layout import FlowLayout

TYPING_PAUSE_MS = 120  # wait for a pause in typing before asking the worker


class TokenChip(QToolButton):
    def __init__(self, index: int, token: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index = index
        self.token = token
        self.setCheckable(True)
        self.setText(f"{token['token']}\n{token['id']}")
        self.setToolTip(f"token {token['token']!s}, id {token['id']}, place {index + 1} in the text")
        self.setAccessibleName(f"token {token['token']} id {token['id']}")
        self.setObjectName("tokenChip")
        self.setCursor(Qt.CursorShape.PointingHandCursor)


class TokenPane(QWidget):
    """A line edit (debounced) and a row of chips; clicking a chip selects that token."""

    text_changed = Signal(str)  # after a pause in typing
    token_selected = Signal(int, int, str)  # id, place in the text (0-based), readable token

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.input = QLineEdit()
        self.input.setPlaceholderText('Type a word or a sentence, e.g. " Paris" or "The capital of France is"')
        self.input.setClearButtonEnabled(True)
        self.input.setAccessibleName("text to split into tokens")
        font = self.input.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.input.setFont(font)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(TYPING_PAUSE_MS)
        self._debounce.timeout.connect(lambda: self.text_changed.emit(self.input.text()))
        self.input.textChanged.connect(lambda _text: self._debounce.start())

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setObjectName("hint")

        self._chips_host = QWidget()
        self._flow = FlowLayout(self._chips_host, spacing=6)
        self._flow.setContentsMargins(2, 2, 2, 2)
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self._group.idClicked.connect(self._on_chip_clicked)
        scroll = QScrollArea()
        scroll.setWidget(self._chips_host)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMaximumHeight(104)
        scroll.setMinimumHeight(54)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        label = QLabel("&Text:")
        label.setBuddy(self.input)
        row.addWidget(label)
        row.addWidget(self.input, 1)
        layout.addLayout(row)
        layout.addWidget(scroll)
        layout.addWidget(self.summary)
        self.chips: list[TokenChip] = []

    def flush(self) -> None:
        """Send the text now instead of after the typing pause (used when a model opens)."""
        self._debounce.stop()
        self.text_changed.emit(self.input.text())

    def set_text(self, text: str) -> None:
        self.input.setText(text)

    def show_tokens(self, result: Any) -> None:
        """Replace the chips with a TokensResult and keep the selected place when it still exists."""
        previous = self.selected_index()
        for chip in self.chips:
            self._group.removeButton(chip)
            self._flow.removeWidget(chip)
            chip.deleteLater()
        self.chips = []
        for index, token in enumerate(result.tokens):
            chip = TokenChip(index, token, self._chips_host)
            self._group.addButton(chip, index)
            self._flow.addWidget(chip)
            self.chips.append(chip)
        self._chips_host.updateGeometry()
        if not result.tokens:
            self.summary.setText(
                "No tokens: type a word. The chips show each token and its id; "
                "click one to see its row and its neighbours."
            )
            return
        count = f"{result.total:,} token{'s' if result.total != 1 else ''}"
        self.summary.setText(f"{count}. Each id picks one row of the embedding table. {result.note}".strip())
        self.select(previous if previous is not None and previous < len(self.chips) else 0)

    def select(self, index: int) -> None:
        if 0 <= index < len(self.chips):
            self.chips[index].setChecked(True)
            self._on_chip_clicked(index)

    def selected_index(self) -> int | None:
        index = self._group.checkedId()
        return None if index < 0 else index

    def show_message(self, message: str) -> None:
        self.summary.setText(message)

    def _on_chip_clicked(self, index: int) -> None:
        token = self.chips[index].token
        self.token_selected.emit(int(token["id"]), index, str(token["token"]))
