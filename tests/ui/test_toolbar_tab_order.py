"""Tab from the Model box goes through the toolbar row left to right, its folded Exercises button and
its overflow button included, before the Text box: at every size the window claims, presentation or not.

Seen in a real window at 800x600: on a narrow window the exercises' bar folds into an "Exercises"
button on the model bar, and Tab reached that button only after the text box, the panes and the
map, the last stop of the window.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QToolButton, QWidget

from embedexplorer.core.sources.resolve import bundled_model_dir
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import open_model, settle
from tests.ui.dialogs import focus_on
from tests.ui.test_every_size import SIZES, at_size

# The sizes the project claims (test_every_size), the narrow laptop of the report, and 1280x800.
TAB_SIZES = [(800, 600), *SIZES, (1280, 800)]
EXTENSION = "qt_toolbar_ext_button"


def shown_in_bar(widget: QWidget, bar: QToolBar) -> bool:
    """On screen inside its bar: visible and not cut off past the bar's edge."""
    if not widget.isVisible():
        return False
    place = widget.mapTo(bar, QPoint(0, 0))
    return bar.rect().contains(place) and place.x() + widget.width() <= bar.width()


def toolbar_stops(window) -> list[QWidget]:  # type: ignore[no-untyped-def]
    """The toolbar row's controls that Tab should reach, as a person sees them, left to right."""
    stops = []
    for bar in window.findChildren(QToolBar):
        if not bar.isVisible():
            continue
        for action in bar.actions():
            widget = bar.widgetForAction(action)
            if widget is None or not shown_in_bar(widget, bar):
                continue
            if widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
                stops.append(widget)
            else:  # a notice: its button
                stops += [w for w in widget.findChildren(QWidget) if w.focusPolicy() & Qt.FocusPolicy.TabFocus]
        extension = bar.findChild(QToolButton, EXTENSION)
        # Where Qt draws it: at the bar's right end (one left behind under the controls is not drawn).
        if extension is not None and shown_in_bar(extension, bar) and bar.width() - extension.geometry().right() < 16:
            stops.append(extension)
    return sorted(stops, key=lambda w: w.mapTo(window, QPoint(0, 0)).x())


def tabs_to_text(qtbot, window) -> list[QWidget]:  # type: ignore[no-untyped-def]
    """Press Tab from the Model box, as a person does, until the Text box: the controls on the way."""
    box = window.model_bar.box
    focus_on(qtbot, box.lineEdit())
    text = window.panes.token_pane.input
    reached: list[QWidget] = []
    for _ in range(60):  # far more than the window has before the text box
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        widget = QApplication.focusWidget()
        if widget is text:
            return reached
        reached.append(widget)
    raise AssertionError(f"Tab never reached the Text box: {[label(w) for w in reached]}")


def label(widget: QWidget | None) -> str:
    text = getattr(widget, "text", None)
    return f"{type(widget).__name__} {widget.objectName() if widget else ''} {text() if callable(text) else ''}".strip()


@pytest.mark.usefixtures("bundled_type")
@pytest.mark.parametrize("by_path", [False, True])
def test_tab_walks_the_toolbar_row_left_to_right_before_the_text_box(qtbot, window, by_path) -> None:  # type: ignore[no-untyped-def]
    # Not GPT-2: the chapter's notice and its button take room on the bar. Opened by its folder, a
    # long name shows its start, and the bar's other controls keep their room (none behind a "»").
    open_model(qtbot, window, str(bundled_model_dir()) if by_path else "bundled")
    window.activateWindow()
    seen = {}
    try:
        for presentation in (False, True):
            window.panes.teaching.set_presentation(presentation)
            settle()
            for width, height in TAB_SIZES:
                at_size(qtbot, window, width, height)
                settle()
                wanted = [label(w) for w in toolbar_stops(window)[1:]]  # after the Model box
                reached = [label(w) for w in tabs_to_text(qtbot, window)]
                seen[(width, height, presentation)] = reached
                assert reached == wanted, (width, height, presentation, window.model_bar.bar_fit.folded)
    finally:
        window.panes.teaching.set_presentation(False)
    # The narrow window folds the exercises into one button: Tab reaches it with the bar's other controls.
    folded = seen[(1024, 640, True)]
    assert any("Exercises" in stop for stop in folded), folded


@pytest.mark.usefixtures("bundled_type")
def test_the_folded_exercises_button_opens_its_menu_from_the_keyboard(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    window.activateWindow()
    at_size(qtbot, window, 800, 600)
    fit = window.model_bar.bar_fit
    assert fit.folded and fit.fold_button is not None
    button = fit.fold_button
    reached = tabs_to_text(qtbot, window)
    assert button in reached
    focus_on(qtbot, button)
    chosen: list[str] = []

    def in_menu() -> None:
        menu = QApplication.activePopupWidget()
        if isinstance(menu, QMenu):
            qtbot.keyClick(menu, Qt.Key.Key_Down)
            chosen.append((menu.activeAction() or menu).text() if menu.activeAction() else "")
            menu.close()
        else:
            chosen.append(f"no menu: {menu!r}")

    QTimer.singleShot(200, in_menu)
    qtbot.keyClick(button, Qt.Key.Key_Space)  # the menu runs its own loop until closed
    qtbot.waitUntil(lambda: bool(chosen))
    assert chosen[0].replace("&", "") in ("Guess first", "Which family is furthest?"), chosen
