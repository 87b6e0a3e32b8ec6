"""A model opened from a deep folder keeps the whole model bar inside the window, presentation or not.

Seen in a real window (Xvfb and openbox) at 1024x640: the all-MiniLM fixture opened from a folder
200 characters deep, presentation on, and the Model box took so much of the bar that the chapter's
note and the Exercises button went behind the bar's "»".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QHelpEvent, QTextDocument
from PySide6.QtGui import Qt as GuiQt  # mightBeRichText lives in QtGui's part of the Qt namespace
from PySide6.QtWidgets import QApplication, QToolBar, QToolTip, QWidget

from embedexplorer.core.sources.resolve import bundled_model_dir
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import open_model, settle
from tests.ui.test_every_size import SIZES, at_size
from tests.ui.window_probe import room_and_need

# Folders a class's materials may sit in; one name holds markup, which the tooltip shows as text.
DEEP_FOLDERS = (
    "a_rather_long_folder_name_for_the_course_materials_of_the_autumn_term",
    "embedding_tables_<i>downloaded<i>_for_the_classroom_demonstration",
    "sentence_transformers_all_minilm_l6_v2_offline_copy",
)
LAPTOP_WIDTH = 1024  # the narrowest screen the window claims (test_every_size)


@pytest.fixture
def deep_model(tmp_path: Path) -> Path:
    """The bundled all-MiniLM folder (not GPT-2: the chapter's note takes room on the bar) under a long path."""
    folder = tmp_path.joinpath(*DEEP_FOLDERS)
    folder.mkdir(parents=True)
    link = folder / "all-MiniLM-L6-v2"
    link.symlink_to(bundled_model_dir(), target_is_directory=True)
    return link


def name(widget: QWidget) -> str:
    text = getattr(widget, "text", None)
    return f"{type(widget).__name__} {text() if callable(text) else ''}".strip()


def out_of_sight(window) -> list[str]:  # type: ignore[no-untyped-def]
    """Each control of the model bar that is pushed behind its "»" or lies past the window's edge."""
    bar = window.model_bar.box.parentWidget()
    assert isinstance(bar, QToolBar)
    frame = QRect(QPoint(0, 0), window.size())
    found = []
    for action in bar.actions():
        widget = bar.widgetForAction(action)
        if not action.isVisible() or widget is None:
            continue
        where = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
        if not widget.isVisible():
            found.append(f"{name(widget)} is behind the bar's overflow button")
        elif not frame.contains(where):
            found.append(f"{name(widget)} lies outside the window: {where}")
    for child in bar.findChildren(QWidget):
        where = QRect(child.mapTo(window, QPoint(0, 0)), child.size())
        if child.isVisible() and not frame.contains(where):
            found.append(f"{name(child)} lies outside the window: {where}")
    return found


def tip_read(qtbot, widget: QWidget) -> str:  # type: ignore[no-untyped-def]
    """Rest the pointer on ``widget`` (Qt's tooltip event): the tip as a person reads it."""
    at = QPoint(5, 5)
    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, at, widget.mapToGlobal(at)))
    qtbot.waitUntil(QToolTip.isVisible)
    shown = QToolTip.text()
    document = QTextDocument()
    document.setHtml(shown) if GuiQt.mightBeRichText(shown) else document.setPlainText(shown)
    QToolTip.hideText()
    qtbot.waitUntil(lambda: not QToolTip.isVisible())  # the next tip shows afresh
    return document.toPlainText()


@pytest.mark.usefixtures("bundled_type")
def test_a_long_model_path_leaves_the_whole_bar_in_the_window(qtbot, window, deep_model) -> None:  # type: ignore[no-untyped-def]
    path = str(deep_model)
    open_model(qtbot, window, path)
    box = window.model_bar.box
    assert box.currentText() == path
    # On to the Text box, as a person does once the model is open: the Model box shows the path's start.
    qtbot.mouseClick(window.panes.token_pane.input, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.lineEdit().hasFocus())
    try:
        for presentation in (False, True):
            window.panes.teaching.set_presentation(presentation)
            settle()
            for width, height in [*SIZES, (1022, 615)]:  # the last: 1024x640 under openbox's frame
                at_size(qtbot, window, width, height)
                qtbot.wait(50)
                settle()
                view = (width, height, "presentation" if presentation else "normal")
                assert out_of_sight(window) == [], view
                assert window.minimumSizeHint().width() <= LAPTOP_WIDTH, view
                room, need = room_and_need(box)
                if need > room:  # the path's start shows (which model), the whole of it one hover away
                    assert box.lineEdit().cursorPosition() == 0, view
                    assert path in tip_read(qtbot, box), view
            assert need > room, "the path is longer than the box at 1024x640: the test's point"
    finally:
        window.panes.teaching.set_presentation(False)
