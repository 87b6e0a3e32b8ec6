"""Launch to window visible, in new processes: EmbedExplorer against a bare PySide6 + pyqtgraph window.

Both clocks start in the parent just before it launches ``python`` and stop at
the first paint event of the main window, which the child reports as a wall
clock time.  EmbedExplorer is started through its real ``app.main`` (opening
the GPT-2-shaped folder, as a launch with a remembered model does); only
``create_window`` is wrapped to watch for the first paint.  The baseline is a
QMainWindow holding one pyqtgraph PlotWidget.  Launches alternate; medians.
Without a display both run on Qt's offscreen platform.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from bench.common import REPO, Row, alternating, emit, gpt2_folder, median, qt_env, warm_page_cache

ROUNDS = 7

FIRST_PAINT = """
import os, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

def report():
    print(repr(time.time()), flush=True)
    os._exit(0)  # the figure is taken; skip teardown

class FirstPaint(QObject):
    # The first paint of any widget starts the first frame; when the event loop is idle
    # again the whole frame has been painted and flushed.
    seen = False

    def eventFilter(self, obj, event):
        if not self.seen and event.type() == QEvent.Type.Paint:
            self.seen = True
            QTimer.singleShot(0, report)
        return False

def watch():
    QApplication.instance()._bench_filter = FirstPaint()
    QApplication.instance().installEventFilter(QApplication.instance()._bench_filter)
"""

OURS = (
    FIRST_PAINT
    + """
import embedexplorer.app as app_module
real_create_window = app_module.create_window

def create_window(*args, **kwargs):
    window = real_create_window(*args, **kwargs)
    watch()
    return window

app_module.create_window = create_window
sys.exit(app_module.main(["--model", {folder!r}, "--settings", {settings!r}]))
"""
)

BARE = (
    FIRST_PAINT
    + """
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(["bare"])
window = QMainWindow()
window.setCentralWidget(pg.PlotWidget())
window.resize(1360, 860)
watch()
window.show()
sys.exit(app.exec())
"""
)


def _launch(code: str) -> float:
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=qt_env(), cwd=str(REPO), timeout=90
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"launch failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return float(lines[-1]) - start


def run(rounds: int = ROUNDS) -> list[Row]:
    folder = gpt2_folder()
    warm_page_cache(folder)
    with tempfile.TemporaryDirectory(prefix="ee-bench-launch-") as scratch:
        ours = OURS.format(folder=str(folder), settings=os.path.join(scratch, "settings.ini"))
        _launch(ours), _launch(BARE)  # warm-up: shared libraries, bytecode, font caches
        times = alternating({"ours": lambda: _launch(ours), "bare": lambda: _launch(BARE)}, rounds)
    ratio = median(times["ours"]) / median(times["bare"])
    platform = qt_env().get("QT_QPA_PLATFORM", "native")
    return [
        Row(
            "launch to window visible, new process",
            median(times["ours"]),
            "s",
            median(times["bare"]),
            "bare PySide6 + pyqtgraph window",
            ratio,
            "<= 1.5x",
            ratio <= 1.5,
            f"first paint, median of {rounds} alternating launches, QT_QPA_PLATFORM={platform}",
        )
    ]


if __name__ == "__main__":
    emit(run(), sys.argv)
