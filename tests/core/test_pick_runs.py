"""The C pick of candidates (``pick_core.h``) against numpy's full sort, where its runs of 16 and 64 begin and end.

The pick skips whole runs of scores below the bar and, in a run that holds some at or above it, looks only at
those: a score at a run's first or last place, a table whose length is not a whole number of runs (the last
scores are read one at a time), a NaN anywhere, and a bar that rises inside a run are where it could go wrong.
"""

from __future__ import annotations

import numpy as np
import pytest

pick = pytest.importorskip("embedexplorer.core.search._pick", reason="the C pick was not built here")


def expected_ids(scores: np.ndarray, k: int, window: float) -> np.ndarray:
    """Every id whose score is at or above the k-th best less ``window``, as float32 arithmetic has the bar."""
    kth = np.sort(scores)[::-1][k - 1]
    return np.flatnonzero(scores >= kth - np.float32(window))


def picked_ids(scores: np.ndarray, k: int, window: float) -> np.ndarray | int:
    out = np.empty(scores.shape[0], dtype=np.int64)
    found = pick.candidates(scores, k, window, out)
    return found if found < 0 else out[:found]


# Lengths around whole runs of 16 and 64, and one score placed at each edge of a run.
LENGTHS = (11, 63, 64, 65, 127, 128, 129, 1000, 4096, 4099, 50_257)


@pytest.mark.parametrize("count", LENGTHS)
@pytest.mark.parametrize("k", (1, 3, 10))
def test_the_best_scores_are_found_at_every_place_of_a_run(count: int, k: int) -> None:
    if k > count:
        pytest.skip("fewer scores than k")
    rng = np.random.default_rng(count * 31 + k)
    base = (rng.random(count, dtype=np.float32) * 0.5).astype(np.float32)
    places = {p for p in (0, 15, 16, 63, 64, 65, count - 64, count - 17, count - 16, count - 1) if 0 <= p < count}
    for place in sorted(places):
        scores = base.copy()
        scores[place] = 0.9  # the best, alone
        ids = picked_ids(scores, k, 0.0)
        np.testing.assert_array_equal(ids, expected_ids(scores, k, 0.0), err_msg=f"best at {place}")
        assert place in ids
        # A window that lets a neighbour of the best in, and equal scores (ties) around it.
        scores[max(0, place - 1)] = np.float32(0.9) - np.float32(1e-3)
        np.testing.assert_array_equal(picked_ids(scores, k, 2e-3), expected_ids(scores, k, 2e-3))
        scores[min(count - 1, place + 1)] = 0.9
        np.testing.assert_array_equal(picked_ids(scores, k, 0.0), expected_ids(scores, k, 0.0))


@pytest.mark.parametrize("count", LENGTHS)
def test_a_nan_anywhere_is_reported_not_skipped(count: int) -> None:
    """-1 (Python decides) wherever the NaN sits: in a run skipped as below the bar, in a run with hits, in the tail."""
    rng = np.random.default_rng(count)
    base = rng.standard_normal(count).astype(np.float32)
    base[count // 3] = 10.0  # a bar that is high early, so later runs are skipped whole
    for place in sorted({p for p in (count - 1, count // 2, count - 40, 64, 100, 1) if 0 <= p < count}):
        scores = base.copy()
        scores[place] = np.nan
        assert picked_ids(scores, 1, 0.0) == -1, f"NaN at {place} of {count}"


def test_a_bar_that_rises_inside_a_run_keeps_only_what_reaches_the_final_bar() -> None:
    """Rising scores: every run holds new bests, each raising the bar for the rest of its run."""
    for count in (64, 200, 4099):
        scores = np.linspace(-1.0, 1.0, count, dtype=np.float32)
        for k, window in ((1, 0.0), (5, 0.0), (5, 0.05), (17, 0.3)):
            np.testing.assert_array_equal(picked_ids(scores, k, window), expected_ids(scores, k, window))
        # And interleaved: a low score after each high one, so a run's later scores fall below a bar it raised.
        zigzag = scores.copy()
        zigzag[1::2] = -zigzag[1::2]
        np.testing.assert_array_equal(picked_ids(zigzag, 7, 0.01), expected_ids(zigzag, 7, 0.01))


def test_infinities_and_excluded_rows_are_ordinary_scores() -> None:
    rng = np.random.default_rng(7)
    scores = rng.standard_normal(5_000).astype(np.float32)
    scores[[0, 63, 64, 4_999]] = -np.inf  # left out of the answer
    scores[[128, 4_990]] = np.inf
    for k in (1, 2, 3, 10):
        np.testing.assert_array_equal(picked_ids(scores, k, 0.01), expected_ids(scores, k, 0.01))
