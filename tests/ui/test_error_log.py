"""Unplanned failures: one line in the window, the whole traceback in the log file."""

from __future__ import annotations

import logging
import sys
import threading

import pytest

from embedexplorer.core.common.errors import OfflineError
from embedexplorer.worker import Failure, failure_for


@pytest.fixture
def hooks_restored():  # type: ignore[no-untyped-def]
    saved = sys.excepthook, threading.excepthook
    yield
    sys.excepthook, threading.excepthook = saved
    for handler in list(logging.getLogger("embedexplorer").handlers):
        logging.getLogger("embedexplorer").removeHandler(handler)
        handler.close()


def test_a_thread_that_fails_reaches_the_message_bar_and_the_log(
    qtbot, window, tmp_path, monkeypatch, hooks_restored
) -> None:
    from embedexplorer.app import route_unexpected_errors
    from embedexplorer.errorlog import log_path

    monkeypatch.setenv("EMBEDEXPLORER_DATA_DIR", str(tmp_path / "data"))
    route_unexpected_errors(window)

    def fail() -> None:
        raise ZeroDivisionError("a planted fault")

    thread = threading.Thread(target=fail, name="planted")
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: "a planted fault" in window.message_bar.text())
    assert "ZeroDivisionError" in window.message_bar.text() and "Show the log" in window.message_bar.text()
    logged = log_path().read_text(encoding="utf-8")
    assert "Traceback" in logged and "thread planted" in logged and "a planted fault" in logged


def test_the_class_of_an_error_decides_what_the_user_reads() -> None:
    offline = failure_for(OfflineError("not cached"))
    assert offline.message == "not cached" and offline.is_a(OfflineError)
    surprise = failure_for(KeyError("x"))
    assert "Something went wrong (KeyError" in surprise.message and not surprise.is_a(OfflineError)
    assert isinstance(surprise, Failure)


def test_the_menu_item_an_error_points_to_is_in_the_help_menu(qtbot, window) -> None:
    """'Help > Show the log has the details': the person finds that very item under Help."""
    from embedexplorer.errorlog import describe

    help_items = {action.text().replace("&", "") for action in window.menu("&Help").actions()}
    for message in (describe(KeyError("x")), failure_for(KeyError("x")).message):
        pointed = message.split("Help > ", 1)[1].split(" has the details")[0]
        assert pointed in help_items, f"{message!r} names {pointed!r}; Help has {sorted(help_items)}"


def test_show_the_log_names_its_file_in_the_status_bar(qtbot, window, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Help > Show the log on a desktop with no text viewer: xdg-open started, found nothing to show the file
    with, and the window said nothing (Qt reports the start as success, so the box naming the file never came).
    The status bar now names the file whatever the desktop does."""
    from PySide6.QtCore import QObject, QUrl, Slot
    from PySide6.QtGui import QDesktopServices

    from embedexplorer.errorlog import log_path

    monkeypatch.setenv("EMBEDEXPLORER_DATA_DIR", str(tmp_path / "data"))

    class Viewer(QObject):  # the desktop's viewer, as Qt lets an application stand in for it
        def __init__(self) -> None:
            super().__init__()
            self.opened: list[str] = []

        @Slot(QUrl)
        def show(self, url: QUrl) -> None:
            self.opened.append(url.toLocalFile())

    viewer = Viewer()
    QDesktopServices.setUrlHandler("file", viewer, "show")
    try:
        help_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Help")
        next(a for a in help_menu.actions() if a.text().replace("&", "") == "Show the log").trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert viewer.opened == [str(log_path())]
    assert str(log_path()) in window.statusBar().currentMessage()
