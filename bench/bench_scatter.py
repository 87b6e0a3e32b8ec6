"""Maps of 63, 5,000 and 50,257 tokens: computed (PCA), drawn and hovered in a scatter.

Each case runs in a new process (offscreen without a display) and reports:
compute (tokens to 2-D coordinates with the engine's exact PCA), draw (handing
the points to the scatter and painting the first frame), frame (one repaint
after a pan, median of 15) and hover (a real mouse move onto a point, through
Qt and pyqtgraph to the tip, median of 20).  A scatter counts as interactive
when a frame and a hover both take at most 50 ms (20 per second).

Two scatters are measured: the window's own ``MapCanvas`` (one labelled point per
token, as it draws the 63 family words) and a plain pyqtgraph
``ScatterPlotItem`` set up as STYLE.md recommends (whole arrays, one brush,
``pxMode``, ``hoverable``, a ``tip`` callable, no per-point labels).  A case
that does not finish within its time limit is reported as such.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bench.common import REPO, Row, emit, gpt2_folder, median, qt_env

INTERACTIVE_MS = 50.0
FRAMES = 15
HOVERS = 20
MOVE_GAP_MS = 25
CASE_TIMEOUT_S = 240
CASES = [("families", "canvas"), ("families", "plain"), (5000, "canvas"), (5000, "plain")]
CASES += [(50257, "canvas"), (50257, "plain")]


def child(folder: str, size: str, scatter: str) -> dict[str, object]:
    import time

    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    def move(target, at: QPoint) -> None:  # type: ignore[no-untyped-def]
        # What the platform delivers when the pointer moves with no button down.
        local = QPointF(at)
        event = QMouseEvent(
            QEvent.Type.MouseMove,
            local,
            QPointF(target.mapToGlobal(at)),
            Qt.MouseButton.NoButton,
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(target, event)

    from embedexplorer import open_table
    from embedexplorer.app import create_app
    from embedexplorer.core.maps.family_map import FamilyMap, family_map, load_families
    from embedexplorer.core.maps.word_maps import WordMap

    app = create_app()
    table = open_table(folder)
    _ = table.unit, table.tokens  # the window has these before it draws any map

    def compute() -> FamilyMap | WordMap:
        if size == "families":
            return family_map(table, load_families())
        # Any rows of the table, as Map > Whole vocabulary draws them: the families coloured, the rest grey.
        from embedexplorer.core.maps.word_maps import word_map
        from embedexplorer.core.maps.word_sets import WordSet

        n = int(size)
        return word_map(table, WordSet(np.arange(n), (), f"the first {n:,} rows"), load_families())

    start = time.perf_counter()
    the_map = compute()
    first_compute_s = time.perf_counter() - start
    start = time.perf_counter()
    the_map = compute()  # again, warm: the first call also pays one-off library set-up
    compute_s = time.perf_counter() - start
    if isinstance(the_map, FamilyMap):
        xs = np.array([p.x for p in the_map.points])
        ys = np.array([p.y for p in the_map.points])
        tokens_shown = [p.token for p in the_map.points]
    else:
        xs, ys = the_map.coords[:, 0], the_map.coords[:, 1]
        tokens_shown = list(the_map.labels)

    hovered: list[int] = []
    start = time.perf_counter()
    if scatter == "canvas":
        from embedexplorer.ui.map.canvas import MapCanvas

        widget = MapCanvas()
        widget.resize(840, 700)
        widget.show()
        widget.set_map(the_map, table.name)
        plot = widget.plot
        scatters = list(widget._family_items.values()) + ([widget._rest_item] if widget._rest_item else [])
        for item in scatters:
            item.sigHovered.connect(lambda _item, spots, _ev: hovered.append(len(spots)))
    else:
        widget = pg.PlotWidget()
        widget.resize(840, 700)
        widget.show()
        plot = widget.getPlotItem()
        item = pg.ScatterPlotItem(
            x=xs,
            y=ys,
            data=np.arange(len(xs)),
            brush=pg.mkBrush(70, 130, 180, 160),
            pen=None,
            size=5,
            pxMode=True,
            hoverable=True,
            hoverSize=9,
            tip=lambda x, y, data: tokens_shown[int(data)],
        )
        item.sigHovered.connect(lambda _item, spots, _ev: hovered.append(len(spots)))
        plot.addItem(item)
        plot.autoRange()
    widget.grab()  # paint the first frame, synchronously
    app.processEvents()
    draw_s = time.perf_counter() - start

    view = plot.getViewBox()
    frames = []
    for i in range(FRAMES):
        (x0, x1), (y0, y1) = view.viewRange()
        step = 0.02 * (x1 - x0) * (1 if i % 2 == 0 else -1)
        begin = time.perf_counter()
        view.translateBy(x=step)
        widget.grab()
        frames.append(time.perf_counter() - begin)

    graphics_view = widget  # both are QGraphicsViews
    viewport = graphics_view.viewport()
    rng = np.random.default_rng(0)
    targets = rng.choice(len(xs), size=HOVERS, replace=len(xs) < HOVERS)
    hovers = []
    for index in targets:
        scene_point = view.mapViewToScene(pg.Point(float(xs[index]), float(ys[index])))
        at = graphics_view.mapFromScene(scene_point)
        QTest.qWait(MOVE_GAP_MS)  # pyqtgraph drops pointer moves that come faster than 60 a second
        begin = time.perf_counter()
        move(viewport, QPoint(at.x(), at.y()))
        app.processEvents()
        hovers.append(time.perf_counter() - begin)
        QTest.qWait(MOVE_GAP_MS)
        move(viewport, QPoint(2, 2))  # leave, so the next move is a new hover
        app.processEvents()
    return {
        "points": len(xs),
        "compute_s": compute_s,
        "first_compute_s": first_compute_s,
        "draw_s": draw_s,
        "frame_ms": median(frames) * 1000,
        "hover_ms": median(hovers) * 1000,
        "hover_events": sum(1 for h in hovered if h > 0),
    }


def _case(size: object, scatter: str) -> dict[str, object]:
    env = qt_env()
    command = [sys.executable, "-m", "bench.bench_scatter", "--child", str(gpt2_folder()), str(size), scatter]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(REPO), timeout=CASE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"timeout": CASE_TIMEOUT_S}
    lines = [line for line in done.stdout.strip().splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:300]}
    return json.loads(lines[-1])


def run() -> list[Row]:
    rows = []
    for size, scatter in CASES:
        result = _case(size, scatter)
        name = "63 family words" if size == "families" else f"{size:,} tokens"
        where = "window's MapCanvas" if scatter == "canvas" else "plain ScatterPlotItem"
        what = f"map of {name} (PCA), drawn and hovered in the {where}"
        if "timeout" in result or "error" in result:
            reason = f"did not finish in {CASE_TIMEOUT_S} s" if "timeout" in result else f"failed: {result['error']}"
            rows.append(Row(what, float("nan"), "ms", None, "-", None, "interactive", False, reason))
            continue
        slowest = max(result["frame_ms"], result["hover_ms"])
        rows.append(
            Row(
                what,
                slowest,
                "ms",
                INTERACTIVE_MS,
                "interactive limit: 50 ms per frame or hover",
                slowest / INTERACTIVE_MS,
                "report; full vocabulary stays interactive",
                slowest <= INTERACTIVE_MS,
                f"{result['points']:,} points: compute {result['compute_s']:.2f} s "
                f"(first call {result['first_compute_s']:.2f} s), "
                f"draw {result['draw_s']:.2f} s, frame {result['frame_ms']:.1f} ms, "
                f"hover {result['hover_ms']:.1f} ms ({result['hover_events']}/{HOVERS} hovers hit a point)",
            )
        )
    return rows


if __name__ == "__main__":
    if "--child" in sys.argv:
        folder_arg, size_arg, scatter_arg = sys.argv[sys.argv.index("--child") + 1 :][:3]
        print(json.dumps(child(folder_arg, size_arg, scatter_arg)), flush=True)
        os._exit(0)
    emit(run(), sys.argv)
