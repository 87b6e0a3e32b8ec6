"""The pointer as a hand moves it: onto a place, resting there until the tip comes."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QPoint
from PySide6.QtGui import QHelpEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget


def rest_on(qtbot, widget: QWidget, place: QPoint, wait_ms: int = 300) -> None:  # type: ignore[no-untyped-def]
    """Move onto ``place`` and rest there; Qt then asks the widget for its tip, as it does after a rest."""
    QTest.mouseMove(widget, place)
    qtbot.wait(wait_ms)
    # Offscreen, Qt's tip timer never fires without a real pointer: send the event it would send.
    QCoreApplication.sendEvent(widget, QHelpEvent(QHelpEvent.Type.ToolTip, place, widget.mapToGlobal(place)))
