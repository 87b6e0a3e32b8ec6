"""The bfloat16 screening pass: its rounding, its error bound, and answers equal to a full exact scan."""

from __future__ import annotations

import os

import numpy as np
import pytest

from embedexplorer.core.common.errors import QueryError
from embedexplorer.core.search import bf16_rows
from embedexplorer.core.search import neighbours as nb

needs_scan = pytest.mark.skipif(bf16_rows.kernel_instructions() is None, reason="the C scan was not built here")


def widen(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def round_to_bf16(values: np.ndarray) -> np.ndarray:
    """The reference rounding the C module is checked against: nearest bfloat16, ties to even, as uint16 bits."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    # Adding just under half of the dropped part, plus its last kept bit, rounds to nearest-even.
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)


def length(vector: np.ndarray) -> float:
    return float(np.linalg.norm(vector.astype(np.float64)))


def exact_top(unit64: np.ndarray, query: np.ndarray, k: int, exclude: tuple[int, ...]) -> np.ndarray:
    """The reference: float64 scores of every row, best first, ties by id."""
    scores = unit64 @ query.astype(np.float64)
    scores[list(exclude)] = -np.inf
    return np.lexsort((np.arange(scores.size), -scores))[:k]


@pytest.fixture(scope="module", params=["minilm", "gpt2"])
def table(request):  # type: ignore[no-untyped-def]
    return request.getfixturevalue(f"{request.param}_table")


def test_the_scan_is_built_where_ci_asks_for_it() -> None:
    # CI sets this, so a build that silently lost its compiler fails there instead of going slow.
    if os.environ.get("EMBEDEXPLORER_REQUIRE_SCAN") != "1":
        pytest.skip("EMBEDEXPLORER_REQUIRE_SCAN is not set")
    assert bf16_rows.kernel_instructions() in {"avx512f", "avx2", "plain"}


def test_the_reference_rounding_is_to_the_nearest_bfloat16_ties_to_even() -> None:
    rng = np.random.default_rng(0)
    values = np.concatenate(
        [
            rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000),
            [1.0 + 2**-8, 1.0 + 3 * 2**-8, -(1.0 + 2**-8), 0.0, -0.0, 1e-40, 3e38],
        ]
    ).astype(np.float32)
    rounded = round_to_bf16(values)
    exact = values.astype(np.float64)
    below = widen(values.view(np.uint32) >> 16)  # truncation: the bfloat16 nearer zero
    above = widen((values.view(np.uint32) >> 16) + 1)
    error = np.abs(widen(rounded) - exact)
    assert np.all(error <= np.minimum(np.abs(below - exact), np.abs(above - exact)))
    # Relative 2^-8 for normal numbers; subnormals are off by at most half bfloat16's smallest step.
    assert np.all(error <= 2.0**-8 * np.abs(exact) + 2.0**-134)
    # Exact halves go to the even neighbour: 1 + 2^-8 down to 1, 1 + 3 * 2^-8 up to 1 + 2^-6.
    assert widen(rounded[-7:-4]).tolist() == [1.0, 1.0 + 2**-6, -1.0]


@needs_scan
def test_the_c_rounding_matches_the_reference_rounding(table) -> None:
    rows = np.asarray(table.unit[:5000])
    assert np.array_equal(bf16_rows.Bf16Rows(rows).bits, round_to_bf16(rows))


@needs_scan
def test_every_screened_score_is_within_the_bound(table) -> None:
    screen = bf16_rows.Bf16Rows(table.unit)
    unit64 = table.unit.astype(np.float64)
    rng = np.random.default_rng(1)
    queries = [table.unit[i] for i in rng.integers(0, table.unit.shape[0], 10)]
    # Queries of any length: an analogy's is near 1.7, and scaling must scale the bound.
    queries += [rng.standard_normal(table.width).astype(np.float32) * scale for scale in (0.01, 1.0, 250.0)]
    for query in queries:
        error = np.abs(screen.scores(query) - unit64 @ query.astype(np.float64))
        bound = screen.error_bound(length(query))
        assert error.max() <= bound
        assert error.max() > bound / 1000, "a scan that reads float32 after all would not be off at all"


@needs_scan
def test_screened_neighbours_equal_an_exact_full_scan(table) -> None:
    screen = bf16_rows.Bf16Rows(table.unit)
    unit64 = table.unit.astype(np.float64)
    rng = np.random.default_rng(2)
    for row in rng.integers(0, table.unit.shape[0], 40).tolist():
        for k in (1, 8, 60):
            ids, cosines = nb.top_k(table.unit, table.unit[row], k, exclude=(row,), screen=screen)
            assert ids.tolist() == exact_top(unit64, table.unit[row], k, (row,)).tolist()
            plain_ids, plain_cosines = nb.top_k(table.unit, table.unit[row], k, exclude=(row,))
            assert np.array_equal(ids, plain_ids) and np.array_equal(cosines, plain_cosines)
            norm = np.linalg.norm(unit64[row])
            assert np.allclose(cosines, unit64[ids] @ unit64[row] / norm, atol=1e-6)


@needs_scan
def test_duplicate_rows_tie_in_id_order_with_and_without_the_screen() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((3000, 96)).astype(np.float32)
    rows[[2500, 40, 1700]] = rows[7] * np.float32(3.0)  # same direction as row 7, different lengths
    unit = nb.unit_rows(rows)
    screen = bf16_rows.Bf16Rows(unit)
    for used in (screen, None):
        ids, cosines = nb.top_k(unit, unit[7], 4, exclude=(7,), screen=used)
        assert ids[:3].tolist() == [40, 1700, 2500]
        assert cosines[0] == cosines[1] == cosines[2]


@needs_scan
def test_a_table_big_enough_for_helper_threads_is_scored_whole() -> None:
    rng = np.random.default_rng(4)
    unit = nb.unit_rows(rng.standard_normal((12_001, 200)).astype(np.float32))  # above the split size
    screen = bf16_rows.Bf16Rows(unit)
    query = unit[11_999]
    scores = screen.scores(query)
    assert np.abs(scores - unit.astype(np.float64) @ query).max() <= screen.error_bound(length(query))
    assert nb.top_k(unit, query, 3, screen=screen)[0][0] == 11_999


@needs_scan
def test_threads_sharing_one_scan_fill_every_score_once() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from embedexplorer.core.search import _scan
    rng = np.random.default_rng(5)
    unit = nb.unit_rows(rng.standard_normal((5_000, 64)).astype(np.float32))
    screen = bf16_rows.Bf16Rows(unit)
    query = unit[4_321]
    out = np.full(unit.shape[0], np.nan, dtype=np.float32)
    progress = np.zeros(2, dtype=np.int64)
    with ThreadPoolExecutor(4) as pool:
        for job in [pool.submit(_scan.bf16_scores, screen.bits, query, out, progress) for _ in range(4)]:
            job.result()
    chunks = -(-unit.shape[0] // 512)
    assert progress[1] == chunks  # every chunk finished exactly once
    assert np.isfinite(out).all()
    assert np.array_equal(out, screen.scores(query))


@needs_scan
def test_the_scan_refuses_buffers_that_do_not_fit() -> None:
    from embedexplorer.core.search import _scan
    rows = np.zeros((10, 8), dtype=np.uint16)
    query = np.zeros(8, dtype=np.float32)
    out = np.zeros(10, dtype=np.float32)
    progress = np.zeros(2, dtype=np.int64)
    with pytest.raises(ValueError, match="len"):
        _scan.bf16_scores(rows, np.zeros(7, dtype=np.float32), out, progress)
    with pytest.raises(ValueError, match="len"):
        _scan.bf16_scores(rows, query, np.zeros(11, dtype=np.float32), progress)
    for counters in (1, 4):  # two (claimed, finished), or three (and helpers wanted)
        with pytest.raises(ValueError, match="progress"):
            _scan.bf16_scores(rows, query, out, np.zeros(counters, dtype=np.int64))
    with pytest.raises(ValueError, match="uint16"):
        _scan.bf16_round(np.zeros(4, dtype=np.float32), np.zeros(3, dtype=np.uint16))
    with pytest.raises(TypeError):
        _scan.bf16_scores(rows, query, out.tobytes(), progress)  # bytes cannot be written


def test_rows_with_nan_or_infinity_point_nowhere() -> None:
    rows = np.ones((5, 4), dtype=np.float32)
    rows[1, 2] = np.nan
    rows[3, 0] = np.inf
    unit = nb.unit_rows(rows)
    assert np.isfinite(unit).all()
    assert not unit[1].any() and not unit[3].any()
    ids, cosines = nb.top_k(unit, unit[0], 4, exclude=(0,))
    assert ids.tolist() == [2, 4, 1, 3]
    assert cosines.tolist() == pytest.approx([1.0, 1.0, 0.0, 0.0])


def test_a_zero_query_gets_the_first_rows_with_cosine_zero(minilm_table) -> None:
    zero = np.zeros(minilm_table.width, dtype=np.float32)
    result = minilm_table.neighbours_of_vector(zero, k=5, exclude=(1, 3))
    assert [n.id for n in result.neighbours] == [0, 2, 4, 5, 6]
    assert {n.cosine for n in result.neighbours} == {0.0}


def test_a_vector_with_nan_is_refused_in_words(minilm_table) -> None:
    vector = np.ones(minilm_table.width, dtype=np.float32)
    vector[5] = np.nan
    with pytest.raises(QueryError, match="finite"):
        minilm_table.neighbours_of_vector(vector)


def test_the_screen_can_be_switched_off(minilm_table, monkeypatch) -> None:
    monkeypatch.setenv("EMBEDEXPLORER_SCAN", "off")
    assert bf16_rows.screen_for(minilm_table.unit) is None


@pytest.mark.parametrize("seed", range(6))
def test_the_candidates_are_every_score_within_the_window_of_the_kth_best(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Picked in C (``_pick``) or by numpy's partitions: the ids whose score is at or above the k-th best
    (by numpy's full sort) less the window, with ties, repeats, infinities and excluded rows (-inf)."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(20, 60_000))
    scores = rng.standard_normal(count).astype(np.float32)
    if seed % 2:
        scores = np.round(scores * 8) / 8  # many exact ties at the bar
    scores[rng.integers(0, count, 5)] = -np.inf
    scores[rng.integers(0, count, 2)] = np.inf if seed == 3 else scores[0]
    for k in (1, 10, 17):
        for margin in (0.0, 1e-4, 0.05):
            kth = np.sort(scores)[::-1][k - 1]
            expected = np.flatnonzero(scores >= kth - np.float32(2 * margin))
            np.testing.assert_array_equal(nb._candidates(scores, k, margin), expected)
        # Rising scores raise the bar at every run (the C pass keeps far more ids on the way than it
        # returns); falling ones set it at once.
        for ordered in (np.sort(scores), np.sort(scores)[::-1].copy()):
            kth = np.sort(ordered)[::-1][k - 1]
            expected = np.flatnonzero(ordered >= kth - np.float32(2 * 1e-4))
            np.testing.assert_array_equal(nb._candidates(ordered, k, 1e-4), expected)
    with_nan = scores.copy()
    with_nan[count // 2] = np.nan  # C gives way to numpy's partitions: the same ids as without C
    picked = nb._candidates(with_nan, 10, 0.0)
    monkeypatch.setattr(nb, "_pick", None)
    np.testing.assert_array_equal(picked, nb._candidates(with_nan, 10, 0.0))
