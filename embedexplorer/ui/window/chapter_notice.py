"""Which model am I looking at: a quiet note when it is not GPT-2, whose numbers the chapter quotes."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from ...core.exercises.chapter_model import CHAPTER_MODEL, chapter_notice


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
        self._compact = False

    def update_for(self, name: str, rows: int, width: int) -> bool:
        """Say so when the open table is not GPT-2 small's; True when there is something to say."""
        self.sentence = chapter_notice(name, rows, width)
        self._show_text()
        self.label.setToolTip(self.sentence)
        self.setToolTip(self.sentence)
        return bool(self.sentence)

    def set_compact(self, on: bool) -> None:
        """On a narrow window the note says less (the tooltip still has the whole sentence)."""
        self._compact = on
        self._show_text()

    def _show_text(self) -> None:
        if not self.sentence:
            self.label.setText("")
        else:
            self.label.setText("Not GPT-2." if self._compact else "Not GPT-2: the chapter's numbers differ.")
