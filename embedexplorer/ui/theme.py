"""Colours: one per family, and plot colours that follow the system's light or dark palette."""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

from ..core.maps.colours import FAMILY_COLOURS


def family_colour(index: int) -> QColor:
    return QColor(FAMILY_COLOURS[index % len(FAMILY_COLOURS)])


def is_dark() -> bool:
    palette = QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def plot_background() -> QColor:
    return QGuiApplication.palette().color(QPalette.ColorRole.Base)


def plot_foreground() -> QColor:
    return QGuiApplication.palette().color(QPalette.ColorRole.Text)


def accent() -> QColor:
    return QColor("#FFB000") if is_dark() else QColor("#C00060")
