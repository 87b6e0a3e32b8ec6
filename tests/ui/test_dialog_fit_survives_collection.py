"""A dialog that Qt itself makes (a static QInputDialog or QFileDialog call) keeps fitting the screen
after a collection of cycles: the window's screen fit holds the fit it gave the dialog."""

from __future__ import annotations

import gc

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QInputDialog

from tests.ui.conftest import ANSWER_TIMEOUT_MS


def test_a_dialog_qt_made_is_still_fitted_after_a_collection(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    steps: list[str] = []

    def collect_then_move_the_dialog() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QInputDialog) or not dialog.isVisible():
            QTimer.singleShot(20, collect_then_move_the_dialog)
            return
        del dialog  # the test holds no reference, as the code that asked for the dialog holds none
        gc.collect()
        steps.append("collected")
        # A person drags a corner and moves the dialog: the dialog's screen fit sees both.
        dialog = QApplication.activeModalWidget()
        dialog.resize(dialog.width() + 40, dialog.height() + 30)
        dialog.move(dialog.x() + 10, dialog.y() + 10)
        QApplication.processEvents()
        steps.append("moved")
        dialog.reject()

    QTimer.singleShot(20, collect_then_move_the_dialog)
    text, accepted = QInputDialog.getText(window, "A name", "Name of the map:")
    assert not accepted and steps == ["collected", "moved"]
    qtbot.wait(50)  # events queued by the moves (the fit's own timers) run here, still inside the test
    assert window.isVisible() and ANSWER_TIMEOUT_MS > 0
