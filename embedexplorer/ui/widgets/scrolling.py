"""A pane that scrolls instead of holding the window larger than the screen."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget


def scroll_within(pane: QWidget, content: QWidget) -> QScrollArea:
    """Fill ``pane`` with a frameless scroll area showing ``content``.

    On a narrow or short window (a laptop, presentation mode's larger type) the pane then
    scrolls rather than squeezing its plots flat or making the window wider or taller than
    the screen.
    """
    area = QScrollArea()
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    # Frameless, the area cannot show it has the keyboard: Tab and Ctrl+Tab go to the controls in it
    # (the area still scrolls to show each one that takes the focus).
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    outer = QVBoxLayout(pane)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(area)
    return area
