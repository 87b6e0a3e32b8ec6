"""A wrapping label that keeps its height whatever its text, so new answers never move the layout."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPaintEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

# The mark a label shows where its text goes on beyond its room (the whole text is in its tooltip).
MORE = "…"


class SteadyLabel(QLabel):
    """A label that always takes ``lines`` lines; ``wrap=False`` keeps each line of the text on one.

    A plain wrapping QLabel asks for more or less height as its text changes,
    and every such change re-lays out the window and repaints both plots: a
    visible hitch on every answer. This one reserves its lines once; text that
    does not fit ends in "…" at the label's bottom right, and the whole of it is in the tooltip.
    """

    def __init__(self, lines: int, text: str = "", parent: QWidget | None = None, *, wrap: bool = True) -> None:
        super().__init__(text, parent)
        self._lines = lines
        self.setWordWrap(wrap)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self._height())

    def _height(self) -> int:
        margins = self.contentsMargins()
        # Rich text sets lines a pixel or so further apart than the font's own spacing.
        return (self.fontMetrics().lineSpacing() + 2) * self._lines + margins.top() + margins.bottom()

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        # The tip is shown literally (plain_text.py): it holds the words drawn, not the markup behind them.
        self.setToolTip(self.shown_text())

    def _document(self, text: str | None = None) -> QTextDocument:
        """The text (or ``text``) as the label lays it out: its markup read as HTML where the label draws it so."""
        text = self.text() if text is None else text
        document = QTextDocument()
        document.setDefaultFont(self.font())
        document.setDocumentMargin(0)
        rich = self.textFormat() == Qt.TextFormat.RichText or (
            self.textFormat() == Qt.TextFormat.AutoText and "<" in text
        )
        if rich:
            document.setHtml(text)
        else:
            document.setPlainText(text)
        return document

    def shown_text(self) -> str:
        """The words the label draws (for a rich label, its markup's plain text)."""
        return self._document().toPlainText() if self.text() else ""

    def _laid_out(self) -> QTextDocument:
        """The text laid out as the label shows it: wrapped at the label's width, or each line whole."""
        document = self._document()
        if self.wordWrap():
            document.setTextWidth(max(1, self.contentsRect().width()))
        return document

    def needed_size(self, document: QTextDocument | None = None) -> QSize:
        """The room the whole text takes in this font (``document``: the text already laid out)."""
        size = (document or self._laid_out()).size()
        return QSize(int(size.width() + 0.999), int(size.height() + 0.999))

    def whole_width(self, text: str | None = None) -> int:
        """The width the text (or ``text``) takes on one line in this label, margins included."""
        margins = self.contentsMargins()
        return int(self._document(text).idealWidth() + 0.999) + margins.left() + margins.right()

    def is_shortened(self, document: QTextDocument | None = None) -> bool:
        """True when part of the text is out of sight (then "…" says so, and the tooltip has it all)."""
        if not self.text():
            return False
        needed, room = self.needed_size(document), self.contentsRect()
        # Rich text sets lines a pixel or so further apart than the room counted for them.
        return needed.width() > room.width() + 1 or needed.height() > room.height() + self._lines + 2

    def whole_lines_height(self, document: QTextDocument | None = None) -> int:
        """Pixels from the top of the room to the foot of the last line that fits in it whole."""
        document, room = document or self._laid_out(), self.contentsRect()
        foot, block = 0.0, document.begin()
        while block.isValid():
            top = document.documentLayout().blockBoundingRect(block).top()
            layout = block.layout()
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                bottom = top + line.y() + line.height()
                if bottom > room.height() + 1:  # the first line that does not fit: the rest are lower still
                    return int(foot + 0.999)
                foot = bottom
            block = block.next()
        return int(foot + 0.999)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        document = self._laid_out() if self.text() else None  # laid out once for both questions
        if document is None or not self.is_shortened(document):
            return
        painter = QPainter(self)
        background = self.palette().color(self.backgroundRole())
        metrics = QFontMetrics(self.font())
        room = self.contentsRect()
        # The line that does not fit would show the top of its letters in the last pixels: cover it.
        foot = room.top() + min(room.height(), self.whole_lines_height(document))
        painter.fillRect(QRect(room.left(), foot, room.width(), room.bottom() + 1 - foot), background)
        mark = QRect(room.right() - metrics.horizontalAdvance(MORE + " "), foot - metrics.height(),
                     metrics.horizontalAdvance(MORE + " "), metrics.height())
        painter.fillRect(mark, background)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(mark, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom, MORE)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(80, self._height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(40, self._height())

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return False

    def changeEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)  # type: ignore[arg-type]
        # A new font or style changes the line height; keep exactly ``lines`` lines.
        self.setFixedHeight(self._height())
