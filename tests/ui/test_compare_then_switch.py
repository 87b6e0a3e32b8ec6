"""Issue 35, item 2: compare, close the Compare window, open another model from the Model box: no false alarm."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from embedexplorer.core.sources.resolve import bundled_model_dir
from embedexplorer.jobs.table_jobs import LOAD, MAP

from .conftest import LOAD_TIMEOUT_MS, answers, open_model, settle
from .dialogs import focus_on
from .test_compare_pane import compare_with, open_compare, tables  # noqa: F401 - a fixture


def test_comparing_then_opening_another_folder_raises_no_error(qtbot, window, tables) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    open_model(qtbot, window, str(tables["a"]))
    open_compare(window)
    compare_with(qtbot, window, str(tables["b"]))
    dialog = window.panes.compare
    settle()
    QTest.keyClick(dialog, Qt.Key.Key_Escape)  # as a person closes it
    qtbot.waitUntil(lambda: not dialog.isVisible())
    box = window.model_bar.box
    window.activateWindow()  # the person comes back to the main window and clicks into the box
    line = box.lineEdit()
    QTest.mouseMove(line, line.rect().center())
    qtbot.wait(200)
    qtbot.mouseClick(line, Qt.MouseButton.LeftButton, pos=line.rect().center())
    focus_on(qtbot, line)
    QTest.keyClick(line, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(box.lineEdit(), str(bundled_model_dir()))
    with qtbot.waitSignals([answers(window, LOAD).ready, answers(window, MAP).ready], timeout=LOAD_TIMEOUT_MS):
        qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    settle()
    qtbot.wait(300)
    assert window.state.model_spec == str(bundled_model_dir()) and window.state.loaded
    # pytest-qt fails the test on any exception raised in a slot; the bar says nothing went wrong.
    assert "error" not in window.message_bar.text().lower() or not window.message_bar.isVisible()
    # The comparison was of the model that is no longer open: the pane says nothing stale.
    assert dialog.pane.comparison is None and dialog.pane.most.count() == 0
