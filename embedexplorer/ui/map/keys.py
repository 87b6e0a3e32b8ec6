"""The map from the keyboard: Tab reaches the canvas, so its keys zoom, pan and look up as the mouse does."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent

from .canvas_parts import CanvasParts

ZOOM_STEP = 1.25  # one key press: a quarter closer or further, as a few wheel clicks do
PAN_STEP = 0.1  # one arrow press moves the view a tenth of its width or height

# key -> (x, y) direction of the move, y up as the map's axis goes
PAN_KEYS = {
    Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0),
    Qt.Key.Key_Up: (0, 1), Qt.Key.Key_Down: (0, -1),
}  # fmt: skip
ZOOM_IN_KEYS = (Qt.Key.Key_Plus, Qt.Key.Key_Equal)
LOOK_UP_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)

KEYS_HINT = "Keys: + and - zoom, arrows move, Enter looks up the word Find ringed, Ctrl+0 shows it all"


class KeyboardMoves(CanvasParts):
    """+ and - zoom about the middle, arrows pan, Enter looks up the current Find match."""

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        # Shift is how most keyboards type "+"; Ctrl and Alt belong to the menus' shortcuts.
        taken = event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.KeypadModifier)
        if self.map is not None and taken == Qt.KeyboardModifier.NoModifier:
            if self._key_moves(event.key()):
                event.accept()
                return
        super().keyPressEvent(event)  # type: ignore[misc]

    def _key_moves(self, key: int) -> bool:
        view = self.plot.getViewBox()
        if key in ZOOM_IN_KEYS or key == Qt.Key.Key_Minus:
            factor = 1 / ZOOM_STEP if key in ZOOM_IN_KEYS else ZOOM_STEP
            view.scaleBy((factor, factor))  # about the view's middle
            return True
        if key in PAN_KEYS:
            (x0, x1), (y0, y1) = view.viewRange()
            dx, dy = PAN_KEYS[key]  # type: ignore[index]
            view.translateBy(x=dx * PAN_STEP * (x1 - x0), y=dy * PAN_STEP * (y1 - y0))
            return True
        if key in LOOK_UP_KEYS and self._current >= 0 and self.map is not None:
            self.point_clicked.emit(self.map.texts[int(self._matches[self._current])])
            return True
        return False
