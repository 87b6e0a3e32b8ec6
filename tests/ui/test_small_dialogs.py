"""Issue 35, item 12: the export width dialog's title is whole, the family ranking has a Close button."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit

from embedexplorer.jobs.exercise_jobs import FAMILY_DISTANCES
from embedexplorer.ui.window.fitting import TITLE_BAR_ROOM
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model
from tests.ui.dialogs import answer_next_dialog, focus_on
from tests.ui.test_click_and_read import hover_then_click


def test_the_export_width_dialog_is_wide_enough_for_its_whole_title(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    picture = tmp_path / "map.png"
    seen: dict[str, int] = {}

    def save_as(dialog: QFileDialog) -> None:
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        focus_on(qtbot, name)
        name.selectAll()
        qtbot.keyClicks(name, str(picture))
        answer_next_dialog(QInputDialog, read_width)
        qtbot.keyClick(name, Qt.Key.Key_Return)

    def read_width(dialog: QInputDialog) -> None:
        font = QFont(dialog.font())
        font.setBold(True)
        seen["title"] = QFontMetrics(font).horizontalAdvance(dialog.windowTitle())
        seen["width"] = dialog.width()
        dialog.accept()

    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    answer_next_dialog(QFileDialog, save_as)
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(picture.exists, timeout=ANSWER_TIMEOUT_MS)
    # The title bar holds the whole title beside the window manager's icon and buttons.
    assert seen["width"] >= seen["title"] + TITLE_BAR_ROOM, seen


def test_the_family_ranking_closes_with_its_own_button(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    desk = window.panes.exercises
    with qtbot.waitSignal(answers(window, FAMILY_DISTANCES).ready, timeout=ANSWER_TIMEOUT_MS):
        desk.distances_action.trigger()
    dialog = desk.family_distances
    assert dialog.isVisible() and dialog.families()
    button = dialog.close_button
    assert button.isVisible() and button.text().replace("&", "") == "Close"
    hover_then_click(qtbot, button, button.rect().center())
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=ANSWER_TIMEOUT_MS)
