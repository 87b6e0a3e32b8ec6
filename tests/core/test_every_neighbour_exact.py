"""Every token's neighbours (``nearest_of_all``) against an extended-precision brute force, on tables with ties.

The oracle is numpy in float64: every row scaled to length 1, all cosines at once, each
query's row sorted. Tables hold exact ties (copies of rows, and copies scaled by powers of
two, which have exactly the same cosines), near ties (clusters of rows whose cosines differ by about 1e-8),
a group of copies larger than the search keeps lists for, and a zero row. Cosines closer
than 1e-12 in float64 are the same cosine computed in another order: the oracle orders those
by id, as the rule says (ties go to the lower id).
"""

from __future__ import annotations

import numpy as np
import pytest

from embedexplorer.core.compare import every_neighbour
from embedexplorer.core.compare.every_neighbour import nearest_of_all


def tied_table(count: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((count, width)).astype(np.float32)
    at = rng.permutation(count)
    cursor = 0

    def take(n: int) -> np.ndarray:
        nonlocal cursor
        picked = at[cursor : cursor + n]
        cursor += n
        return picked

    # Exact ties: groups of copies, some scaled by 2, 0.5 or 4 (the same direction, exactly).
    for size in (2, 3, 12, 15):
        group = take(size)
        scales = np.array([1.0, 2.0, 0.5, 4.0], dtype=np.float32)[np.arange(size) % 4]
        rows[group] = rows[group[0]] * scales[:, None]
    # More copies of one row than a query keeps candidates for (it is searched on its own).
    rows[take(90)] = rows[at[0]]
    # Near ties: clusters whose cosines differ by about 1e-8, far inside the first pass's error bound.
    for _ in range(4):
        cluster = take(20)
        rows[cluster] = rows[cluster[0]] + 3e-4 * rng.standard_normal((20, width)).astype(np.float32)
    rows[take(1)] = 0.0
    return rows


def oracle(rows: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's k best by cosine (ties by lower id), and its whole row of cosines."""
    wide = rows.astype(np.longdouble)
    lengths = np.linalg.norm(wide, axis=1)
    unit = np.divide(wide, lengths[:, None], out=np.zeros_like(wide), where=lengths[:, None] > 0)
    cosines = unit[queries] @ unit.T
    cosines[np.arange(queries.size), queries] = -np.inf
    ids = np.empty((queries.size, k), dtype=np.int64)
    for line, scores in enumerate(cosines):
        ids[line] = np.argsort(-scores, kind="stable")[:k]
    return ids, np.take_along_axis(cosines, ids, 1), cosines


def oracle_ranks(cosines: np.ndarray, targets: np.ndarray) -> np.ndarray:
    target = cosines[np.arange(targets.size), targets]
    return 1 + (cosines > target[:, None]).sum(axis=1)


@pytest.fixture(params=["numpy", "torch"])
def product(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Tiles multiplied by numpy's BLAS or by torch's (the big-table path), on small tiles so there are many."""
    monkeypatch.setattr(every_neighbour, "TILE_BYTES", 4 * 700 * 700)
    return str(request.param)


@pytest.mark.parametrize(("count", "width", "k"), [(1500, 64, 10), (1203, 257, 5), (2100, 24, 1), (800, 9, 40)])
def test_every_row_equals_an_extended_precision_brute_force(product: str, count: int, width: int, k: int) -> None:
    rows = tied_table(count, width, seed=count + width)
    queries = np.arange(count)
    targets = (queries * 7 + 3) % count
    targets[targets == queries] = (queries[targets == queries] + 1) % count
    found = nearest_of_all(rows, queries, k, targets=targets, product=product)
    ids, cosines, every = oracle(rows, queries, k)
    np.testing.assert_array_equal(found.ids, ids)
    np.testing.assert_allclose(found.cosines, cosines.astype(np.float64), rtol=0, atol=1e-7)
    assert found.target_ranks is not None
    np.testing.assert_array_equal(found.target_ranks, oracle_ranks(every, targets))
    assert found.product == product and found.threads >= 1


def test_some_rows_in_any_order_equal_the_brute_force(product: str) -> None:
    rows = tied_table(1900, 48, seed=11)
    queries = np.random.default_rng(2).permutation(1900)[:555]
    targets = np.random.default_rng(3).integers(0, 1900, size=queries.size)
    targets[targets == queries] = (queries[targets == queries] + 1) % 1900
    found = nearest_of_all(rows, queries, 10, targets=targets, product=product)
    ids, _, every = oracle(rows, queries, 10)
    np.testing.assert_array_equal(found.ids, ids)
    assert found.target_ranks is not None
    np.testing.assert_array_equal(found.target_ranks, oracle_ranks(every, targets))


def test_every_row_in_a_shuffled_order_is_the_symmetric_search(product: str) -> None:
    rows = tied_table(1300, 32, seed=5)
    queries = np.random.default_rng(9).permutation(1300)
    found = nearest_of_all(rows, queries, 7, product=product)
    ids, _, _ = oracle(rows, queries, 7)
    np.testing.assert_array_equal(found.ids, ids)


@pytest.mark.parametrize(("count", "width", "k"), [(1500, 64, 10), (800, 9, 40)])
def test_without_the_c_loop_the_answers_are_the_same(
    monkeypatch: pytest.MonkeyPatch, count: int, width: int, k: int
) -> None:
    """An install built without a C compiler still compares, with the same neighbours and ranks."""
    monkeypatch.setattr(every_neighbour, "_every", None)
    monkeypatch.setattr("embedexplorer.core.compare.plain_nearest.QUERY_BLOCK", 97)  # blocks end mid-table
    rows = tied_table(count, width, seed=count + width)
    queries = np.random.default_rng(4).permutation(count)
    targets = (queries * 7 + 3) % count
    targets[targets == queries] = (queries[targets == queries] + 1) % count
    found = nearest_of_all(rows, queries, k, targets=targets)
    ids, cosines, every = oracle(rows, queries, k)
    np.testing.assert_array_equal(found.ids, ids)
    np.testing.assert_allclose(found.cosines, cosines.astype(np.float64), rtol=0, atol=1e-7)
    assert found.target_ranks is not None
    np.testing.assert_array_equal(found.target_ranks, oracle_ranks(every, targets))
    assert "no C loop" in found.product


def test_ranks_of_targets_among_a_crowd_of_near_ties_equal_the_brute_force(product: str) -> None:
    """A target whose score hundreds of columns share to within the screen's error (as A's nearest in an
    unrelated table B sits among the bulk of the scores): each of them is scored exactly, none is missed."""
    rows = tied_table(1500, 64, seed=21)
    rng = np.random.default_rng(8)
    crowd = rng.permutation(1500)[:300]
    base = rows[crowd[0]].copy()
    # 300 rows 1e-4 apart around one direction: for most queries their cosines differ by about 1e-8 to 1e-6,
    # inside the screen's error, yet far apart in float64.
    rows[crowd] = base + 1e-4 * rng.standard_normal((crowd.size, 64)).astype(np.float32)
    queries = np.arange(1500)
    targets = crowd[rng.integers(0, crowd.size, size=queries.size)]
    targets[targets == queries] = np.where(queries[targets == queries] == crowd[0], crowd[1], crowd[0])
    found = nearest_of_all(rows, queries, 10, targets=targets, product=product)
    ids, _, every = oracle(rows, queries, 10)
    np.testing.assert_array_equal(found.ids, ids)
    assert found.target_ranks is not None
    np.testing.assert_array_equal(found.target_ranks, oracle_ranks(every, targets))
