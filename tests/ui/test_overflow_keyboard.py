"""The toolbar's overflow button "»" gives the keyboard the controls that did not fit: Space or Enter
shows them in a menu (arrows and Enter pick one, Escape goes back to "»"); a click still expands the bar.

Seen on a narrow window in presentation mode: Tab reached "»", and Space expanded the bar over the
panes with the keyboard's focus left on "»", so the folded Exercises button it showed was reached
only with the mouse.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QToolButton

from embedexplorer.ui.style import fonts
from tests.ui.conftest import open_model, settle
from tests.ui.dialogs import focus_on
from tests.ui.test_every_size import at_size

# A person who set their desktop's type larger (14 pt): presenting on a window 1024 pixels wide, the model
# bar's least width is more than the window's, and the folded Exercises button goes behind the bar's "»".
LARGE_TYPE_POINTS = 14


@pytest.fixture
def large_type_window(qtbot, tmp_path) -> Iterator:  # type: ignore[no-untyped-def, type-arg]
    """The window started under the larger type (the window takes its base type as it starts)."""
    from embedexplorer.app import create_window

    before = QFont(QApplication.font())
    QApplication.setFont(QFont(fonts.register(), LARGE_TYPE_POINTS))
    window = create_window(str(tmp_path / "settings.ini"))
    qtbot.addWidget(window)
    window.show()
    try:
        yield window
    finally:
        window.panes.teaching.set_presentation(False)  # the application's type back to the base before it goes
        window.close()
        QApplication.setFont(before)


def overflow_button(window) -> QToolButton:  # type: ignore[no-untyped-def]
    bar = window.model_bar.box.parentWidget()
    assert isinstance(bar, QToolBar)
    button = bar.findChild(QToolButton, "qt_toolbar_ext_button", Qt.FindChildOption.FindDirectChildrenOnly)
    assert button is not None
    return button


def tab_to(qtbot, window, target) -> None:  # type: ignore[no-untyped-def]
    """From the Model box, Tab as a person does until ``target`` has the keyboard."""
    focus_on(qtbot, window.model_bar.box.lineEdit())
    for _ in range(20):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        if QApplication.focusWidget() is target:
            return
    raise AssertionError(f"Tab never reached {target!r}")


def menu_up() -> QMenu | None:
    popup = QApplication.activePopupWidget()
    return popup if isinstance(popup, QMenu) else None


def presenting_narrow(qtbot, window) -> QToolButton:  # type: ignore[no-untyped-def]
    """Presentation on (as a person turns it on) on a window 1024 pixels wide: the Exercises button is behind "»"."""
    open_model(qtbot, window, "bundled")
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.state.presentation)
    at_size(qtbot, window, 1024, 640)
    fit = window.model_bar.bar_fit
    qtbot.waitUntil(lambda: fit.folded and fit.fold_button is not None and not fit.fold_button.isVisible())
    settle()
    button = overflow_button(window)
    assert button.isVisible(), "the bar overflows: the test's point"
    return button


def test_space_on_the_overflow_button_lists_the_hidden_controls_and_enter_picks_one(qtbot, large_type_window):  # type: ignore[no-untyped-def]
    window = large_type_window
    button = presenting_narrow(qtbot, window)
    tab_to(qtbot, window, button)
    qtbot.keyClick(button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: menu_up() is not None)
    menu = menu_up()
    assert menu is not None
    assert [action.text().replace("&", "") for action in menu.actions()] == ["Exercises"]
    assert not window.model_bar.bar_fit.fold_button.isVisible(), "the bar stays as it was: the menu holds the rest"
    # The Exercises button's menu, then its first exercise, with the keyboard alone.
    qtbot.keyClick(menu, Qt.Key.Key_Down)
    assert menu.activeAction() is not None and menu.activeAction().text() == "Exercises"
    qtbot.keyClick(menu, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: menu_up() is not None and menu_up() is not menu)
    exercises = menu_up()
    assert exercises is not None and exercises.activeAction() is not None
    assert exercises.activeAction().text().replace("&", "") == "Guess first"
    qtbot.keyClick(exercises, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.state.guess_mode)
    qtbot.waitUntil(lambda: window.panes.guess_bar.isVisible())  # the guess line is shown above the neighbours
    assert menu_up() is None
    # The keyboard goes on to the guess line, where the exercise asks for a word.
    qtbot.waitUntil(lambda: window.panes.guess_bar.isAncestorOf(QApplication.focusWidget()))


def test_enter_on_the_overflow_button_shows_the_menu_and_escape_goes_back(qtbot, large_type_window):  # type: ignore[no-untyped-def]
    window = large_type_window
    button = presenting_narrow(qtbot, window)
    tab_to(qtbot, window, button)
    qtbot.keyClick(button, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: menu_up() is not None)
    qtbot.keyClick(menu_up(), Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: menu_up() is None)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is button)
    assert not window.model_bar.bar_fit.fold_button.isVisible(), "Escape leaves the bar as it was"


def test_a_click_on_the_overflow_button_still_expands_the_bar(qtbot, large_type_window):  # type: ignore[no-untyped-def]
    window = large_type_window
    button = presenting_narrow(qtbot, window)
    fold_button = window.model_bar.bar_fit.fold_button
    qtbot.mouseMove(button)
    qtbot.wait(100)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(fold_button.isVisible)  # the bar grew to show what did not fit, as Qt's bars do
    assert menu_up() is None
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not fold_button.isVisible())
