"""The worker's two lanes: quick questions never wait behind long jobs, and long jobs stop on request."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import pytest

from embedexplorer.jobs.base import JobContext, Kind, Lane
from embedexplorer.jobs.table_jobs import LOAD, NEIGHBOURS, LoadRequest, NeighboursRequest
from embedexplorer.worker import WorkerClient

TIMEOUT_MS = 60_000


@dataclass(frozen=True)
class Spin:
    """A long job that works in small steps until it is stopped or its time is up."""

    seconds: float
    label: str = ""


@dataclass(frozen=True)
class Spun:
    label: str
    stopped_after: float


STOPS: list[tuple[str, float]] = []
RUNNING = threading.Event()


def spin(ctx: JobContext, request: Spin) -> Spun:
    RUNNING.set()
    started = time.perf_counter()
    try:
        while time.perf_counter() - started < request.seconds:
            ctx.check()
            sum(range(2_000))  # real work between checks, as a block of rows would be
    except BaseException:
        STOPS.append((request.label, time.perf_counter()))
        raise
    return Spun(request.label, time.perf_counter() - started)


SPIN = Kind("test-spin", Lane.LONG, spin)


@pytest.fixture
def client(qtbot):  # type: ignore[no-untyped-def]
    worker = WorkerClient()
    with qtbot.waitSignal(worker.channel(LOAD, "test").ready, timeout=TIMEOUT_MS):
        worker.ask(LOAD, LoadRequest("bundled"), "test")
    yield worker
    worker.shutdown()


def test_a_neighbour_query_answers_while_a_long_job_runs(qtbot, client) -> None:
    done: list[Spun] = []
    client.channel(SPIN, "test").ready.connect(done.append)
    client.ask(SPIN, Spin(600.0, "long"), "test")  # runs until cancelled below, however busy the machine
    with qtbot.waitSignal(client.channel(NEIGHBOURS, "test").ready, timeout=TIMEOUT_MS) as blocker:
        client.ask(NEIGHBOURS, NeighboursRequest("monday", 6), "test")
    tokens = {n.token for n in blocker.args[0].result.neighbours}
    assert {"tuesday", "friday"} <= tokens
    assert done == []  # the long job is still running: the quick lane did not wait for it
    client.cancel(SPIN, "test")


def test_a_newer_request_stops_the_running_one_quickly(qtbot, client) -> None:
    STOPS.clear()
    RUNNING.clear()
    answers: list[Spun] = []
    client.channel(SPIN, "test").ready.connect(answers.append)
    client.ask(SPIN, Spin(30.0, "first"), "test")
    assert RUNNING.wait(30)  # the first job is under way on the long lane
    with qtbot.waitSignal(client.channel(SPIN, "test").ready, timeout=TIMEOUT_MS):
        client.ask(SPIN, Spin(0.05, "second"), "test")
    # The first job (30 s of spinning) was stopped, not waited for: the second answered while it
    # still had most of its 30 s to go, and the first never answered at all.
    assert [a.label for a in answers] == ["second"]
    assert STOPS and STOPS[0][0] == "first"


def test_shutdown_stops_a_long_job_within_the_timeout(qtbot) -> None:
    worker = WorkerClient()
    started = threading.Event()

    def wait_then_spin(ctx: JobContext, request: Spin) -> Spun:
        started.set()
        return spin(ctx, request)

    client_kind = Kind("test-spin-shutdown", Lane.LONG, wait_then_spin)
    worker.ask(client_kind, Spin(60.0, "closing"), "test")
    assert started.wait(30)
    # True: the 60 s job heard the stop and ended (the window waits 3 s; a busy machine gets 30 here)
    assert worker.shutdown(timeout_ms=30_000)


def blas_threads(_ctx: JobContext, _request: object) -> int:
    from threadpoolctl import threadpool_info

    return max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")


BLAS_IN_LONG_LANE = Kind("test-blas-long", Lane.LONG, blas_threads)
BLAS_IN_QUICK_LANE = Kind("test-blas-quick", Lane.QUICK, blas_threads)


def test_a_long_job_leaves_a_core_for_the_window(qtbot, client) -> None:
    from threadpoolctl import threadpool_info

    from embedexplorer.worker import long_lane_blas_threads

    before = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    with qtbot.waitSignal(client.channel(BLAS_IN_LONG_LANE, "test").ready, timeout=TIMEOUT_MS) as long_job:
        client.ask(BLAS_IN_LONG_LANE, None, "test")
    assert long_job.args[0] == min(long_lane_blas_threads(), max(before))
    assert long_lane_blas_threads() == max(1, (os.cpu_count() or 2) - 1)
    # Afterwards every library has its own setting back; the quick lane is never limited.
    assert [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"] == before
    with qtbot.waitSignal(client.channel(BLAS_IN_QUICK_LANE, "test").ready, timeout=TIMEOUT_MS) as quick_job:
        client.ask(BLAS_IN_QUICK_LANE, None, "test")
    assert quick_job.args[0] == max(before)
