"""A real window, a real worker (two lanes), real tables; settings kept under tmp_path."""

from __future__ import annotations

import gc
import time
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QDialog
from pytestqt.qtbot import QtBot

from embedexplorer.jobs.base import Kind
from embedexplorer.jobs.table_jobs import LOAD, MAP, NEIGHBOURS, TOKENS, NeighboursAnswer
from embedexplorer.ui.exercises.teaching import SCALED_PROPERTY
from embedexplorer.worker import Channel

# Bounds on waits for events: a wait ends as soon as its event comes, so a bound costs nothing
# when all is well and only says when to give up. A busy machine (load 15 on two cores) can take
# many times the usual: the bounds are minutes, never seconds.
LOAD_TIMEOUT_MS = 120_000
ANSWER_TIMEOUT_MS = 60_000
# A wait that names no bound (pytest-qt's default is 5 s) gets this.
PATIENCE_MS = 60_000


class PatientQtBot(QtBot):
    """pytest-qt's robot whose waits, when a test names no bound, wait ``PATIENCE_MS``."""

    def waitUntil(self, callback, *, timeout: int = PATIENCE_MS) -> None:  # type: ignore[no-untyped-def]
        super().waitUntil(callback, timeout=timeout)

    def waitSignal(self, signal, *, timeout: int = PATIENCE_MS, **options):  # type: ignore[no-untyped-def]
        return super().waitSignal(signal, timeout=timeout, **options)

    def waitSignals(self, signals, *, timeout: int = PATIENCE_MS, **options):  # type: ignore[no-untyped-def]
        return super().waitSignals(signals, timeout=timeout, **options)

    def waitCallback(self, *, timeout: int = PATIENCE_MS, **options):  # type: ignore[no-untyped-def]
        return super().waitCallback(timeout=timeout, **options)

    def waitExposed(self, widget, *, timeout: int = PATIENCE_MS):  # type: ignore[no-untyped-def]
        return super().waitExposed(widget, timeout=timeout)

    def waitActive(self, widget, *, timeout: int = PATIENCE_MS):  # type: ignore[no-untyped-def]
        return super().waitActive(widget, timeout=timeout)


@pytest.fixture
def qtbot(qapp, request):  # type: ignore[no-untyped-def]
    return PatientQtBot(request)


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


@pytest.fixture(scope="session", autouse=True)
def libraries_kept_out_of_collections() -> None:
    """What is alive at the first window test (modules, classes, the session's tables) is set aside
    from the collector, as the app sets aside what its start made: each test's full collection
    below then walks only what tests made since (a full walk of all of it took 0.2-0.4 s a test)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def earlier_windows_collected_here(qapp, libraries_kept_out_of_collections):  # type: ignore[no-untyped-def]
    """The last tests' windows, garbage in cycles (handlers that name their pane), are collected here.

    Here is the GUI thread, before this test's worker starts. Collected in a worker's thread
    instead, PySide hands their widgets to the GUI thread to delete while the worker destroys
    their other objects, each then waits for a lock the other holds: seen once, a closed
    window's menu against one of its objects, and the run hung with nothing running.
    During the test cycles are collected as the app collects them: by a timer of the GUI
    thread (``collect_in_gui_thread``), never by a worker's allocation.
    """
    from embedexplorer.app import collect_in_gui_thread

    gc.collect()
    timer = collect_in_gui_thread(qapp)
    yield
    timer.stop()
    timer.deleteLater()
    gc.enable()


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

    # Presentation mode scales the application's font (and marks the application): a test that leaves it on
    # must not hand the next test's window larger type.
    font, scaled = QApplication.font(), QApplication.instance().property(SCALED_PROPERTY)
    win = create_window(str(tmp_path / "settings.ini"))
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    QApplication.setFont(font)
    QApplication.instance().setProperty(SCALED_PROPERTY, scaled)


def settle() -> None:
    """Let Qt run what is already posted (layouts, repaints), without waiting for anything new."""
    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


# Which part of the window asks each kind of question: its answers reach that asker alone.
ASKERS = {
    "load": "model_bar", "tokens": "panes.token_pane", "row": "panes.row_view",
    "neighbours": "panes.neighbours_pane", "cosine": "panes.neighbours_pane",
    "map": "panes.map", "word_map": "panes.map", "layers": "panes.layers_pane", "layers_warm": "panes.layers_pane",
    "direction": "panes.directions_pane", "compare": "panes.compare", "local_models": "panes.local_models",
    "guess": "panes.guess_bar", "complete": "panes.guess_bar", "suggest": "panes.suggestions",
    "analogy": "panes.exercises", "family_distances": "panes.exercises", "two_texts": "panes.exercises",
    "pair_tokens": "panes.exercises", "health": "panes.health_pane", "health_verify": "panes.health_pane",
    "health_check_possible": "panes.health_pane",
}  # fmt: skip


def asker(window, kind: Kind[Any, Any]) -> object:  # type: ignore[no-untyped-def]
    """The pane (or the model bar) of ``window`` that asks ``kind``."""
    found: object = window
    for name in ASKERS[kind.name].split("."):
        found = getattr(found, name)
    return found


def answers(window, kind: Kind[Any, Any]) -> Channel:  # type: ignore[no-untyped-def]
    """The channel on which the pane that asks ``kind`` hears its answers, failures and progress."""
    return window.client.channel(kind, asker(window, kind))


def guess_first_on(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Guess first turned on with its toolbar button (Ctrl+G), once the model's twenty words to try are shown.

    They are asked for when a model opens, not when the mode turns on: so wait for them to be shown,
    not for an answer that may have come already."""
    window.panes.exercises.guess_action.trigger()
    qtbot.waitUntil(lambda: len(window.panes.suggestions.tokens()) == 20, timeout=ANSWER_TIMEOUT_MS)


