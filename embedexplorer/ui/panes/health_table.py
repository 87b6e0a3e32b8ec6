"""The Health pane's ranked list: a table model over a ``HealthReport``, filtered by reason, and its reason chips.

A vocabulary has up to a few hundred thousand tokens, so the list is a model that reads
the report on demand, not one widget item per cell. Tokens are shown as plain text (an
item view never reads a cell as HTML), with characters no font draws spelled out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ...core.health.scoring import SCORE_REASONS
from ..style import fonts

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.health.repeat_check import RepeatCheck
    from ...core.health.report import HealthReport

Index = QModelIndex | QPersistentModelIndex
ID_ROLE = Qt.ItemDataRole.UserRole
REASONS_ROLE = Qt.ItemDataRole.UserRole + 1
# Columns: the indicator key (None for the fixed ones) and the header.
_FIXED = ("rank", "id", "token", "score", "reasons")
_INDICATORS = (
    ("length", "length"),
    ("cosine", "cosine to unreachable"),
    ("head_cosine", "head cosine"),
    ("partner", "duplicate of"),
)
REASONS_COLUMN = 4
REPEAT_KEY, REPEAT_TITLE = "repeat", "repeat P"  # the check with the model, once asked
# Chip colours: what the rows say (warm), what the tokenizer says (cool).
_ROW_CHIP = QColor(196, 72, 52)
_TOKENIZER_CHIP = QColor(60, 110, 170)


class HealthTableModel(QAbstractTableModel):
    """The report's tokens, most suspicious first, limited to those carrying any of the chosen reasons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: HealthReport | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        self.ranks = np.zeros(0, dtype=np.int64)
        self.columns: list[tuple[str | None, str]] = [(None, name) for name in _FIXED]
        self.repeat: dict[int, float] | None = None  # token id -> the probability the model gave it

    def set_report(self, report: HealthReport | None, reasons: set[str], flagged_only: bool) -> None:
        self.beginResetModel()
        self.report = report
        self.repeat = None  # a new report: the old check belongs to the old ranking
        self._columns()
        self._filter(reasons, flagged_only)
        self.endResetModel()

    def set_repeat(self, check: RepeatCheck | None) -> None:
        """Show the model's repeat probabilities as a column beside the indicators (None removes it)."""
        self.beginResetModel()
        self.repeat = None if check is None or check.unavailable is not None else check.by_id
        self._columns()
        self.endResetModel()

    def _columns(self) -> None:
        self.columns = [(None, name) for name in _FIXED]
        if self.report is not None:
            # The model's answer first, right after the reasons, where it is read against them.
            if self.repeat is not None:
                self.columns.append((REPEAT_KEY, REPEAT_TITLE))
            self.columns += [(key, title) for key, title in _INDICATORS if key in self.report.indicators]

    def set_filter(self, reasons: set[str], flagged_only: bool) -> None:
        self.beginResetModel()
        self._filter(reasons, flagged_only)
        self.endResetModel()

    def _filter(self, reasons: set[str], flagged_only: bool) -> None:
        report = self.report
        if report is None:
            self.ids = self.ranks = np.zeros(0, dtype=np.int64)
            return
        keep = np.ones(report.size, dtype=bool)
        if reasons:
            keep = np.zeros(report.size, dtype=bool)
            for reason in reasons:
                keep |= report.flags[reason]
        if flagged_only:
            keep &= report.flagged
        chosen = keep[report.order]
        self.ids = report.order[chosen]
        self.ranks = np.flatnonzero(chosen) + 1

    def row_of(self, token_id: int) -> int | None:
        found = np.flatnonzero(self.ids == token_id)
        return int(found[0]) if found.size else None

    # ----- QAbstractTableModel -------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's signature
        return 0 if parent.isValid() else int(self.ids.size)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's signature
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section][1]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.TextAlignmentRole:
            # Over its chips, which start at the column's left: the column often runs past the view's right
            # edge, where a centred word showed only its first letter.
            across = Qt.AlignmentFlag.AlignLeft if section == REASONS_COLUMN else Qt.AlignmentFlag.AlignHCenter
            return int(across | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        report = self.report
        if report is None or not index.isValid():
            return None
        token_id = int(self.ids[index.row()])
        column = index.column()
        if role == ID_ROLE:
            return token_id
        if role == REASONS_ROLE:
            return report.reasons_of(token_id)
        if role == Qt.ItemDataRole.TextAlignmentRole and column != 2 and column != REASONS_COLUMN:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == REASONS_COLUMN:
            return ", ".join(report.reasons_of(token_id)) or "no reason: a row like most"
        key = self.columns[column][0]
        if key == REPEAT_KEY and role == Qt.ItemDataRole.ToolTipRole:
            return "The probability the model gives this token when asked to repeat it (empty: not asked)"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if key is None:
            return self._fixed(report, token_id, column, index.row())
        if key == REPEAT_KEY:
            found = (self.repeat or {}).get(token_id)
            return "" if found is None else f"{found:.4g}"
        value = float(report.indicators[key][token_id])
        if not np.isfinite(value):
            return ""
        if key == "partner":
            return fonts.for_window(str(report.tokens[int(value)])) + f" ({int(value)})"
        return f"{value:.4g}"

    def _fixed(self, report: HealthReport, token_id: int, column: int, row: int) -> str:
        if column == 0:
            return f"{int(self.ranks[row]):,}"
        if column == 1:
            return str(token_id)
        if column == 2:
            return fonts.for_window(str(report.tokens[token_id]))
        if column == 3:
            return f"{float(report.score[token_id]):.2f}"
        return ""  # the reasons column is drawn as chips


class ReasonChips(QStyledItemDelegate):
    """Each reason as a small rounded label: warm for what the rows say, cool for what the tokenizer says."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        if index.column() != REASONS_COLUMN:
            super().paint(painter, option, index)
            return
        if option.state & QStyle.StateFlag.State_Selected:  # type: ignore[operator]
            painter.fillRect(option.rect, option.palette.highlight())  # type: ignore[attr-defined]
        reasons = index.data(REASONS_ROLE) or []
        metrics = QFontMetrics(option.font)  # type: ignore[attr-defined]
        rect: QRect = option.rect  # type: ignore[attr-defined]
        x = rect.left() + 3
        height = metrics.height() + 2
        top = rect.top() + (rect.height() - height) // 2
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        for reason in reasons:
            width = metrics.horizontalAdvance(reason) + 10
            if x + width > rect.right():
                painter.setPen(option.palette.text().color())  # type: ignore[attr-defined]
                painter.drawText(QRect(x, top, rect.right() - x, height), Qt.AlignmentFlag.AlignVCenter, "…")
                break
            chip = QRect(x, top, width, height)
            colour = _ROW_CHIP if reason in SCORE_REASONS else _TOKENIZER_CHIP
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(chip, height / 2, height / 2)
            painter.setPen(QColor("white"))
            painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, reason)
            x += width + 4
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802 - Qt's name
        size = super().sizeHint(option, index)
        if index.column() == REASONS_COLUMN:
            metrics = QFontMetrics(option.font)  # type: ignore[attr-defined]
            reasons = index.data(REASONS_ROLE) or []
            size.setWidth(sum(metrics.horizontalAdvance(r) + 14 for r in reasons) + 6)
        return size
