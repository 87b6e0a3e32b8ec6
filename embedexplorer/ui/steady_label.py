"""A wrapping label that keeps its height whatever its text, so new answers never move the layout."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class SteadyLabel(QLabel):
    """A label that always takes ``lines`` lines; ``wrap=False`` keeps each line of the text on one.

    A plain wrapping QLabel asks for more or less height as its text changes,
    and every such change re-lays out the window and repaints both plots: a
    visible hitch on every answer. This one reserves its lines once; text that
    does not fit is cut, and the whole of it is in the tooltip.
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
        self.setToolTip(text if text else "")

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
