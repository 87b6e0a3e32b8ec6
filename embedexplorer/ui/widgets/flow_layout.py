"""A row of buttons that wraps onto more lines when the pane is too narrow for it.

A plain row asks for the width of all its buttons, so a narrow pane (a laptop, presentation
mode's larger type) scrolls sideways and cuts every sentence below it at the right edge. This
row asks only for its widest button and grows in height instead (``heightForWidth``).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QStyle, QWidget


class FlowLayout(QLayout):
    """Widgets left to right in their preferred sizes, a new line where the next one would not fit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []

    # ----- what QLayout asks of a layout -------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt's name
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt's name
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """All on one line: what the row would like."""
        visible = [item for item in self._items if not item.isEmpty()]
        margins = self.contentsMargins()
        width = sum(item.sizeHint().width() for item in visible) + self._gap() * max(0, len(visible) - 1)
        height = max((item.sizeHint().height() for item in visible), default=0)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        """The widest item: anything narrower than that could not show it whole on a line of its own."""
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize()).expandedTo(QSize(item.sizeHint().width(), 0))
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    # ----- placing ------------------------------------------------------------------------------
    def _gap(self) -> int:
        spacing = self.spacing()
        if spacing >= 0:
            return spacing
        parent = self.parentWidget()
        style = parent.style() if parent is not None else None
        if style is None:
            return 6
        return style.pixelMetric(QStyle.PixelMetric.PM_LayoutHorizontalSpacing, None, parent)

    def _place(self, rect: QRect, move: bool) -> int:
        """Lay the items out within ``rect`` (only measure unless ``move``); the height they take."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        gap = max(0, self._gap())
        x, y, line_height = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if x > area.x() and x + hint.width() > area.right() + 1:  # does not fit: a new line
                x, y, line_height = area.x(), y + line_height + gap, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + gap
            line_height = max(line_height, hint.height())
        return y + line_height - rect.y() + margins.bottom()


def flow_row(*widgets: QWidget) -> FlowLayout:
    """``widgets`` in a row that wraps; each keeps its preferred width."""
    row = FlowLayout()
    row.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        widget.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        row.addWidget(widget)
    return row
