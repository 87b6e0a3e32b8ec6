"""Every string from a file, a path or a person is shown as the text it is, never as markup.

Qt renders a QLabel's text and every tooltip as HTML when it looks like HTML
(``Qt.mightBeRichText``): a model path, a family name or a lesson's note holding
``<img src="/abs/secret.png">`` would draw a private picture into the window and into
exported pictures.  The rule, in one place:

- labels: the application's style (``PlainTextStyle``) makes every QLabel that is left at
  Qt's automatic format plain text as it is polished; a label that wants markup says
  ``RichText`` itself and escapes every value it holds with ``markup_free``;
- tooltips: every tooltip, whoever shows it (a widget, an item of a list or a table, a
  graphics item such as a plot's hovered point, ``QToolTip.showText``), is drawn by Qt's one
  tip label; the style watches that label and shows a tip that looks like HTML as its literal
  text.  ``plain_tip`` does the same where text is shown directly (a message box's text);
- pyqtgraph text (the map's caption and legend) is HTML: each value goes in through
  ``markup_free``.

Why the style and not an application-wide event filter: such a filter is a call into Python
for every event of every object (16,000 while the window opens), and each of those calls
waits for Python's lock while the worker thread computes: the launch took 0.1-0.2 s more and
the window stalled while a map was drawn.  A style's ``polish`` runs once per widget, and the
tip label's own filter only for that label's events.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import Qt as GuiQt  # mightBeRichText lives in QtGui's part of the Qt namespace
from PySide6.QtWidgets import QApplication, QLabel, QProxyStyle, QWidget

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


# Qt's tooltip label (private class): it draws every tooltip, so it is the one place to watch.
_TIP_LABEL_CLASS = "QTipLabel"


def _is_tip_label(widget: QWidget) -> bool:
    meta = widget.metaObject()
    return meta is not None and meta.className() == _TIP_LABEL_CLASS


class _TipGuard(QObject):
    """The tip label's filter: a tip that looks like HTML is shown as its text before it is drawn."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind in (QEvent.Type.Show, QEvent.Type.Paint) and isinstance(watched, QLabel):
            tip = watched.text()
            if tip and GuiQt.mightBeRichText(tip) and not _made_literal(tip):
                watched.setText(plain_tip(tip))
                # Sized as Qt sizes a tip (its size hint and one pixel); from a paint, once it is done.
                fit = lambda label=watched: label.resize(label.sizeHint() + QSize(1, 0))  # noqa: E731
                if kind == QEvent.Type.Show:
                    fit()
                else:
                    QTimer.singleShot(0, watched, fit)
        return False


class PlainTextStyle(QProxyStyle):
    """The application's style, which makes labels plain text as they are polished and watches the tip label."""

    def __init__(self, base: str) -> None:
        super().__init__(base)
        self._tips = _TipGuard(self)

    def polish(self, target: object) -> None:  # type: ignore[override]  # Qt's three overloads: one name
        super().polish(target)  # type: ignore[call-overload]
        if not isinstance(target, QLabel):
            return
        if _is_tip_label(target):
            target.installEventFilter(self._tips)  # shows text set after this, so watched as it shows
        elif target.textFormat() == Qt.TextFormat.AutoText and not target.objectName().startswith(_QT_OWN):
            target.setTextFormat(Qt.TextFormat.PlainText)


_style: PlainTextStyle | None = None


def guard_plain_text(app: QApplication) -> None:
    """Give the application the guarding style once (the window does, as it is built)."""
    global _style
    if not isinstance(app.style(), PlainTextStyle):
        _style = PlainTextStyle(app.style().name())
        app.setStyle(_style)
