"""Quick questions during a long job: a neighbour query's time with the long lane busy, against idle.

In a fresh process the real window opens the GPT-2-shaped folder (offscreen).  Then
40 neighbour queries go through ``WorkerClient.submit`` one after another, each timed
from submit to its answer in the GUI thread: first with the worker idle, then while a
5-second long job runs on the other lane (the whole-vocabulary PCA of ``core.maps``,
repeated; real engine work that checks for interruption between blocks).  The figure
is the busy median against the idle median; a 10 ms heartbeat timer measures the GUI
thread's longest stall during the busy phase.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from bench.common import REPO, Row, emit, gpt2_folder, median, qt_env, warm_page_cache

QUERIES = 40
LONG_JOB_S = 5.0
HEARTBEAT_MS = 10


def child(folder: str, settings: str) -> dict[str, object]:
    import random
    import time
    from dataclasses import dataclass

    from PySide6.QtCore import QEventLoop, Qt, QTimer

    from embedexplorer.app import create_app, create_window
    from embedexplorer.core.maps.family_map import pca_2d
    from embedexplorer.jobs.base import JobContext, Kind, Lane
    from embedexplorer.jobs.table_jobs import MAP, NEIGHBOURS, NeighboursRequest

    @dataclass(frozen=True)
    class Busy:
        seconds: float

    def whole_vocabulary_maps(ctx: JobContext, request: Busy) -> int:
        started, rounds = time.perf_counter(), 0
        while time.perf_counter() - started < request.seconds:
            ctx.check()
            pca_2d(ctx.session.table.rows)
            rounds += 1
        return rounds

    busy_kind = Kind("bench-busy", Lane.LONG, whole_vocabulary_maps)

    app = create_app()  # noqa: F841 - kept alive for the whole run
    window = create_window(settings)
    window.show()
    client = window.client

    def wait_for(signal: object, start: object) -> float:
        loop = QEventLoop()
        signal.connect(loop.quit)  # type: ignore[attr-defined]
        began = time.perf_counter()
        start()  # type: ignore[operator]
        QTimer.singleShot(60_000, loop.quit)
        loop.exec()
        signal.disconnect(loop.quit)  # type: ignore[attr-defined]
        return time.perf_counter() - began

    loop = QEventLoop()
    client.channel(MAP, "bench").ready.connect(loop.quit)
    window.open_model(folder)
    loop.exec()
    rows = window.model_bar.loaded_model.facts.rows if window.model_bar.loaded_model else 50257
    rng = random.Random(0)
    ids = [rng.randrange(rows) for _ in range(2 * QUERIES + 5)]

    def query(token_id: int) -> float:
        asked = NeighboursRequest(token_id, 8)
        return wait_for(client.channel(NEIGHBOURS, "bench").ready, lambda: client.ask(NEIGHBOURS, asked, "bench"))

    for token_id in ids[:5]:  # warm up the query path
        query(token_id)
    idle = [query(token_id) for token_id in ids[5 : 5 + QUERIES]]

    ticks: list[float] = []
    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
    finished: list[int] = []
    client.channel(busy_kind, "bench").ready.connect(finished.append)
    heartbeat.start()
    busy_started = time.perf_counter()
    client.ask(busy_kind, Busy(LONG_JOB_S), "bench")
    busy = [query(token_id) for token_id in ids[5 + QUERIES :]]
    queries_done = time.perf_counter() - busy_started
    done = QEventLoop()
    client.channel(busy_kind, "bench").ready.connect(done.quit)
    if not finished:
        done.exec()
    heartbeat.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    window.close()
    return {
        "idle_ms": [t * 1000 for t in idle],
        "busy_ms": [t * 1000 for t in busy],
        "queries_done_s": queries_done,
        "long_job_rounds": finished[0] if finished else None,
        "longest_gap_ms": max(gaps) * 1000 if gaps else float("nan"),
    }


def run() -> list[Row]:
    folder = gpt2_folder()
    warm_page_cache(folder)
    with tempfile.TemporaryDirectory(prefix="ee-bench-lanes-") as scratch:
        done = subprocess.run(
            [sys.executable, "-m", "bench.bench_lanes", "--child", str(folder), os.path.join(scratch, "s.ini")],
            capture_output=True,
            text=True,
            env=qt_env(),
            cwd=str(REPO),
            timeout=600,
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"bench_lanes child failed: {done.stderr[-2000:]}")
    result = json.loads(lines[-1])
    idle, busy = median(result["idle_ms"]), median(result["busy_ms"])
    during = result["queries_done_s"] < LONG_JOB_S
    note = (
        f"median of {QUERIES} queries each; the {QUERIES} busy queries ended {result['queries_done_s']:.2f} s into "
        f"the {LONG_JOB_S:.0f} s job ({result['long_job_rounds']} whole-vocabulary PCAs)"
    )
    return [
        Row(
            "neighbour query (k=8) while a 5 s long job runs, window's worker",
            busy,
            "ms",
            idle,
            "the same queries with the worker idle",
            busy / idle,
            "<= 2x",
            busy / idle <= 2 and during,
            note,
        ),
        Row(
            "longest GUI-thread stall during that long job",
            result["longest_gap_ms"],
            "ms",
            float(HEARTBEAT_MS),
            "10 ms heartbeat period",
            result["longest_gap_ms"] / HEARTBEAT_MS,
            "<= 50 ms",
            result["longest_gap_ms"] <= 50,
            "heartbeat from the start of the long job to its end",
        ),
    ]


if __name__ == "__main__":
    if "--child" in sys.argv:
        folder_arg, settings_arg = sys.argv[sys.argv.index("--child") + 1 :][:2]
        print(json.dumps(child(folder_arg, settings_arg)), flush=True)
        os._exit(0)
    emit(run(), sys.argv)
