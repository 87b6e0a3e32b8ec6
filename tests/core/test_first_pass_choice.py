"""The float32 table's first pass: chosen by medians at open, and dropped when the float32 pass wins in use."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from embedexplorer.core.search import bf16_rows
from embedexplorer.core.search import neighbours as nb


@pytest.mark.skipif(bf16_rows._scan is None, reason="the C scan is not built")
def test_a_scan_that_loses_in_use_is_dropped(minilm_table) -> None:  # type: ignore[no-untyped-def]
    unit = minilm_table.unit
    screen = bf16_rows.Bf16Rows(unit)
    choice = bf16_rows.ScreenChoice(screen, unit)
    plain_ids = [nb.top_k(unit, unit[i], 5, exclude=(i,))[0].tolist() for i in range(3)]

    class Slowed(bf16_rows.Bf16Rows):
        """The same rows, but each scan waits as a scan on a starved memory bus would."""

        def scores(self, query: np.ndarray) -> np.ndarray:
            time.sleep(0.02)
            return super().scores(query)

    slowed = Slowed.__new__(Slowed)
    slowed.__dict__.update(screen.__dict__)
    choice.screen = slowed
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

    choice = bf16_rows.ScreenChoice(bf16_rows.Bf16Rows(unit), unit)
    # A float32 pass that always takes longer than the scan: the choice holds.
    choice.unit = _SlowMatmul(unit)  # type: ignore[assignment]
    for row in range(bf16_rows.RECHECK_EVERY * 4):
        current = choice.current()
        assert current is not None
        current.scores(unit[row])


class _SlowMatmul:
    def __init__(self, unit: np.ndarray) -> None:
        self.unit = unit

    def __matmul__(self, query: np.ndarray) -> np.ndarray:
        time.sleep(0.05)
        return self.unit @ query


@pytest.mark.skipif(bf16_rows._scan is None, reason="the C scan is not built")
def test_scans_right_after_the_float32_check_are_not_counted(minilm_table) -> None:  # type: ignore[no-untyped-def]
    """BLAS's threads can still spin on the other core then: such a scan's time says nothing of the scan."""
    unit = minilm_table.unit
    choice = bf16_rows.ScreenChoice(bf16_rows.Bf16Rows(unit), unit)
    query = np.asarray(unit[0])
    for _ in range(bf16_rows.RECHECK_EVERY):  # the last of these also times the float32 pass
        choice.record(query, 0.004)
    assert len(choice.float32_times) == 1
    counted = len(choice.scan_times)
    choice.record(query, 0.004)
    assert len(choice.scan_times) == counted
    time.sleep(bf16_rows.BLAS_SPIN_SECONDS)
    choice.record(query, 0.004)
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
