"""Unit rows rounded to bfloat16, scanned in half the bytes of float32 to screen a neighbour query.

An exact query has to look at every row, and reading 154 MB of float32 is what
takes the time, however it is multiplied.  bfloat16 keeps float32's range and 8
of its 24 significant bits, so each score from these rows is off by at most a
known amount (``error_bound``).  ``neighbours.top_k`` then takes every row whose
score could still be among the best and recomputes only those from the float32
rows: the answer is the one a full float32 pass gives, read at half the cost.

The scan is a small C loop (``_scan.c``); helper threads share its chunks of rows.
Where it is missing, or measures slower than numpy's float32 pass on this machine,
``screen_for`` answers None and queries read the float32 rows instead.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from functools import partial

import numpy as np

from ..common.plain_pages import empty_on_plain_pages
from .many_scores import scores_many
from .neighbours import accumulation_error
from .scan_threads import shared_pass

try:
    from . import _scan
except ImportError:  # built without a C compiler
    _scan = None  # type: ignore[assignment]

# Rounding to the nearest bfloat16 moves a number by at most 2^-8 of itself.
BF16_ROUNDING = 2.0**-8


def kernel_instructions() -> str | None:
    """Which build of the scan this CPU runs ("avx512f", "avx2", "plain"), or None without one."""
    return None if _scan is None else str(_scan.INSTRUCTIONS)


class Bf16Rows:
    """A unit table's rows in bfloat16, with the scan that scores a query against all of them."""

    def __init__(self, unit: np.ndarray) -> None:
        if _scan is None:
            raise RuntimeError("the bfloat16 scan was not built (no C compiler at install time)")
        self.shape = unit.shape
        self.bits = empty_on_plain_pages(unit.shape, np.uint16)
        _scan.bf16_round(np.ascontiguousarray(unit, dtype=np.float32), self.bits)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Every row's dot product with ``query``, each within ``error_bound(|query|)`` of the exact one."""
        query = np.ascontiguousarray(query, dtype=np.float32)
        if query.shape != (self.shape[1],):
            raise ValueError(f"a query for these rows needs {self.shape[1]} numbers, not {query.shape}")
        out = np.empty(self.shape[0], dtype=np.float32)
        shared_pass(self.bits.size, partial(_scan.bf16_scores, self.bits, query, out))
        return out

    def scores_many(self, queries: np.ndarray) -> np.ndarray:
        """``scores`` for several queries, the rows read once for all: query q's scores at ``[q]``."""
        return scores_many(self.bits, queries, bf16_bits=True)

    def error_bound(self, query_length: float) -> float:
        """How far a score from ``scores`` or ``scores_many`` may be from a unit row's exact product with the query.

        Each row number is off by at most 2^-8 of itself, so a score is off by at most
        2^-8 * sum|row_j * query_j| <= 2^-8 * |row| * |query| = 2^-8 * |query| (Cauchy-Schwarz,
        unit rows), plus the float32 rounding of the sum.  The 1 % on top covers rows
        whose float32 length is a hair over 1 and numbers too small for relative
        rounding (below 1e-38, off by at most 2^-134 each).
        """
        width = self.shape[1]
        return 1.01 * query_length * (BF16_ROUNDING + accumulation_error(width) * (1 + BF16_ROUNDING))


# Timings of each pass at open; the medians are compared.
TIMING_ROUNDS = 9
# How long OpenBLAS's threads may go on spinning after a float32 pass (its default: about a
# tenth of a second) and slow a scan started meanwhile; the package sets them to sleep at once,
# but not where numpy was loaded first. Scans timed this soon after one are not counted.
BLAS_SPIN_SECONDS = 0.25
# The scan must beat the float32 pass by this much at open: a near tie is not worth the memory.
MUST_WIN_BY = 0.9
# While in use, every RECHECK_EVERY-th query also times the float32 pass.
RECHECK_EVERY = 32
# Timings of each pass remembered for the re-check.
RECHECK_SAMPLES = 7