def open_model(qtbot, window, spec: str) -> None:  # type: ignore[no-untyped-def]
    """Open a model and wait until its map is drawn (the map is requested right after loading)."""
    with qtbot.waitSignals([answers(window, LOAD).ready, answers(window, MAP).ready], timeout=LOAD_TIMEOUT_MS):
        window.open_model(spec)


def lesson_opened_elsewhere(qtbot, tmp_path, lesson) -> Any:  # type: ignore[no-untyped-def]
    """A second window of the app (settings of its own) that has opened ``lesson``, as a class opens the
    teacher's file: returned once its model has loaded and its first neighbours have come."""
    from embedexplorer.app import create_window

    other = create_window(str(tmp_path / "other.ini"))
    qtbot.addWidget(other)
    other.show()
    ready = [answers(other, LOAD).ready, answers(other, NEIGHBOURS).ready]
    with qtbot.waitSignals(ready, timeout=ANSWER_TIMEOUT_MS * 3):
        assert other.panes.teaching.open_from(str(lesson))
    return other


def type_text(qtbot, window, text: str) -> NeighboursAnswer:  # type: ignore[no-untyped-def]
    """Type into the text field; return the neighbours of the token the pane then selects.

    It waits for the Neighbours pane's answer and, when a map is drawn, for the map's own
    (its star and rings), each asked by its pane.
    """
    heard: dict[str, list[NeighboursAnswer]] = {"list": [], "map": []}
    listeners = {
        "list": answers(window, NEIGHBOURS).ready,
        "map": window.client.channel(NEIGHBOURS, window.panes.map).ready,
    }
    for name, signal in listeners.items():
        signal.connect(heard[name].append)
    try:
        window.panes.token_pane.input.clear()
        tokens = answers(window, TOKENS).ready
        with qtbot.waitSignal(tokens, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == text):
            qtbot.keyClicks(window.panes.token_pane.input, text)
        selected = window.panes.token_pane.chip_tokens[window.panes.token_pane.selected_index()].id
        waited = ["list", "map"] if window.panes.map.view.family_map is not None else ["list"]
        # The answers may arrive in the same event pass as the tokens: record, then look.
        qtbot.waitUntil(
            lambda: all(any(query_id(a) == selected for a in heard[name]) for name in waited), timeout=ANSWER_TIMEOUT_MS
        )
    finally:
        for name, signal in listeners.items():
            signal.disconnect(heard[name].append)
    return next(a for a in reversed(heard["list"]) if query_id(a) == selected)


def query_id(answer: NeighboursAnswer) -> int | None:
    query = answer.result.query
    return None if query is None else query.id
