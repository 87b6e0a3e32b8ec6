"""A real window, a real worker (two lanes), real tables; settings kept under tmp_path."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QDialog

from embedexplorer.jobs.table_jobs import LOAD, MAP, NEIGHBOURS, TOKENS, NeighboursAnswer

LOAD_TIMEOUT_MS = 60_000
ANSWER_TIMEOUT_MS = 20_000


# The window tests measure widgets: they draw with the font the app bundles (DejaVu Sans, from
# .ci/setup's fonts-dejavu-core in a checkout), never with whatever default this machine's fonts give.
WINDOW_TEST_POINT_SIZE = 9


@pytest.fixture(scope="session", autouse=True)
def bundled_font(qapp):  # type: ignore[no-untyped-def]
    from embedexplorer.ui.style import fonts

    family = fonts.register()
    assert family, "the bundled font is missing: .ci/setup installs fonts-dejavu-core"
    qapp.setFont(QFont(family, WINDOW_TEST_POINT_SIZE))
    return family


# A modal dialog nobody answers holds its test, and the run, for ever: after this long it is closed
# and the test fails, naming it. (The longest answer a test waits for is LOAD_TIMEOUT_MS.)
DIALOG_PATIENCE_S = 2 * LOAD_TIMEOUT_MS / 1000


@pytest.fixture(autouse=True)
def no_dialog_waits_for_ever(qapp):  # type: ignore[no-untyped-def]
    up: list[tuple[object, float]] = []  # the modal dialog on screen, and since when
    stuck: list[str] = []

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or not up or up[0][0] is not dialog:
            up[:] = [] if dialog is None else [(dialog, time.monotonic())]
        elif time.monotonic() - up[0][1] > DIALOG_PATIENCE_S:
            stuck.append(f"{type(dialog).__name__} {dialog.windowTitle()!r}")
            dialog.reject() if isinstance(dialog, QDialog) else dialog.close()
            up.clear()

    watch = QTimer()
    watch.timeout.connect(look)
    watch.start(1000)
    yield
    watch.stop()
    assert not stuck, f"modal dialogs were left open {DIALOG_PATIENCE_S:.0f} s without an answer: {stuck}"


@pytest.fixture
def window(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    from embedexplorer.app import create_window

    win = create_window(str(tmp_path / "settings.ini"))
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()


def settle() -> None:
    """Let Qt run what is already posted (layouts, repaints), without waiting for anything new."""
    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def open_model(qtbot, window, spec: str) -> None:  # type: ignore[no-untyped-def]
    """Open a model and wait until its map is drawn (the map is requested right after loading)."""
    channel = window.client.channel
    with qtbot.waitSignals([channel(LOAD).ready, channel(MAP).ready], timeout=LOAD_TIMEOUT_MS):
        window.open_model(spec)


def type_text(qtbot, window, text: str) -> NeighboursAnswer:  # type: ignore[no-untyped-def]
    """Type into the text field; return the neighbours of the token the pane then selects."""
    answers: list[NeighboursAnswer] = []
    neighbours = window.client.channel(NEIGHBOURS).ready
    neighbours.connect(answers.append)
    try:
        window.panes.token_pane.input.clear()
        with qtbot.waitSignal(
            window.client.channel(TOKENS).ready, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == text
        ):
            qtbot.keyClicks(window.panes.token_pane.input, text)
        selected = window.panes.token_pane.chip_tokens[window.panes.token_pane.selected_index()].id
        # The answer may arrive in the same event pass as the tokens: record, then look.
        qtbot.waitUntil(lambda: any(query_id(a) == selected for a in answers), timeout=ANSWER_TIMEOUT_MS)
    finally:
        neighbours.disconnect(answers.append)
    return next(a for a in reversed(answers) if query_id(a) == selected)


def query_id(answer: NeighboursAnswer) -> int | None:
    query = answer.result.query
    return None if query is None else query.id
