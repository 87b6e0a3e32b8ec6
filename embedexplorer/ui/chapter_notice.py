"""Which model am I looking at: a quiet line when it is not GPT-2, whose numbers the chapter quotes."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from ..core.chapter_model import CHAPTER_MODEL, chapter_notice


class ChapterNotice(QFrame):
    """One line and a Download button; shown for every model that is not GPT-2 small."""

    download_wanted = Signal(str)  # the chapter's model id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chapterNotice")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setObjectName("hint")
        self.download = QPushButton("Download GPT-2")
        self.download.setToolTip(f"Fetch {CHAPTER_MODEL}'s tokenizer and weights (about 550 MB) and open it")
        self.download.clicked.connect(lambda: self.download_wanted.emit(CHAPTER_MODEL))
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 2, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.download)
        layout.addWidget(close)
        self.hide()

    def show_for(self, name: str, rows: int, width: int) -> None:
        """Say so when the open table is not GPT-2 small's; hide otherwise."""
        text = chapter_notice(name, rows, width)
        self.label.setText(text)
        self.setVisible(bool(text))

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""
