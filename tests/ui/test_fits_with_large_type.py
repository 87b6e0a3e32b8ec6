"""Larger desktop type (125 % and 150 %): the window stays inside the screen, presentation and Guess first too.

Two ways a desktop makes type larger. Its scaling (Qt's QT_FONT_DPI 120 or 144 on X11) scales the
whole window by 1.25 or 1.5: a 1024x640 laptop then has 683x427 of Qt's pixels, and the window is
laid out for that smaller screen. A larger application font (11.25 or 13.5 points for 9) keeps the
screen's pixels and widens only the text. Either way the window's least size must fit the screen,
else Qt grows it past the edge and the window manager cuts off its side; and every toolbar control
stays on screen or one click away behind its bar's "»" (or in the folded "Exercises" button).

The offscreen platform's one screen is 800x800, so a screen is stood in for by a window of its size
at (0, 0), as in test_fit_and_presentation.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QToolBar, QWidget

from embedexplorer.ui.exercises.teaching import SCALED_PROPERTY
from embedexplorer.ui.style import fonts
from embedexplorer.ui.window.overflow import extension_button
from tests.ui.conftest import WINDOW_TEST_POINT_SIZE, open_model, settle, type_text
from tests.ui.test_every_size import SIZES
from tests.ui.test_fit_and_presentation import at_size

SCALES = (1.25, 1.5)


@pytest.fixture
def window_with_type(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    """Start a window as the app starts with the application font ``points`` large; returned as a maker."""
    from embedexplorer.app import create_window

    app = QApplication.instance()
    font, scaled = QFont(QApplication.font()), app.property(SCALED_PROPERTY)
    made = []

    def make(points: float):  # type: ignore[no-untyped-def]
        family = fonts.register()
        assert family, "fonts-dejavu-core is installed by .ci/setup"
        QApplication.setFont(QFont(family, points))
        window = create_window(str(tmp_path / "settings.ini"))
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()
    QApplication.setFont(font)
    app.setProperty(SCALED_PROPERTY, scaled)


def rect_in(widget: QWidget, window: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def out_of_reach(window, screen: QRect) -> list[str]:  # type: ignore[no-untyped-def]
    """Toolbar controls neither on screen nor behind a "»" (or the folded exercises' button) that is."""
    found = []

    def on_screen(widget: QWidget | None) -> bool:
        return widget is not None and widget.isVisible() and screen.contains(rect_in(widget, window))

    for bar in window.findChildren(QToolBar):
        if bar.isHidden():
            fold = window.model_bar.bar_fit.fold_button
            model_bar = fold.parentWidget() if fold is not None else None
            more = extension_button(model_bar) if isinstance(model_bar, QToolBar) else None
            if not (on_screen(fold) or on_screen(more)):
                found.append(f"the folded {bar.windowTitle()} bar's button")
            continue
        behind_more = on_screen(extension_button(bar))
        for action in bar.actions():
            widget = bar.widgetForAction(action)
            if not action.isVisible() or widget is None:
                continue
            if not on_screen(widget) and not behind_more:
                found.append(f"{bar.windowTitle()}: {action.text() or type(widget).__name__}")
    return found


def check_every_view(qtbot, window, scale: float, whole_window_scaled: bool) -> None:  # type: ignore[no-untyped-def]
    """At each claimed size, presentation off and on, Guess first off and on: the window inside the screen."""
    try:
        for presentation in (False, True):
            window.panes.teaching.presentation_action.setChecked(presentation)
            settle()
            for guess in (False, True):
                window.panes.exercises.guess_action.setChecked(guess)  # Exercises > Guess first
                settle()
                for width, height in SIZES:
                    if whole_window_scaled:  # the screen in Qt's pixels
                        width, height = round(width / scale), round(height / scale)
                    at_size(qtbot, window, width, height)
                    view = (width, height, f"presentation {presentation}", f"guess {guess}")
                    least = window.minimumSizeHint()
                    assert least.width() <= width and least.height() <= height, (least, view)
                    assert window.width() <= width and window.height() <= height, (window.size(), view)
                    assert out_of_reach(window, QRect(0, 0, width, height)) == [], view
    finally:
        window.panes.exercises.guess_action.setChecked(False)
        window.panes.teaching.presentation_action.setChecked(False)


@pytest.mark.parametrize("scale", SCALES)
def test_desktop_scaling_keeps_the_window_inside_the_screen(qtbot, window_with_type, scale: float) -> None:
    window = window_with_type(WINDOW_TEST_POINT_SIZE)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    check_every_view(qtbot, window, scale, whole_window_scaled=True)


@pytest.mark.parametrize("scale", SCALES)
def test_a_larger_application_font_keeps_the_window_inside_the_screen(qtbot, window_with_type, scale) -> None:
    window = window_with_type(WINDOW_TEST_POINT_SIZE * scale)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    check_every_view(qtbot, window, scale, whole_window_scaled=False)
