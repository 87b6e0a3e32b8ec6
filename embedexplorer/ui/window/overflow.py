"""A toolbar's overflow button ("»") for the keyboard: Tab reaches it, Space or Enter lists what did not fit.

Qt's button expands the bar over the panes when clicked and leaves the keyboard on itself, so the
controls it uncovers were in a mouse's reach alone. From the keyboard it shows them in a menu
instead, walked as any menu is (arrows, Enter; Escape goes back to "»"). A click still expands the bar.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QAbstractButton, QLabel, QMenu, QToolBar, QToolButton, QWidget

from ..style.enter_clicks import HANDLES_ENTER
from .fitting import BAR_ALLOWANCE

EXTENSION_NAME = "qt_toolbar_ext_button"  # the name Qt gives the button
OPENING_KEYS = (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter)


def extension_button(bar: QToolBar) -> QToolButton | None:
    """The button Qt shows at a toolbar's end when its controls do not all fit ("»")."""
    return bar.findChild(QToolButton, EXTENSION_NAME, Qt.FindChildOption.FindDirectChildrenOnly)


def hidden_controls_menu(bar: QToolBar, parent: QWidget) -> QMenu:
    """A menu of ``bar``'s controls that did not fit (empty when all are shown, or the bar is expanded).

    A plain action is the same action (its shortcut, its check mark); a button with a menu (the folded
    Exercises) is a submenu; a widget of its own (the chapter's note) gives its words, greyed, and its buttons.
    """
    menu = QMenu(parent)
    for action in bar.actions():
        widget = bar.widgetForAction(action)
        if not action.isVisible() or widget is None or widget.isVisible():
            continue
        if action.isSeparator():
            menu.addSeparator()
        elif isinstance(widget, QToolButton) and widget.defaultAction() is action:
            menu.addAction(action)
        elif isinstance(widget, QToolButton) and widget.menu() is not None:
            menu.addMenu(widget.text()).addActions(widget.menu().actions())
        else:
            _add_parts(menu, widget)
    return menu


def _add_parts(menu: QMenu, widget: QWidget) -> None:
    """A widget's labels (as greyed items) and buttons (as items that click them), in its own order."""
    parts = [widget] if isinstance(widget, QAbstractButton) else widget.findChildren(QWidget)
    for part in parts:
        if part is not widget and not part.isVisibleTo(widget):
            continue
        if isinstance(part, QLabel) and part.text():
            note = menu.addAction(part.text().replace("&", "&&"))  # a label's text holds no mnemonic
            note.setEnabled(False)
        elif isinstance(part, QAbstractButton) and part.text():
            item = menu.addAction(part.text())
            item.setEnabled(part.isEnabled())
            item.triggered.connect(part.click)


class OverflowFocus(QObject):
    """Tab reaches a toolbar's overflow button where Qt draws it, at the bar's end; Space or Enter on it
    shows the controls that did not fit in a menu.

    Qt makes the button NoFocus. A bar laid out while the window changes may also leave it shown
    where it was needed for a moment, under the bar's own controls: Tab passes that one by.
    """

    def __init__(self, bar: QToolBar) -> None:
        super().__init__(bar)
        self.bar = bar
        self.button = extension_button(bar)
        if self.button is not None:
            self.button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            self.button.setProperty(HANDLES_ENTER, True)  # Enter shows the menu, as Space does: no click
            self.button.installEventFilter(self)

    def drawn(self) -> bool:
        return self.button is not None and self.bar.width() - self.button.geometry().right() <= BAR_ALLOWANCE

    def show_hidden(self) -> bool:
        """The controls that did not fit in a menu under the button (the arrow keys choose one, as in the
        folded Exercises button's menu); False where there are none to show (the bar is expanded)."""
        if self.button is None:
            return False
        menu = hidden_controls_menu(self.bar, self.button)
        if not any(action.isEnabled() and not action.isSeparator() for action in menu.actions()):
            menu.deleteLater()
            return False
        # Made afresh each time (the bar may have changed); the button holds it while it is up.
        menu.aboutToHide.connect(menu.deleteLater)
        # Under the button, its right edge at the button's (the button sits at the window's right end).
        corner = self.button.mapToGlobal(QPoint(self.button.width(), self.button.height()))
        menu.popup(corner - QPoint(menu.sizeHint().width(), 0))
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind == QEvent.Type.FocusIn and isinstance(event, QFocusEvent) and not self.drawn():
            reason = event.reason()
            if reason in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason):
                # On to the next control the same way, once this focus change is done.
                forward = reason == Qt.FocusReason.TabFocusReason
                QTimer.singleShot(0, self.bar, lambda: self.bar.window().focusNextPrevChild(forward))
        elif kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and _opens(event):
            return self.show_hidden()
        return False


def _opens(event: QKeyEvent) -> bool:
    """Space or Enter with no modifier (the keypad's Enter too), not held down."""
    plain = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier == Qt.KeyboardModifier.NoModifier
    return plain and event.key() in OPENING_KEYS and not event.isAutoRepeat()

