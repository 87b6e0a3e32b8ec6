"""Several queries scored in one pass over the rows: the C loop against float64 products, and the answers it gives."""

from __future__ import annotations

import os

import numpy as np
import pytest

from embedexplorer import open_table
from embedexplorer.core.search import many_scores
from embedexplorer.core.search import neighbours as nb
from embedexplorer.core.search.bf16_rows import Bf16Rows
from embedexplorer.core.search.scan_threads import SPLIT_ABOVE, THREADS_VARIABLE, helpers_for, own_thread_only

needs_vector_build = pytest.mark.skipif(not many_scores.vectorised(), reason="no vectorised C build here")


def widen(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def bound(rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Per score: float32 rounding of a sum of products, relative to the sum of the products' sizes."""
    sizes = np.abs(queries.astype(np.float64)) @ np.abs(rows.astype(np.float64)).T
    return nb.accumulation_error(rows.shape[1]) * sizes + 1e-30


# Shapes the loop's blocks do not divide evenly: odd row counts, widths not a multiple of 8,
# query counts around its four per block, and a table wider than its prefetch distance.
SHAPES = [(1, 1, 1), (7, 13, 5), (3, 768, 6), (513, 9, 4), (2049, 384, 13), (40, 8, 3), (17, 31, 2), (5, 1000, 9)]


@pytest.mark.parametrize(("count", "width", "queries"), SHAPES)
def test_float32_rows_score_within_the_float32_bound_of_the_exact_product(count, width, queries) -> None:
    rng = np.random.default_rng(count * 31 + width)
    rows = rng.standard_normal((count, width)).astype(np.float32)
    query = rng.standard_normal((queries, width)).astype(np.float32) * 7
    got = many_scores.scores_many(rows, query)
    exact = query.astype(np.float64) @ rows.astype(np.float64).T
    assert got.shape == (queries, count) and got.dtype == np.float32
    assert np.all(np.abs(got - exact) <= bound(rows, query))


@pytest.mark.parametrize(("count", "width", "queries"), SHAPES)
def test_bfloat16_rows_score_as_their_widened_float32_numbers(count, width, queries) -> None:
    rng = np.random.default_rng(count * 17 + width)
    # Numbers of many sizes, as bfloat16 bits (the top half of their float32 bits).
    values = rng.standard_normal((count, width)) * 10.0 ** rng.uniform(-6, 6, (count, width))
    bits = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    query = rng.standard_normal((queries, width)).astype(np.float32)
    got = many_scores.scores_many(bits, query, bf16_bits=True)
    wide = widen(bits)
    exact = query.astype(np.float64) @ wide.astype(np.float64).T
    assert np.all(np.abs(got - exact) <= bound(wide, query))


def test_without_the_c_loop_numpy_gives_the_same_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((301, 40)).astype(np.float32)
    bits = rng.integers(0, 1 << 14, size=(301, 40), dtype=np.uint16)
    query = rng.standard_normal((6, 40)).astype(np.float32)
    with_loop = many_scores.scores_many(rows, query), many_scores.scores_many(bits, query, bf16_bits=True)
    monkeypatch.setattr(many_scores, "_scan", None)
    assert not many_scores.vectorised()
    without = many_scores.scores_many(rows, query), many_scores.scores_many(bits, query, bf16_bits=True)
    for a, b, r in zip(with_loop, without, (rows, widen(bits)), strict=True):
        assert np.all(np.abs(a.astype(np.float64) - b) <= 2 * bound(r, query))


def test_rows_and_queries_that_do_not_fit_are_refused() -> None:
    rows = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match="do not fit"):
        many_scores.scores_many(rows, np.zeros((2, 7), np.float32))
    with pytest.raises(ValueError, match="uint16"):
        many_scores.scores_many(rows, np.zeros((2, 8), np.float32), bf16_bits=True)
    with pytest.raises(ValueError, match="float32"):
        many_scores.scores_many(rows.astype(np.float64), np.zeros((2, 8), np.float32))
    assert many_scores.scores_many(np.zeros((0, 8), np.float32), np.ones((3, 8), np.float32)).shape == (3, 0)


@needs_vector_build
def test_helper_threads_and_one_thread_give_the_same_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    rows = rng.standard_normal((SPLIT_ABOVE // 256 + 3, 256)).astype(np.float32)  # big enough to share
    query = rng.standard_normal((5, 256)).astype(np.float32)
    helpers = helpers_for(rows.size)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert helpers == min(4, cores) - 1
    assert helpers_for(1000) == 0  # a small pass is quicker alone
    shared = many_scores.scores_many(rows, query)
    with own_thread_only():
        assert helpers_for(rows.size) == 0
        alone = many_scores.scores_many(rows, query)
        with own_thread_only(False):  # the model is done: the search may take every core again
            assert helpers_for(rows.size) == helpers
        assert helpers_for(rows.size) == 0
    assert helpers_for(rows.size) == helpers
    np.testing.assert_array_equal(shared, alone)  # each row's sums are the same whoever computes them
    monkeypatch.setenv(THREADS_VARIABLE, "1")  # the cap a busy machine's user may set
    assert helpers_for(rows.size) == 0
    np.testing.assert_array_equal(many_scores.scores_many(rows, query), shared)
    monkeypatch.setenv(THREADS_VARIABLE, "none")  # not a number: no cap
    assert helpers_for(rows.size) == helpers


@pytest.fixture(scope="module", params=["minilm", "gpt2"])
def table(request):  # type: ignore[no-untyped-def]
    return request.getfixturevalue(f"{request.param}_table")


def test_many_vectors_through_the_bfloat16_rows_find_the_exact_float64_nearest(table) -> None:
    # A token after each layer: vectors of every length, a row itself, and one pointing nowhere.
    unit64 = np.asarray(table.unit, dtype=np.float64)
    rng = np.random.default_rng(11)
    lengths = rng.uniform(0.01, 300, (9, 1))
    vectors = (rng.standard_normal((9, table.width)) * lengths).astype(np.float32)
    vectors[2] = table.row(table.query(" Paris" if table.width == 768 else "paris").id)
    vectors[7] = 0.0
    screen = table.many_screen
    if many_scores.vectorised():
        assert isinstance(screen, Bf16Rows)
    answers = table.neighbours_of_vectors(vectors, k=10)
    for vector, answer in zip(vectors, answers, strict=True):
        if not vector.any():
            assert [n.cosine for n in answer.neighbours] == [0.0] * 10
            continue
        scores = unit64 @ vector.astype(np.float64) / np.linalg.norm(vector.astype(np.float64))
        expected = np.lexsort((np.arange(scores.size), -scores))[:10]
        assert [n.id for n in answer.neighbours] == expected.tolist()
        np.testing.assert_allclose([n.cosine for n in answer.neighbours], scores[expected], atol=1e-6)
    assert answers[2].neighbours[0].cosine == pytest.approx(1.0, abs=1e-6)


@needs_vector_build
def test_the_bfloat16_copy_for_many_vectors_is_counted_in_the_table_memory(gpt2_folder, monkeypatch) -> None:
    # Single queries read float32 here (as where the scan loses to BLAS): many vectors get a copy of their own.
    monkeypatch.setenv("EMBEDEXPLORER_SCAN", "off")
    table = open_table(str(gpt2_folder))
    assert table.screen is None
    before = table.memory_bytes()
    screen = table.many_screen
    assert screen is not None
    assert screen.bits.shape == table.unit.shape
    assert table.memory_bytes() == before + screen.bits.nbytes

