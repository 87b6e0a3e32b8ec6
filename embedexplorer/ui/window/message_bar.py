"""A slim bar above the panes for errors and notices: never modal, never lost."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

_STYLES = {
    "error": "background: #fde7e9; color: #6b0010; border: 1px solid #f3b3bb; border-radius: 4px;",
    "info": "background: #e6f1fb; color: #0b3a5b; border: 1px solid #b5d3ee; border-radius: 4px;",
}


class MessageBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setAccessibleName("message")
        self.action_button = QPushButton()
        self.action_button.hide()
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button)
        layout.addWidget(self.close_button)
        self._action: Callable[[], None] | None = None
        self.action_button.clicked.connect(self._run_action)
        self.level = ""
        self.hide()

    def show_message(
        self, text: str, level: str = "error", action: tuple[str, Callable[[], None]] | None = None
    ) -> None:
        self.level = level
        self.setStyleSheet(f"MessageBar {{{_STYLES[level]}}} QLabel {{ border: none; background: transparent; }}")
        self.label.setText(text)
        if action:
            self.action_button.setText(action[0])
            self._action = action[1]
            self.action_button.show()
        else:
            self._action = None
            self.action_button.hide()
        self.show()

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""

    def _run_action(self) -> None:
        action = self._action
        self.hide()
        if action:
            action()
