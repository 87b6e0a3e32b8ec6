"""A one-line label that ends in "…" where its room runs out, instead of being cut mid-letter."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel

from .steady_label import MORE


class ElidedLabel(QLabel):
    """Plain text on one line; a narrow window shows its start and "…", the tooltip can hold the rest.

    A plain QLabel in a status bar is clipped at the bar's edge, so a reader cannot tell
    that anything is missing.
    """

    # Marks after which the text may be shortened (a list of facts: "; ,"), so that each fact shown is whole;
    # none: shortened at any letter.
    breaks = ""

    def shown_text(self) -> str:
        """The text as drawn now: whole where it fits, else shortened with "…" at its end (after a break mark)."""
        width = self.contentsRect().width()
        metrics, text = self.fontMetrics(), self.text()
        if self.breaks and metrics.horizontalAdvance(text) > width:
            cuts = [at for at, mark in enumerate(text) if mark in self.breaks]
            for at in reversed(cuts):
                shortened = text[:at] + MORE
                if metrics.horizontalAdvance(shortened) <= width:
                    return shortened
        return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)

    def is_shortened(self) -> bool:
        return self.shown_text() != self.text()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        where = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(self.contentsRect(), where, self.shown_text())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        # Any width will do: the text shortens to fit.
        return QSize(0, super().minimumSizeHint().height())
