"""Plain text on up to a fixed number of lines: wrapped at words, the last line ending in "…" if still too long.

A class reads the answer on the screen; nothing is ever cut mid-letter, and when the
room runs out the whole text is one hover away (the tooltip).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QPaintEvent, QTextLayout, QTextOption
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from ..style.plain_text import wrapped_tip


class WrappedLabel(QLabel):
    """Up to ``lines`` lines of plain text; the label's height stays the same whatever its text.

    ``shown_lines()`` says what is drawn now; ``is_shortened()`` whether the tooltip holds more.
    """

    def __init__(self, lines: int, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lines = lines
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setText(text)
        self._fix_height()

    def _fix_height(self) -> None:
        self.setFixedHeight(self.height_for(self._lines))

    def height_for(self, lines: int) -> int:
        """The label's height with room for ``lines`` lines in its font."""
        margins = self.contentsMargins()
        return int(QFontMetricsF(self.font()).lineSpacing() * lines) + 2 + margins.top() + margins.bottom()

    def lines(self) -> int:
        """The lines the label has room for now."""
        return self._lines

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self._update_tip()

    def shown_lines(self) -> list[str]:
        """The lines as drawn at the label's width now (the last one shortened with "…" if need be)."""
        text = self.text()
        width = max(1.0, float(self.contentsRect().width()))
        metrics = QFontMetricsF(self.font())
        layout = QTextLayout(text, self.font())
        option = QTextOption()
        # Breaks between words only: a word wider than the line ends it in "…" (whole in the tooltip),
        # never split across two lines ("cosine(monda" / "y (id ...").
        option.setWrapMode(QTextOption.WrapMode.WordWrap)
        layout.setTextOption(option)
        layout.beginLayout()
        lines: list[str] = []
        while len(lines) < self._lines:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width)
            start, length = line.textStart(), line.textLength()
            if len(lines) == self._lines - 1 or line.naturalTextWidth() > width:
                rest = text[start:]
                lines.append(metrics.elidedText(rest, Qt.TextElideMode.ElideRight, width))
                break
            lines.append(text[start:start + length].rstrip())
        layout.endLayout()
        return lines

    def is_shortened(self) -> bool:
        """True when the drawn lines leave part of the text out (it is then in the tooltip)."""
        shown = "".join(self.shown_lines()).replace(" ", "")
        return shown != self.text().replace(" ", "").replace("\n", "")

    def set_lines(self, lines: int) -> None:
        """Room for ``lines`` lines from now on (presentation mode's larger type needs more)."""
        self._lines = lines
        self._fix_height()
        self._update_tip()
        self.update()

    def _update_tip(self) -> None:
        # As a paragraph: Qt wraps it to the screen, where a plain line would run past its edge.
        self.setToolTip(wrapped_tip(self.text()) if self.text() and self.is_shortened() else "")

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        rect = self.contentsRect()
        step = QFontMetricsF(self.font()).lineSpacing()
        where = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
        for number, line in enumerate(self.shown_lines()):
            painter.drawText(rect.adjusted(0, int(number * step), 0, 0), where, line)

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._update_tip()

    def changeEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)  # type: ignore[arg-type]
        if hasattr(self, "_lines"):  # a new font (presentation mode): the same lines, taller
            self._fix_height()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(80, self.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(40, self.height())
