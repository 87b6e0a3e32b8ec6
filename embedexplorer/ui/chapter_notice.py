"""Which model am I looking at: a quiet note when it is not GPT-2, whose numbers the chapter quotes."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from ..core.chapter_model import CHAPTER_MODEL, chapter_notice


class ChapterNotice(QWidget):
    """A short note and a Download button for the model bar; the whole sentence is in its tooltip.

    It lives in the model bar, not above the panes, so its coming and going never moves them.
    """

    download_wanted = Signal(str)  # the chapter's model id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setObjectName("hint")
        self.download = QPushButton("Download GPT-2")
        self.download.setToolTip(f"Fetch {CHAPTER_MODEL}'s tokenizer and weights (about 550 MB) and open it")
        self.download.clicked.connect(lambda: self.download_wanted.emit(CHAPTER_MODEL))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 0, 4, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.download)
        self.sentence = ""

    def update_for(self, name: str, rows: int, width: int) -> bool:
        """Say so when the open table is not GPT-2 small's; True when there is something to say."""
        self.sentence = chapter_notice(name, rows, width)
        self.label.setText("Not GPT-2: the chapter's numbers differ." if self.sentence else "")
        self.label.setToolTip(self.sentence)
        self.setToolTip(self.sentence)
        return bool(self.sentence)
