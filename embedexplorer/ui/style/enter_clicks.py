"""Enter on a focused button of the main window clicks it, as Space does.

Qt clicks a focused push button on Enter only inside a dialog (its default-button rule); in the
main window Enter on Show the k nearest, a family's name or Run through the layers did nothing, so
a person at the keyboard had to know to press Space. A filter sits on the focused button alone, as
the focus frame does, never on every event of the application.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QDialog, QPushButton, QToolButton, QWidget
from shiboken6 import isValid

from .app_wide import once_per_application

ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
CLICKED_ON_ENTER = (QPushButton, QToolButton)
# A button that gives Enter a meaning of its own sets this property (a toolbar's "»" shows a menu).
HANDLES_ENTER = "handlesEnter"


class EnterClicks(QObject):
    """Watches the focused button of a window that is no dialog; Enter (no modifier) clicks it."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._button: QWidget | None = None
        app.focusChanged.connect(self._on_focus_changed)

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if self._button is not None and isValid(self._button):
            self._button.removeEventFilter(self)
        self._button = None
        # In a dialog Enter already clicks the focused button (or the default one): left to Qt.
        in_dialog = new is not None and isinstance(new.window(), QDialog)
        if isinstance(new, CLICKED_ON_ENTER) and not in_dialog and not new.property(HANDLES_ENTER):
            self._button = new
            new.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if (
            watched is self._button
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in ENTER_KEYS
            and event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier == Qt.KeyboardModifier.NoModifier
            and isinstance(watched, CLICKED_ON_ENTER)
            and watched.isEnabled()
        ):
            watched.animateClick()
            return True
        return False


def click_on_enter_everywhere() -> None:
    """Install ``EnterClicks`` once for the whole application."""
    once_per_application(EnterClicks)
