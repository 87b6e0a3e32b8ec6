"""The float32 table's first pass: chosen by medians at open, and dropped when the float32 pass wins in use."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from embedexplorer.core.search import bf16_rows
from embedexplorer.core.search import neighbours as nb


class _Clock:
    """A clock that moves only when a pass says how long it took: the choice's decisions are then
    the same on a quiet and on a busy machine (the real passes still run and give the answers)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class _SlowedScan:
    """The real bfloat16 scan, taking ``seconds`` on the choice's clock (a scan on a starved memory bus)."""

    def __init__(self, screen: bf16_rows.Bf16Rows, clock: _Clock, seconds: float) -> None:
        self.screen, self.clock, self.seconds = screen, clock, seconds

    def scores(self, query: np.ndarray) -> np.ndarray:
        self.clock.advance(self.seconds)
        return self.screen.scores(query)

    def error_bound(self, query_length: float) -> float:
        return self.screen.error_bound(query_length)


class _SlowedMatmul:
    """The real float32 pass, taking ``seconds`` on the choice's clock."""

    def __init__(self, unit: np.ndarray, clock: _Clock, seconds: float) -> None:
        self.unit, self.clock, self.seconds = unit, clock, seconds

    def __matmul__(self, query: np.ndarray) -> np.ndarray:
        self.clock.advance(self.seconds)
        return self.unit @ query


@pytest.mark.skipif(bf16_rows._scan is None, reason="the C scan is not built")
def test_a_scan_that_loses_in_use_is_dropped(minilm_table) -> None:  # type: ignore[no-untyped-def]
    unit = minilm_table.unit
    clock = _Clock()
    choice = bf16_rows.ScreenChoice(None, _SlowedMatmul(unit, clock, 0.004), clock=clock)  # type: ignore[arg-type]
    choice.screen = _SlowedScan(bf16_rows.Bf16Rows(unit), clock, 0.020)  # type: ignore[assignment]
    plain_ids = [nb.top_k(unit, unit[i], 5, exclude=(i,))[0].tolist() for i in range(3)]
    used = 0
    for query_number in range(bf16_rows.RECHECK_EVERY * 4):
        current = choice.current()
        if current is None:
            break
        used += 1
        row = query_number % 3
        ids, _ = nb.top_k(unit, unit[row], 5, exclude=(row,), screen=current)
        assert ids.tolist() == plain_ids[row]  # the answer never depends on the pass
    # Three float32 timings are needed before the medians are compared.
    assert used == 3 * bf16_rows.RECHECK_EVERY
    assert choice.current() is None


@pytest.mark.skipif(bf16_rows._scan is None, reason="the C scan is not built")
def test_a_scan_that_keeps_winning_stays(minilm_table) -> None:  # type: ignore[no-untyped-def]
    unit = minilm_table.unit
    clock = _Clock()
    choice = bf16_rows.ScreenChoice(None, _SlowedMatmul(unit, clock, 0.050), clock=clock)  # type: ignore[arg-type]
    choice.screen = _SlowedScan(bf16_rows.Bf16Rows(unit), clock, 0.004)  # type: ignore[assignment]
    for row in range(bf16_rows.RECHECK_EVERY * 4):
        current = choice.current()
        assert current is not None
        current.scores(unit[row])
    # The float32 pass was timed every RECHECK_EVERY-th query, four times, and lost each time.
    assert len(choice.float32_times) == 4


@pytest.mark.skipif(bf16_rows._scan is None, reason="the C scan is not built")
def test_scans_right_after_the_float32_check_are_not_counted(minilm_table) -> None:  # type: ignore[no-untyped-def]
    """BLAS's threads can still spin on the other core then: such a scan's time says nothing of the scan."""
    unit = minilm_table.unit
    clock = _Clock()
    slowed = _SlowedMatmul(unit, clock, 0.004)
    choice = bf16_rows.ScreenChoice(bf16_rows.Bf16Rows(unit), slowed, clock=clock)  # type: ignore[arg-type]
    query = np.asarray(unit[0])
    for _ in range(bf16_rows.RECHECK_EVERY):  # the last of these also times the float32 pass
        clock.advance(0.004)
        choice.record(query, 0.004)
    assert len(choice.float32_times) == 1
    counted = len(choice.scan_times)
    clock.advance(0.004)
    choice.record(query, 0.004)  # a scan that began as the float32 pass ended
    assert len(choice.scan_times) == counted
    clock.advance(bf16_rows.BLAS_SPIN_SECONDS + 0.004)
    choice.record(query, 0.004)  # a scan that began after BLAS's threads went to sleep
    assert len(choice.scan_times) == min(counted + 1, bf16_rows.RECHECK_SAMPLES) and choice.scan_times[-1] == 0.004


def test_the_package_lets_openblas_threads_sleep_unless_the_user_chose() -> None:
    code = "import os, embedexplorer, numpy; print(os.environ['OPENBLAS_THREAD_TIMEOUT'])"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    ours = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    theirs = subprocess.run(
        [sys.executable, "-c", code], env={**env, "OPENBLAS_THREAD_TIMEOUT": "20"}, capture_output=True, text=True,
        check=True,
    )
    assert (ours.stdout.strip(), theirs.stdout.strip()) == ("4", "20")