def screen_for(unit: np.ndarray) -> Bf16Rows | None:
    """bfloat16 rows for ``unit`` when their scan clearly beats numpy's float32 pass here, else None.

    The plain (unvectorised) build or a CPU short of memory bandwidth can make the scan
    slower than BLAS (it was on an Intel Xeon where the best of five timings chose it),
    so the two are timed on the real table, nine times each, and the medians compared:
    one noisy moment moves a median little. The scans come first: right after a float32
    pass, OpenBLAS's spinning threads can hold the other core (``BLAS_SPIN_SECONDS``).
    The scan must be at least 10 % faster.  ``EMBEDEXPLORER_SCAN=off`` skips it.
    ``ScreenChoice`` keeps checking while queries run.
    """
    if _scan is None or unit.ndim != 2 or unit.shape[0] == 0 or unit.shape[1] == 0:
        return None
    if os.environ.get("EMBEDEXPLORER_SCAN", "").lower() in ("0", "off", "no"):
        return None
    screen = Bf16Rows(unit)
    query = np.array(unit[0], dtype=np.float32)
    times: dict[str, list[float]] = {"scan": [], "float32": []}
    passes: list[tuple[str, Callable[[np.ndarray], object]]] = [("scan", screen.scores), ("float32", unit.__matmul__)]
    for name, run in passes:
        for _ in range(TIMING_ROUNDS):
            began = time.perf_counter()
            run(query)
            times[name].append(time.perf_counter() - began)
    from statistics import median  # loaded for the second query: a one-shot answer times nothing

    return screen if median(times["scan"]) < MUST_WIN_BY * median(times["float32"]) else None


class ScreenChoice:
    """The first pass chosen at open, checked again while queries run.

    Every query's scan is timed; every ``RECHECK_EVERY``-th query also times the float32
    pass on the same query.  Once the median of the last scans is slower than the median
    of the last float32 passes (another program took the memory bandwidth, the CPU
    clocks differently), queries read the float32 rows from then on.
    """

    def __init__(
        self, screen: Bf16Rows | None, unit: np.ndarray, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.screen, self.unit = screen, unit
        # Every timing of the choice reads this clock: tests hand in one they move themselves,
        # so what they check never depends on how busy the machine is.
        self.clock = clock
        self.queries = 0
        self.scan_times: deque[float] = deque(maxlen=RECHECK_SAMPLES)
        self.float32_times: deque[float] = deque(maxlen=RECHECK_SAMPLES)
        self._float32_ended = -float("inf")  # when the last float32 pass timed here ended

    def current(self) -> _TimedScreen | None:
        """The screen for the next query (timed), or None when the float32 pass is the faster."""
        return None if self.screen is None else _TimedScreen(self)

    def record(self, query: np.ndarray, scan_seconds: float) -> None:
        self.queries += 1
        now = self.clock()
        # A scan right after the float32 pass timed here can share its core with BLAS's spinning threads.
        if now - scan_seconds - self._float32_ended > BLAS_SPIN_SECONDS:
            self.scan_times.append(scan_seconds)
        if self.queries % RECHECK_EVERY:
            return
        began = self.clock()
        self.unit @ query
        self._float32_ended = self.clock()
        self.float32_times.append(self._float32_ended - began)
        from statistics import median

        if len(self.float32_times) >= 3 and median(self.scan_times) > median(
            self.float32_times
        ):
            self.screen = None  # the float32 pass wins here now: stop scanning


class _TimedScreen:
    def __init__(self, choice: ScreenChoice) -> None:
        self.choice = choice
        assert choice.screen is not None
        self.screen = choice.screen

    def scores(self, query: np.ndarray) -> np.ndarray:
        clock = self.choice.clock
        began = clock()
        scores = self.screen.scores(query)
        self.choice.record(query, clock() - began)
        return scores

    def error_bound(self, query_length: float) -> float:
        return self.screen.error_bound(query_length)
