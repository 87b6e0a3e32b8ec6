"""The process's BLAS thread pools, scanned once and kept: limiting them then costs microseconds.

threadpoolctl's ``threadpool_limits`` looks through every loaded library each time it is
entered (3 to 20 ms with Qt loaded), holding Python's lock all the while; a worker thread that
did so for every job stalled the window's thread by as much. The scan is done again only
when modules have been imported since, which is when a new BLAS library can have arrived.
"""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

_scan: tuple[int, ThreadpoolController] | None = None


def _controller() -> ThreadpoolController:
    global _scan
    from threadpoolctl import ThreadpoolController  # with the first job, not while the window opens

    if _scan is None or _scan[0] != len(sys.modules):
        _scan = (len(sys.modules), ThreadpoolController())
    return _scan[1]


def blas_threads() -> int:
    """The most threads any loaded BLAS library uses now (1 when none is loaded)."""
    return max((info["num_threads"] for info in _controller().info() if info["user_api"] == "blas"), default=1)


def limit_blas(threads: int) -> AbstractContextManager[object]:
    """At most ``threads`` threads in every BLAS library while the block runs, never more than now."""
    return _controller().limit(limits=min(threads, blas_threads()), user_api="blas")


def cores_but_one() -> int:
    """Every core but one (at least one): what a long computation may take, so the window keeps a core."""
    return max(1, (os.cpu_count() or 1) - 1)
