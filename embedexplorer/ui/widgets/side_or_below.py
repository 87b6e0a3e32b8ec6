"""Two parts side by side where there is room for both, the second under the first where there is not."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSplitter, QWidget


class SideOrBelow(QSplitter):
    """A splitter that lays ``first`` and ``second`` side by side while ``first`` can have the width it wants
    (``first_wants()``, asked at each layout: it changes with the contents and the font) beside
    ``second_wants`` pixels of ``second``, and one under the other otherwise: a laptop's screen, or
    presentation mode's larger type. Under each other, each keeps its least height and the pane around
    scrolls. Side by side, a handle dragged by a person stays where it was put; only a resize or a new
    font gives ``first`` its width back.
    """

    def __init__(
        self,
        first: QWidget,
        second: QWidget,
        first_wants: Callable[[], int],
        second_wants: int,
        heights_below: Callable[[], tuple[int, int]],
    ) -> None:
        super().__init__(Qt.Orientation.Horizontal)
        self._parts = (first, second)
        self._first_wants, self._second_wants, self._heights_below = first_wants, second_wants, heights_below
        self.addWidget(first)
        self.addWidget(second)
        self.setStretchFactor(0, 2)  # the first grows twice as fast as the second, either way
        self.setStretchFactor(1, 1)
        self.setChildrenCollapsible(False)

    def side_by_side(self) -> bool:
        return self.orientation() == Qt.Orientation.Horizontal

    def arrange(self) -> None:
        """Side by side or one under the other, by the width there is now; the first part its width."""
        first, second = self._parts
        wants = self._first_wants()
        beside = self.width() >= wants + self.handleWidth() + self._second_wants
        if beside != self.side_by_side():
            self.setOrientation(Qt.Orientation.Horizontal if beside else Qt.Orientation.Vertical)
        heights = (0, 0) if beside else self._heights_below()
        first.setMinimumHeight(heights[0])
        second.setMinimumHeight(heights[1])
        sizes = self.sizes()
        if beside and sizes[0] < wants:
            self.setSizes([wants, sum(sizes) - wants])

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():  # a height alone changes nothing here
            self.arrange()
