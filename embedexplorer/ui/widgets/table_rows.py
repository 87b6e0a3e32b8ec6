"""A table that always has room for a few rows: its least height follows its type size."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTableView
from shiboken6 import isValid

# The fewest rows a result table shows at once: a class reads seven ends, seven layers, without scrolling it.
LEAST_ROWS = 7


def rows_height(table: QTableView, rows: int) -> int:
    """The height ``table`` needs to show ``rows`` rows under its header, frame included."""
    row = max(table.verticalHeader().defaultSectionSize(), table.fontMetrics().height() + 6)
    if table.model() is not None and table.model().rowCount():
        row = max(row, table.rowHeight(0), table.sizeHintForRow(0))  # rows as filled (a taller type, a bar)
    header = table.horizontalHeader().sizeHint().height() if table.horizontalHeader().isVisible() else 0
    return header + rows * row + 2 * table.frameWidth() + 2


class KeepRows(QObject):
    """Keeps ``table`` at least ``rows`` rows tall, now and whenever its type changes (presentation mode)."""

    def __init__(self, table: QTableView, rows: int = LEAST_ROWS) -> None:
        super().__init__(table)
        self.table, self.rows = table, rows
        table.installEventFilter(self)
        model = table.model()
        if model is not None:
            model.rowsInserted.connect(self._fit)
            model.modelReset.connect(self._fit)
        self._fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.table and event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit()
        return False

    def _fit(self, *_ignored: object) -> None:
        if isValid(self.table):  # the model tells of its end while the table is being deleted
            self.table.setMinimumHeight(rows_height(self.table, self.rows))
