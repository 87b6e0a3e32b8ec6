"""Bring a widget into sight: the tab (or tabs, one inside another) holding it becomes the current one."""

from __future__ import annotations

from PySide6.QtWidgets import QStackedWidget, QTabWidget, QWidget


def bring_forward(widget: QWidget) -> None:
    """Make every tab page that holds ``widget`` current, so what is given the keyboard next is seen."""
    child, parent = widget, widget.parentWidget()
    while parent is not None:
        tabs = parent.parentWidget()
        if isinstance(parent, QStackedWidget) and isinstance(tabs, QTabWidget):
            tabs.setCurrentWidget(child)
        child, parent = parent, tabs
