"""A box of several lines in a dialog that the keyboard can leave: Tab moves on, Ctrl+Enter is OK.

Qt's own boxes of several lines take Tab as a character and Enter as a new line, so a person at
the keyboard is kept inside: a tab typed into a word list becomes part of a word.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QPlainTextEdit

OK_KEYS = ("Ctrl+Return", "Ctrl+Enter")


def let_keyboard_leave(box: QPlainTextEdit, accept: Callable[[], None]) -> None:
    """Tab in ``box`` moves to the next control; Ctrl+Enter in it calls ``accept`` (the dialog's OK)."""
    box.setTabChangesFocus(True)
    for keys in OK_KEYS:
        shortcut = QShortcut(QKeySequence(keys), box)
        shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
        shortcut.activated.connect(accept)
