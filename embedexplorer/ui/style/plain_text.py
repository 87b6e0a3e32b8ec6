"""Every string from a file, a path or a person is shown as the text it is, never as markup.

Qt renders a QLabel's text and every tooltip as HTML when it looks like HTML
(``Qt.mightBeRichText``): a model path, a family name or a lesson's note holding
``<img src="/abs/secret.png">`` would draw a private picture into the window and into
exported pictures.  The rule, in one place:

- labels: ``PlainTextGuard`` makes every QLabel that is left at Qt's automatic format
  plain text as it is polished; a label that wants markup says ``RichText`` itself and
  escapes every value it holds with ``markup_free``;
- tooltips: the guard shows one that looks like HTML as its literal text (widgets, the
  items of lists and tables, and the items of a plot: pyqtgraph puts a hovered point's tip
  on its view box); ``plain_tip`` does the same where a tooltip is shown directly
  (a map point's hover tip), and for a message box's text;
- pyqtgraph text (the map's caption and legend) is HTML: each value goes in through
  ``markup_free``.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtGui import Qt as GuiQt  # mightBeRichText lives in QtGui's part of the Qt namespace
from PySide6.QtWidgets import QAbstractItemView, QApplication, QGraphicsView, QLabel, QToolTip, QWidget

# Qt's own dialogs (QMessageBox's text, QInputDialog's prompt) keep the format their caller chose.
_QT_OWN = "qt_"


def markup_free(text: str) -> str:
    """``text`` for a place that reads HTML: every ``<``, ``>`` and ``&`` shown as itself."""
    return html.escape(text, quote=False)


# A tooltip made literal: escaped text between these (Qt reads <qt> as "this is rich text").
_LITERAL_START = "<qt><p style='white-space:pre-wrap'>"
_LITERAL_END = "</p></qt>"


def plain_tip(text: str) -> str:
    """``text`` shown literally where Qt renders text that looks like HTML as HTML (tooltips, message boxes)."""
    if not text or not GuiQt.mightBeRichText(text):
        return text
    return _LITERAL_START + markup_free(text) + _LITERAL_END


def wrapped_tip(text: str) -> str:
    """``text`` as a literal tooltip that Qt wraps to the screen (a long plain line runs past its edge)."""
    return _LITERAL_START + markup_free(text) + _LITERAL_END if text else text


def _made_literal(tip: str) -> bool:
    middle = tip[len(_LITERAL_START) : -len(_LITERAL_END)]
    return tip.startswith(_LITERAL_START) and tip.endswith(_LITERAL_END) and "<" not in middle


class PlainTextGuard(QObject):
    """An application-wide event filter: automatic-format labels become plain, HTML-looking tooltips literal."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind == QEvent.Type.Polish and isinstance(watched, QLabel):
            if watched.textFormat() == Qt.TextFormat.AutoText and not watched.objectName().startswith(_QT_OWN):
                watched.setTextFormat(Qt.TextFormat.PlainText)
        elif kind == QEvent.Type.ToolTip and isinstance(watched, QWidget) and isinstance(event, QHelpEvent):
            tip = self._tip_of(watched, event)
            if tip and GuiQt.mightBeRichText(tip) and not _made_literal(tip):
                QToolTip.showText(event.globalPos(), plain_tip(tip), watched)
                return True
        return False

    @staticmethod
    def _tip_of(watched: QWidget, event: QHelpEvent) -> str:
        view = watched.parent()
        if isinstance(view, QAbstractItemView) and watched is view.viewport():
            index = view.indexAt(event.pos())
            value = index.data(Qt.ItemDataRole.ToolTipRole) if index.isValid() else None
            return value if isinstance(value, str) else ""
        if isinstance(view, QGraphicsView) and watched is view.viewport():
            # As QGraphicsScene does: the topmost item under the pointer that has a tip.
            for item in view.items(event.pos()):
                if item.toolTip():
                    return item.toolTip()
            return ""
        return watched.toolTip()


_guard: PlainTextGuard | None = None


def guard_plain_text(app: QApplication) -> None:
    """Install the guard once for the whole application (the window does, as it is built)."""
    global _guard
    if _guard is None:
        _guard = PlainTextGuard(app)
        app.installEventFilter(_guard)
