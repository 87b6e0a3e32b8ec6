"""A frame in the focus colour on the control that has the keyboard's focus, whatever the style draws.

Fusion shows focus on push buttons only after a Tab, and on tool buttons and tab bars hardly at
all: someone working the window from the keyboard could not tell where they are.
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QStyleOptionComplex, QWidget

FRAMED_CONTROLS = (
    QStyle.ControlElement.CE_PushButton,
    QStyle.ControlElement.CE_TabBarTab,
    QStyle.ControlElement.CE_CheckBox,
    QStyle.ControlElement.CE_RadioButton,
)


class VisibleFocus(QProxyStyle):
    """The application's style, with a focus frame on buttons, check boxes, tool buttons and tabs."""

    def drawControl(  # noqa: N802 - Qt's name
        self, element: QStyle.ControlElement, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        super().drawControl(element, option, painter, widget)
        if element in FRAMED_CONTROLS and _focused(option, widget):
            _frame(painter, option.rect, option)  # type: ignore[attr-defined]

    def drawComplexControl(  # noqa: N802 - Qt's name
        self,
        control: QStyle.ComplexControl,
        option: QStyleOptionComplex,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawComplexControl(control, option, painter, widget)
        if control == QStyle.ComplexControl.CC_ToolButton and _focused(option, widget):
            _frame(painter, option.rect, option)  # type: ignore[attr-defined]


def _focused(option: QStyleOption, widget: QWidget | None) -> bool:
    return bool(option.state & QStyle.StateFlag.State_HasFocus) and widget is not None and widget.hasFocus()  # type: ignore[attr-defined]


def _frame(painter: QPainter, rect: QRect, option: QStyleOption) -> None:
    painter.save()
    painter.setPen(QPen(option.palette.highlight().color(), 2))  # type: ignore[attr-defined]
    painter.drawRoundedRect(rect.adjusted(1, 1, -1, -1), 3, 3)
    painter.restore()


def show_focus_everywhere() -> None:
    """Wrap the application's style once so that focus is always drawn (see ``VisibleFocus``)."""
    app = QApplication.instance()
    if isinstance(app, QApplication) and not isinstance(app.style(), VisibleFocus):
        app.setStyle(VisibleFocus(app.style().name()))
