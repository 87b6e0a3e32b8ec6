"""The window's panes in a scroll area of last resort: the window's least size never exceeds a small screen."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

# What the panes may ask of the window at least before they scroll instead: below the smallest screen a
# person may have (a 1024x640 laptop at 150 % desktop scaling is 683x427 of Qt's pixels) with room
# to spare for the menus, the toolbars and the status bar around them.
LEAST_ROOM = QSize(480, 240)
NAME = "screenScroll"


class ScreenScroll(QScrollArea):
    """Holds the window's panes at the size of the window; they scroll only where it is smaller than they need.

    Larger type (desktop scaling, a larger font, presentation mode on top) makes the panes ask for
    more than a projector's or a laptop's screen has: asked for by the central widget, that least
    size made Qt grow the window past the screen's edge, and the window manager cut off its side.
    Here the panes' least size is ``LEAST_ROOM`` at most: the window stays on the screen and what
    does not fit is a scroll away. Where everything fits (the claimed sizes at the usual type) it
    lays out as before, and nothing scrolls.
    """

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.setObjectName(NAME)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        # Only the panes' own controls take the keyboard (Ctrl+Tab lands on a control, not here).
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWidget(content)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        content = self.widget()
        needed = content.minimumSizeHint().expandedTo(content.minimumSize()) if content is not None else QSize()
        return needed.boundedTo(LEAST_ROOM)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        content = self.widget()
        return content.sizeHint() if content is not None else super().sizeHint()
