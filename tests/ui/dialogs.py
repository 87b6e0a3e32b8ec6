"""Answering modal dialogs as a person does, without ever leaving one open.

A modal dialog runs its own event loop: one nobody closes holds its test, and the whole run, for
ever (a CI run once stopped at its time limit that way). So every answer here closes the dialog
when it fails, and ``tests/ui/conftest.py`` closes any dialog left waiting too long.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from tests.ui.conftest import ANSWER_TIMEOUT_MS

D = TypeVar("D", bound=QWidget)
POLL_MS = 50


def answer_next_dialog(kind: type[D], act: Callable[[D], None], timeout_ms: int = ANSWER_TIMEOUT_MS) -> None:
    """Once a modal dialog of ``kind`` is up and has the keyboard, hand it to ``act``.

    Call it before the step that opens the dialog. If ``act`` fails, or no such dialog comes, the
    dialog on screen is rejected and the failure raised (pytest-qt fails the test with it).
    """
    deadline = time.monotonic() + timeout_ms / 1000

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, kind) and dialog.isVisible() and dialog.isActiveWindow():
            try:
                act(dialog)
            except BaseException:
                close(dialog)
                raise
            return
        if time.monotonic() > deadline:
            close(dialog)
            raise AssertionError(f"no {kind.__name__} came up to answer within {timeout_ms} ms (up: {dialog!r})")
        QTimer.singleShot(POLL_MS, look)

    QTimer.singleShot(POLL_MS, look)


def focus_on(qtbot, field: QWidget) -> None:  # type: ignore[no-untyped-def]
    """Put the keyboard in ``field``, as a person clicks into it before typing.

    Widgets react to where the focus is (a file dialog's name field keeps its list's selection in
    step only while it has the focus), so typing into a field without it is not what people do.
    """
    field.setFocus()
    qtbot.waitUntil(field.hasFocus, timeout=ANSWER_TIMEOUT_MS)


def close(dialog: QWidget | None) -> None:
    if isinstance(dialog, QDialog):
        dialog.reject()
    elif dialog is not None:
        dialog.close()
