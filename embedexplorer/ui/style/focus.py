"""A frame in the focus colour on the control that has the keyboard's focus, whatever the style draws.

Fusion shows focus on push buttons only after a Tab, and on tool buttons and tab bars hardly at
all: someone working the window from the keyboard could not tell where they are.

The frame is a small widget laid over the focused control, moved when the focus moves. It is a
child of that control, so a picture of the control (``grab``) holds it too. It is not drawn by a
style: a style written in Python is called for every button, box and table cell each time one is
painted, and each call waits for Python's lock while the worker thread computes.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QApplication, QCheckBox, QPushButton, QRadioButton, QTabBar, QToolButton, QWidget
from shiboken6 import isValid

from .app_wide import once_per_application

# The controls that get the frame: buttons, check boxes, radio buttons, tool buttons and tabs.
FRAMED_CONTROLS = (QPushButton, QCheckBox, QRadioButton, QToolButton, QTabBar)


class FocusFrame(QWidget):
    """The frame itself: a rounded rectangle in the highlight colour over its control (a tab bar: its current tab)."""

    def __init__(self, control: QWidget) -> None:
        super().__init__(control)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setGeometry(control.rect())

    def framed(self) -> QRect:
        control = self.parentWidget()
        if isinstance(control, QTabBar):
            return control.tabRect(control.currentIndex())
        return self.rect()

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        rect = self.framed()
        if rect.isEmpty():
            return
        painter = QPainter(self)
        painter.setPen(QPen(self.palette().highlight().color(), 2))
        painter.drawRoundedRect(rect.adjusted(1, 1, -1, -1), 3, 3)
        painter.end()


class FocusFrames(QObject):
    """Puts the frame on each framed control as it takes the focus and takes it away as it loses it."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.frame: FocusFrame | None = None
        self._control: QWidget | None = None
        app.focusChanged.connect(self._on_focus_changed)

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        self._take_away()
        if isinstance(new, FRAMED_CONTROLS):
            self._control = new
            self.frame = FocusFrame(new)
            new.installEventFilter(self)  # its size and its tabs: this one control's events only
            if isinstance(new, QTabBar):
                new.currentChanged.connect(self.frame.update)
            self.frame.show()
            self.frame.raise_()

    def _take_away(self) -> None:
        control, frame = self._control, self.frame
        self._control = self.frame = None
        if control is not None and isValid(control):
            control.removeEventFilter(self)
        if frame is not None and isValid(frame):  # gone already where its control was deleted
            frame.hide()
            frame.deleteLater()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        control, frame = self._control, self.frame
        if watched is control and control is not None and frame is not None and isValid(frame):
            kind = event.type()
            if kind == QEvent.Type.Resize:
                frame.setGeometry(control.rect())
            elif kind == QEvent.Type.ChildAdded:
                frame.raise_()  # above a child the control gains later (a tab bar's scroll arrows)
        return False


def show_focus_everywhere() -> None:
    """Follow the keyboard's focus with a frame once for the whole application (see ``FocusFrames``)."""
    once_per_application(FocusFrames)
