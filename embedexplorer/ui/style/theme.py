"""Colours: one per family, and plot colours that follow the system's light or dark palette."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QColor, QGuiApplication, QPalette

from ...core.maps.colours import ACCENT_ON_DARK, ACCENT_ON_LIGHT, FAMILY_COLOURS


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
    return QColor(ACCENT_ON_DARK if is_dark() else ACCENT_ON_LIGHT)


# How much larger everything reads on a projector (View > Presentation).
PRESENTATION_SCALE = 1.4


def presentation_scale(on: bool) -> float:
    """The factor text, markers and lines are drawn at: larger in presentation mode."""
    return PRESENTATION_SCALE if on else 1.0


def on_colour_scheme_change(redraw: Callable[[], None]) -> None:
    """Call ``redraw`` when the desktop turns dark or light (Qt 6.5 and later say so)."""
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "colorSchemeChanged"):
        hints.colorSchemeChanged.connect(lambda _scheme: redraw())
