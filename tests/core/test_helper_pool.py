"""The C passes' own helper threads (``scan_common.h``): the same scores with or without them, passes from
two threads at once, and a child made by fork, which has none of its parent's threads."""

from __future__ import annotations

import multiprocessing
import os
import threading

import numpy as np
import pytest

from embedexplorer.core.search.scan_threads import usable_cores

_scan = pytest.importorskip("embedexplorer.core.search._scan")

# 400 chunks of 512 rows (26 MB of bfloat16): long enough for a helper to wake and take some.
ROWS, WIDTH = 400 * 512, 64


@pytest.fixture(scope="module")
def rows_and_query() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(41)
    values = rng.standard_normal((ROWS, WIDTH)).astype(np.float32)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)
    return bits, rng.standard_normal(WIDTH).astype(np.float32)


def scores(rows: np.ndarray, query: np.ndarray, helpers: int) -> np.ndarray:
    out = np.empty(rows.shape[0], dtype=np.float32)
    _scan.bf16_scores(rows, query, out, np.array([0, 0, helpers], dtype=np.int64))
    return out


def test_two_counters_still_mean_this_thread_alone(rows_and_query) -> None:
    rows, query = rows_and_query
    out = np.empty(rows.shape[0], dtype=np.float32)
    _scan.bf16_scores(rows, query, out, np.zeros(2, dtype=np.int64))
    np.testing.assert_array_equal(out, scores(rows, query, 0))


@pytest.mark.skipif(usable_cores() < 2, reason="one core: a helper may never run during a pass")
def test_a_helper_takes_chunks_and_every_score_is_the_one_a_thread_alone_gives(rows_and_query) -> None:
    rows, query = rows_and_query
    alone = scores(rows, query, 0)
    _, before = _scan.helper_pool()
    for _ in range(50):  # a helper that wakes after the caller has taken every chunk takes none: try again
        np.testing.assert_array_equal(scores(rows, query, 1), alone)
        started, after = _scan.helper_pool()
        if after > before:
            break
    assert started >= 1
    assert after > before, "no helper thread took a chunk in 50 passes on a machine with two cores"


def test_more_helpers_than_the_pool_keeps_and_a_negative_count_are_harmless(rows_and_query) -> None:
    rows, query = rows_and_query
    alone = scores(rows, query, 0)
    np.testing.assert_array_equal(scores(rows, query, 64), alone)
    np.testing.assert_array_equal(scores(rows, query, -3), alone)
    assert _scan.helper_pool()[0] <= 3


@pytest.mark.parametrize("count", [1, 511, 512, 513, 3 * 512 + 5, 4 * 512, 7 * 512 + 1, 400 * 512])
def test_every_row_is_scored_however_the_chunks_split_into_runs(rows_and_query, count: int) -> None:
    """A helped pass splits its chunks into one run per thread, each taken from its start by its thread and
    from its end by the others once theirs are done (``take_runs``): no row may be left out, whether there are
    fewer chunks than threads, a last chunk cut short, or helpers that come late and find their run taken."""
    rows, query = rows_and_query
    part = np.ascontiguousarray(rows[:count])
    alone = scores(part, query, 0)
    for helpers in (1, 2, 3):
        for _ in range(5):
            out = np.full(count, np.nan, dtype=np.float32)  # a row no thread scores stays NaN
            _scan.bf16_scores(part, query, out, np.array([0, 0, helpers], dtype=np.int64))
            np.testing.assert_array_equal(out, alone)


def test_passes_from_two_threads_at_once_all_finish_with_the_right_scores(rows_and_query) -> None:
    rows, query = rows_and_query
    expected = scores(rows, query, 0)
    wrong: list[int] = []

    def many_passes(turn: int) -> None:
        for _ in range(12):  # one of the two has the helpers at a time; the other runs alone meanwhile
            if not np.array_equal(scores(rows, query, 1), expected):
                wrong.append(turn)

    threads = [threading.Thread(target=many_passes, args=(turn,)) for turn in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a pass never finished"
    assert wrong == []


def _child_pass(rows: np.ndarray, query: np.ndarray, answer) -> None:  # type: ignore[no-untyped-def]
    answer.send_bytes(scores(rows, query, 1).tobytes())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")
def test_a_child_made_by_fork_after_the_helpers_started_scans_without_them(rows_and_query) -> None:
    rows, query = rows_and_query
    expected = scores(rows, query, 1)  # the pool has its thread now, in this process only
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_child_pass, args=(rows, query, sending))
    child.start()
    got = receiving.recv_bytes() if receiving.poll(120) else None
    child.join(timeout=60)
    assert got is not None, "the child's pass never finished"
    assert child.exitcode == 0
    np.testing.assert_array_equal(np.frombuffer(got, dtype=np.float32), expected)


def test_where_the_c_modules_have_no_threads_a_pool_of_python_threads_shares_the_pass(
    rows_and_query, monkeypatch: pytest.MonkeyPatch
) -> None:
    from embedexplorer.core.search import scan_threads

    rows, query = rows_and_query
    counters: list[int] = []

    def bf16_pass(progress: np.ndarray) -> None:
        counters.append(progress.size)
        _scan.bf16_scores(rows, query, out, progress)

    out = np.empty(rows.shape[0], dtype=np.float32)
    scan_threads.shared_pass(rows.size, bf16_pass)  # the C helpers
    with_c_helpers = out.copy()
    monkeypatch.setattr(scan_threads, "C_HELPERS", False)  # as on Windows
    out[:] = np.nan
    scan_threads.shared_pass(rows.size, bf16_pass)
    np.testing.assert_array_equal(out, with_c_helpers)
    helpers = scan_threads.helpers_for(rows.size)
    for _ in range(1000):  # a Python helper that starts after the pass is done is not waited for: wait here
        if len(counters) == 2 + helpers:
            break
        threading.Event().wait(0.01)
    assert counters == [3] + [2] * (1 + helpers)  # then the caller and each Python helper with two counters
