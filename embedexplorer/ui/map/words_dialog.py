"""Map > Words matching...: a regular expression, or a list of words pasted one a line."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ..widgets.leaving_text_box import let_keyboard_leave


class WordsDialog(QDialog):
    """Map > Words matching...: a regular expression, or a list of words pasted one a line."""

    def __init__(self, pattern: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Words matching")
        self.regex_choice = QRadioButton("Tokens whose text matches a &regular expression")
        self.list_choice = QRadioButton("A &list of words, one a line (a leading space is part of the word)")
        self.regex_choice.setChecked(True)
        self.pattern = QLineEdit(pattern)
        self.pattern.setPlaceholderText(r"e.g. ^ [A-Z][a-z]+$  (GPT-2: capitalised words after a space)")
        self.listing = QPlainTextEdit()
        self.listing.setPlaceholderText(" Paris\n London\n Tokyo")
        self.regex_choice.toggled.connect(self._on_choice)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        let_keyboard_leave(self.listing, self.accept)
        layout = QVBoxLayout(self)
        for widget in (self.regex_choice, self.pattern, self.list_choice, self.listing, box):
            layout.addWidget(widget)
        self._on_choice(True)
        self.pattern.selectAll()  # typed over at once: the dialog opens to type a pattern

    def _on_choice(self, regex: bool) -> None:
        self.pattern.setEnabled(regex)
        self.listing.setEnabled(not regex)
        (self.pattern if regex else self.listing).setFocus()

    def request(self) -> tuple[str, str]:
        """("regex", pattern) or ("list", text)."""
        if self.regex_choice.isChecked():
            return "regex", self.pattern.text()
        return "list", self.listing.toPlainText()

