"""Launch to window visible, in new processes: EmbedExplorer against a bare PySide6 + pyqtgraph window.

Both clocks start in the parent just before it launches ``python`` and stop at
the first paint event of the main window, which the child reports as a wall
clock time.  EmbedExplorer is started through its real ``app.main`` (opening
the GPT-2-shaped folder, as a launch with a remembered model does); only
``create_window`` is wrapped to watch for the first paint.  The baseline is a
QMainWindow holding one pyqtgraph PlotWidget.  Launches alternate; medians.
Without a display both run on Qt's offscreen platform.  Both start from compiled
bytecode, as installed packages do.

Each child also reports its CPU seconds at the first paint (the whole process, and its
GUI thread alone): on a busy machine wall times grow with the wait for a core, the work
done does not, so the CPU ratio shows a change in the app's own cost at any load.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from bench.common import (
    REPO,
    Row,
    alternating,
    compile_package,
    emit,
    gpt2_folder,
    median,
    qt_env,
    warm_page_cache,
)

ROUNDS = 7

FIRST_PAINT = """
import os, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

def report():
    print(repr(time.time()), time.process_time(), time.thread_time(), flush=True)
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


def _launch(code: str, cpu: list[tuple[float, float]]) -> float:
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=qt_env(), cwd=str(REPO), timeout=90
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"launch failed ({done.returncode}):\n{done.stderr[-3000:]}")
    painted, process_cpu, gui_cpu = (float(field) for field in lines[-1].split())
    cpu.append((process_cpu, gui_cpu))
    return painted - start


def run(rounds: int = ROUNDS) -> list[Row]:
    folder = gpt2_folder()
    warm_page_cache(folder)
    compile_package()  # the bytecode an install would hold
    cpu: dict[str, list[tuple[float, float]]] = {"ours": [], "bare": []}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="ee-bench-launch-") as scratch:
        ours = OURS.format(folder=str(folder), settings=os.path.join(scratch, "settings.ini"))
        _launch(ours, []), _launch(BARE, [])  # warm-up: shared libraries, bytecode, font caches
        times = alternating(
            {"ours": lambda: _launch(ours, cpu["ours"]), "bare": lambda: _launch(BARE, cpu["bare"])}, rounds
        )
    loads.append(os.getloadavg()[0])
    ratio = median(times["ours"]) / median(times["bare"])
    platform = qt_env().get("QT_QPA_PLATFORM", "native")
    process_cpu = {name: median([c[0] for c in pairs]) for name, pairs in cpu.items()}
    gui_cpu = {name: median([c[1] for c in pairs]) for name, pairs in cpu.items()}
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
            f"first paint, median of {rounds} alternating launches, QT_QPA_PLATFORM={platform}; CPU seconds "
            f"at the first paint: process {process_cpu['ours']:.3f} s against {process_cpu['bare']:.3f} s "
            f"({process_cpu['ours'] / process_cpu['bare']:.2f}x), GUI thread {gui_cpu['ours']:.3f} s against "
            f"{gui_cpu['bare']:.3f} s ({gui_cpu['ours'] / gui_cpu['bare']:.2f}x); load {loads[0]:.2f} at start, "
            f"{loads[1]:.2f} at end",
        )
    ]


if __name__ == "__main__":
    emit(run(), sys.argv)
