"""Start the window: QApplication, the worker thread, the main window; clean shutdown.

Only Qt and pyqtgraph load before the window shows; the tables, tokenizers and
everything heavy load in the worker thread after it is visible.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

if TYPE_CHECKING:
    from PySide6.QtCore import QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from .ui.window.main_window import MainWindow
    from .worker import Failure

RequestT = TypeVar("RequestT")
AnswerT = TypeVar("AnswerT")

APP_ID = "embedexplorer"
SELF_TEST_TIMEOUT_S = 90


class _WindowArguments(argparse.ArgumentParser):
    """The window's options; a mistake (a command misspelt lands here) is one safe line, as the commands' are."""

    def error(self, message: str) -> NoReturn:
        from .core.common.terminal import one_line

        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = _WindowArguments(prog="embedexplorer", description="Open the EmbedExplorer window.")
    parser.add_argument("--model", default=None, help="model to open instead of the last one used")
    parser.add_argument("--settings", default=None, help="settings file to use (INI), e.g. for tests")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="open the window, load the default model, run one query, export the map, print JSON, exit",
    )
    parser.add_argument(
        "--self-test-png",
        default=None,
        help="where --self-test keeps the map it exports (default: a temporary file, removed at the end)",
    )
    return parser.parse_args(list(argv))


def _headless_if_needed() -> None:
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


GIL_SWITCH_INTERVAL_S = 0.001


def create_app(argv: Sequence[str] = ()) -> QApplication:
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([APP_ID, *argv])
    # PySide lets go of the GIL around Qt calls, so a window handler retakes it many times;
    # each time it may wait a whole switch interval for a busy worker. 1 ms instead of 5 ms
    # keeps those waits from adding up to a visible stall.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    app.setApplicationName("EmbedExplorer")
    app.setOrganizationName("EmbedExplorer")
    app.setDesktopFileName(APP_ID)
    from .resources import resource_path
    from .ui.style import fonts

    # The map's font, and the window's too where the system has none that draws text.
    fonts.use_for_window_if_needed(app)

    icon = resource_path("icons", "embedexplorer.svg")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    return app


def create_window(settings_path: str | None = None) -> MainWindow:
    from .settings import Settings
    from .ui.window.main_window import MainWindow
    from .worker import WorkerClient

    client = WorkerClient()
    window = MainWindow(client, Settings(settings_path))
    return window


def route_unexpected_errors(window: MainWindow) -> None:
    """Uncaught exceptions of any thread: the traceback to the log, one line to the message bar."""
    from PySide6.QtCore import QObject, Qt, Signal

    from .errorlog import install_hooks, start_logging

    class _Relay(QObject):
        # Emitted from whichever thread failed; queued into the GUI thread.
        message = Signal(str)

    relay = _Relay(window)
    relay.message.connect(
        lambda text: window.show_message(text, "error"), Qt.ConnectionType.QueuedConnection
    )
    start_logging()
    install_hooks(relay.message.emit)


def keep_startup_out_of_gc(parent: QObject) -> None:
    """Set what the start made (modules, classes, the window's widgets: 110,000 objects) aside from the collector,
    and from then on collect cycles in the GUI thread only (``collect_in_gui_thread``).

    They live as long as the process, yet every full collection walked them all, in whichever
    thread ran it and holding Python's lock: 15-17 ms of CPU on the GUI thread, 26 ms on the
    worker while a new model's map was being drawn. Frozen, they are never walked again; what
    the session makes later is collected as before. (At the first frame 449 of them were
    garbage in cycles, a few kilobytes, which stay.)
    """
    gc.freeze()
    collect_in_gui_thread(parent)


# How often the GUI thread looks whether the collector's thresholds were passed.
COLLECT_EVERY_MS = 500


def collect_in_gui_thread(parent: QObject) -> QTimer:
    """Turn the automatic collector off and run it from a timer of the GUI thread, by the same thresholds.

    Left automatic, a collection runs in whichever thread happens to allocate: a worker may then
    free a Qt object's Python side while the GUI thread deletes its C++ side, and each waits for a
    lock the other holds (a closed window's menu, seen once in the tests: the run hung). pyqtgraph's
    GarbageCollector does the same for the same reason. Cycles wait for the next tick at most.
    """
    from PySide6.QtCore import QTimer

    gc.disable()
    timer = QTimer(parent)
    timer.setObjectName("gui-thread collector")
    timer.setInterval(COLLECT_EVERY_MS)
    timer.timeout.connect(collect_due_generation)
    timer.start()
    return timer


def collect_due_generation() -> None:
    """Collect as the automatic collector would now: once the youngest generation's count has passed its
    threshold, the oldest generation whose count has passed its own."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    if thresholds[0] == 0 or counts[0] <= thresholds[0]:  # a threshold of 0 turns collection off
        return
    for generation in (2, 1, 0):
        if counts[generation] > thresholds[generation]:
            gc.collect(generation)
            return


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        status = self_test(args.model, args.self_test_png)
        # End here: Qt writes its settings file once more while Python finalises its objects,
        # which would put the self-test's removed folder back.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    _headless_if_needed()
    # No collections while the window is built: they walked the growing heap again and again
    # (46 ms of the launch's CPU in 157 collections); ``keep_startup_out_of_gc`` ends this.
    gc.disable()
    app = create_app()
    window = create_window(args.settings)
    route_unexpected_errors(window)
    window.show()
    # Paint the first frame before the worker starts loading: the load competes with the
    # GUI thread for the GIL and would otherwise delay the window appearing.
    app.processEvents()
    keep_startup_out_of_gc(window)
    window.open_model(args.model if args.model is not None else window.settings.model)
    status = int(app.exec())
    if window.worker_stuck:
        sys.stdout.flush()
        os._exit(status)  # the worker is blocked in I/O; settings are already saved
    return status


def self_test(model: str | None = None, keep_png: str | None = None) -> int:
    """Drive the real window once and report what happened as one line of JSON.

    Its settings and map go to a temporary folder that is removed at the end; the map
    is checked here (a PNG of the asked width) and kept only at ``keep_png``.
    """
    _headless_if_needed()
    started = time.perf_counter()
    report: dict[str, object] = {"ok": False}
    app = create_app()
    workdir = Path(tempfile.mkdtemp(prefix="embedexplorer-self-test-"))
    # Qt writes the settings file once more when its objects go away, after this function
    # returns: remove the folder again at exit, so a self-test leaves nothing behind.
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    window = create_window(str(workdir / "settings.ini"))
    from PySide6.QtCore import QEventLoop, QTimer

    from .jobs.base import Kind
    from .jobs.table_jobs import LOAD, MAP, NEIGHBOURS

    def wait_for(kind: Kind[RequestT, AnswerT], asker: object, what: str) -> AnswerT:
        """The answer to ``asker``'s question of ``kind``: each pane hears only its own."""
        loop = QEventLoop()
        box: dict[str, object] = {}

        def done(answer: object) -> None:
            box["answer"] = answer
            loop.quit()

        def failed(failure: Failure) -> None:
            box["error"] = f"{kind.name}: {failure.message}"
            loop.quit()

        channel = window.client.channel(kind, asker)
        channel.ready.connect(done)
        channel.failed.connect(failed)
        QTimer.singleShot(SELF_TEST_TIMEOUT_S * 1000, loop.quit)
        loop.exec()
        channel.ready.disconnect(done)
        channel.failed.disconnect(failed)
        if "error" in box:
            raise RuntimeError(box["error"])
        if "answer" not in box:
            raise TimeoutError(f"no answer while waiting for {what}")
        return box["answer"]  # type: ignore[return-value]

    try:
        window.show()
        window.open_model(model or "")
        loaded = wait_for(LOAD, window.model_bar, "the model")
        report["model"] = loaded.name
        report["rows"], report["width"] = loaded.facts.rows, loaded.facts.width
        family_map = wait_for(MAP, window.panes.map, "the map")
        report["map_points"] = len(family_map.points)
        word = " Paris" if loaded.byte_level else "paris"
        window.state.update(text=word)
        answer = wait_for(NEIGHBOURS, window.panes.neighbours_pane, "neighbours")
        query = answer.result.query
        report["query"] = query.token if query is not None else ""
        report["neighbours"] = [n.token for n in answer.result.neighbours[:5]]
        from .jobs.layer_jobs import LAYERS, LayersRequest

        # The whole model forward in the window's child process (the frozen app runs itself for it).
        window.client.ask(LAYERS, LayersRequest(word, 1, k=3), "self-test")
        layers = wait_for(LAYERS, "self-test", "the layers")
        if layers.answer is not None:
            report["layers"] = len(layers.answer.steps) - 1
        else:
            report["layers"] = "the whole model is not here" if layers.missing else "none"
        png = Path(keep_png) if keep_png else workdir / "map.png"
        if not window.panes.map.exports.export_to(str(png), 1200):
            raise RuntimeError(window.message_bar.text())
        from PySide6.QtGui import QImage

        image = QImage(str(png))
        if png.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n" or image.isNull() or image.width() != 1200:
            raise RuntimeError(f"the exported map is not a 1200-pixel PNG ({png.stat().st_size:,} bytes)")
        if keep_png:
            report["png"] = str(png)
        report["png_bytes"] = png.stat().st_size
        report["png_width"] = image.width()
        from .ui.style.text_check import check_map_text

        # A picture of empty boxes is still a PNG: check that its text really renders.
        problems = check_map_text(window.panes.map.view.canvas, png)
        if problems:
            raise RuntimeError("the map's text does not render: " + "; ".join(problems))
        report["text"] = "renders"
        from .ui.style import fonts

        # Emoji a person types in the Text box (a pizza, a party): drawn, never empty boxes.
        undrawn = fonts.undrawn(fonts.EMOJI_SAMPLE, window.panes.token_pane.input.font())
        if undrawn:
            found = fonts.emoji_file()
            raise RuntimeError(
                f"typed emoji ({', '.join(fonts.escape(c) for c in undrawn)}) have no glyph in any font"
                f" ({'the emoji font ' + str(found) + ' did not draw them' if found else 'no emoji font was found'})"
            )
        report["emoji"] = "drawn"
        report["ok"] = True
    except Exception as exc:  # noqa: BLE001 - the report must say what failed, not crash
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        report["seconds"] = round(time.perf_counter() - started, 2)
        window.close()
        app.processEvents()
        shutil.rmtree(workdir, ignore_errors=True)  # settings and the map: a self-test leaves nothing
    print(json.dumps(report, ensure_ascii=False), flush=True)
    return 0 if report["ok"] else 1
