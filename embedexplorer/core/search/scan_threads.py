"""How many helper threads every C pass over a table shares its chunks of rows with.

Each pass in ``_scan.c`` and ``_quants.c`` takes its counters (chunks claimed, chunks
finished, helpers wanted): every thread in the pass takes the next unclaimed chunk until
none is left, so the caller does its part and helpers that start late find nothing to
do. The helpers are the C modules' own threads (``scan_common.h``); here live how many a
pass gets and the switch that keeps a thread's passes to itself, for a search that runs
beside a computation needing the other cores.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

# Below this many numbers one thread is quicker than sharing the chunks out.
SPLIT_ABOVE = 1 << 21
# Two or three cores already draw all the memory bandwidth most machines have.
_MAX_THREADS = 4
# Caps the threads of every pass (1: the calling thread alone), for a machine shared with other work
# or to measure one core's speed; unset or not a whole number above 0, no cap.
THREADS_VARIABLE = "EMBEDEXPLORER_SCAN_THREADS"

# The C passes' own helper threads (POSIX threads; scan_common.h), or a pool of Python threads.
C_HELPERS = os.name != "nt"
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


class _Alone(threading.local):
    """Whether this thread's passes must leave the other cores alone (see ``own_thread_only``)."""

    on = False  # a class default: read on every pass, where getattr's default on a bare local costs 0.3 us


_alone = _Alone()
# How long the cores this process may run on are taken as known: a pass asks for them each time.
_CORES_KEPT_SECONDS = 1.0
_cores_known: tuple[float, int] = (-_CORES_KEPT_SECONDS, 1)


@contextmanager
def own_thread_only(on: bool = True) -> Iterator[None]:
    """Passes started by this thread use no helper threads meanwhile; other threads' passes are not affected.

    For a search that runs beside a computation that needs the other cores: the model's
    process running a text forward while the worker compares its layers with the table.
    ``on=False`` lifts it for a block (the model has finished: every core is free again).
    """
    before = _alone.on
    _alone.on = on
    try:
        yield
    finally:
        _alone.on = before


def helpers_for(numbers: int) -> int:
    """How many helper threads a pass over ``numbers`` numbers gets: none when small or kept to its own thread.

    At most one thread per core this process may run on (its affinity, which a container or
    ``taskset`` narrows; ``os.cpu_count`` counts the machine's), and at most ``THREADS_VARIABLE``.
    """
    if numbers < SPLIT_ABOVE or _alone.on:
        return 0
    return min(_MAX_THREADS, _cores_now(), _thread_cap()) - 1


def _cores_now() -> int:
    """``usable_cores``, asked again at most once a second (each ask is a system call in every query)."""
    global _cores_known
    now = time.monotonic()
    if now - _cores_known[0] >= _CORES_KEPT_SECONDS:
        _cores_known = (now, usable_cores())
    return _cores_known[1]


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def _thread_cap() -> int:
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else _MAX_THREADS


def shared_pass(numbers: int, run: Callable[[np.ndarray], object]) -> None:
    """Run ``run(progress)`` here and in helper threads, all sharing the same chunk counters.

    The C passes start their own helpers (``scan_common.h``) when the counters carry a third
    number, how many to start; where they were built without threads (Windows), helpers come
    from a pool of Python threads, each calling ``run`` with the same counters.
    """
    helpers = helpers_for(numbers)
    if C_HELPERS:
        run(np.array([0, 0, helpers], dtype=np.int64))  # chunks claimed, chunks finished, helpers wanted
        return
    progress = np.zeros(2, dtype=np.int64)  # chunks claimed, chunks finished
    for _ in range(helpers):
        _threads().submit(run, progress)
    # Returns when every chunk is done, by this thread or a helper; a helper that starts
    # late finds nothing left and is not waited for.
    run(progress)


def _threads() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_MAX_THREADS - 1, thread_name_prefix="table-scan")
        return _pool
