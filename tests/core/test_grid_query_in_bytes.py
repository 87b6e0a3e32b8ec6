"""IQ1, IQ2, IQ3, IQ4_XS, Q2_K, Q3_K, TQ1_0 and TQ2_0 tables, and Q4_K and Q6_K tables too large for their copy, are
searched against the query held in signed bytes, with the margin that very query's rounding allows, and in one C call
from scan to ordered answer: the answers are still a float64 search's.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute force over its
numbers. Queries include runs whose numbers fall half way between two steps, runs of numbers a million times
smaller than the rest, runs all zero, and sizes far from 1; the tables are ``test_iq_grid_groups``'s random
blocks, ``test_fp4_ternary_groups``'s TQ1_0 rows (quantised by gguf) and its IQ3 random blocks, and
``test_lookup_groups``'s TQ2_0 and IQ4_XS rows, ``test_low_bit_groups``'s Q2_K and Q3_K rows and the K-type
quantisers' Q4_K and Q6_K rows, with near ties and rows pointing nowhere.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.search import neighbours as nb
from embedexplorer.core.search import stored_screen, stored_search

from ..gguf_fixture import float64_top_k, q4_k_blocks, write_gguf
from ..low_bit_fixture import low_bit_blocks
from . import test_fp4_ternary_groups as ternary
from . import test_iq_grid_groups as grid
from . import test_lookup_groups as lookup
from . import test_low_bit_groups as low_bit
from .grouped_rows import exact_cosines, varied_rows
from .test_iq_grid_groups import grouped_here
from .test_q6_k_groups import q6_k_blocks
from .test_quantised_scan import near_tie_blocks as stored_ties

TERNARY = (Q.TQ1_0, Q.IQ3_XXS, Q.IQ3_S)  # test_fp4_ternary_groups's rows and ties
LOOKUP = (Q.TQ2_0, Q.IQ4_XS)  # test_lookup_groups's rows and ties
AS_STORED = (Q.Q4_K, Q.Q6_K)  # blocks read as stored: test_quantised_scan's ties
LOW_BIT = (Q.Q2_K, Q.Q3_K)  # test_low_bit_groups's rows and ties
TYPES = [*grid.TYPES, *TERNARY, *LOOKUP, *LOW_BIT, *AS_STORED]
IDS = [t.name for t in TYPES]

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")

K = 12


@pytest.fixture(autouse=True)
def every_table_too_large_for_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Q4_K and Q6_K tables above the size of their copy's limit read their blocks as stored, against the query in
    bytes: here every table counts as above it (a Qwen2-7B-sized table is 307-447 MB)."""
    monkeypatch.setattr(stored_screen, "_GROUPS_MAX_BYTES", 0)


def screen_of(qtype: Q, count: int, width: int, seed: int):  # type: ignore[no-untyped-def]
    """Random stored rows of ``qtype``, their first pass as a table opens it, and gguf's numbers in float64."""
    if qtype in AS_STORED:  # varied rows (0 to 3 long, a row of zeros) by the tests' K-type quantisers
        stored = (q4_k_blocks if qtype == Q.Q4_K else q6_k_blocks)(varied_rows(count, width, seed))
        numbers = dequantize(stored, qtype).astype(np.float64)
        lengths = np.linalg.norm(numbers, axis=1)
        spread = stored_search.quantised_spread(stored, width, lengths) if qtype == Q.Q4_K else None
        kind = stored_search.QUANT_KINDS[qtype.name]
        screen = stored_search.StoredScreen(stored, kind, lengths, 0.0, quantised_width=width, spread=spread)
        return stored, screen, numbers
    if qtype in LOOKUP or qtype in LOW_BIT:  # lengths 0.3 to 3, a row of zeros
        rng = np.random.default_rng(seed)
        rows = rng.standard_normal((count, width)).astype(np.float32)
        rows *= np.exp(rng.uniform(-1.2, 1.1, (count, 1))).astype(np.float32)
        rows[count // 2] = 0.0
        if qtype in LOW_BIT:  # quantised by llama.cpp's rules (low_bit_fixture)
            stored = low_bit_blocks(rows, qtype, seed)
            return stored, *low_bit.screen_for(stored, qtype, width)
        stored = lookup.stored_rows(rows, qtype, seed)  # gguf's quantiser, or test_lookup_groups's IQ4_XS
        return stored, *lookup.screen_for(stored, qtype, width)
    if qtype in TERNARY:
        stored = ternary.stored_rows(qtype, count, width, seed)
        return stored, *ternary.screen_for(stored, qtype, width)
    stored = grid.blocks_of(qtype, count, width, seed)
    return stored, *grid.grouped_screen(stored, qtype, width)


def ties_of(qtype: Q, seed: int) -> np.ndarray:
    """3,000 or 3,001 rows: row 50, its copies 140 and 141, and 40 rows a step away from it (100-139)."""
    if qtype in LOOKUP:
        return lookup.near_tie_blocks(qtype, seed)
    if qtype in LOW_BIT:
        return low_bit.near_tie_blocks(qtype, seed)
    if qtype in AS_STORED:
        return stored_ties(qtype, seed)
    return ternary.near_tie_blocks(qtype, 3001, 512, seed) if qtype in TERNARY else grid.near_tie_blocks(qtype, seed)


def hard_queries(width: int, seed: int) -> list[np.ndarray]:
    """Queries whose rounding to bytes is hard to bound: a plain one; one whose numbers sit half way between two
    steps of their run; one with a run a million times smaller than the rest and a run all zero; the plain one at
    sizes far from 1 (below 2^64: larger numbers are scanned in float32)."""
    rng = np.random.default_rng(seed)
    plain = rng.standard_normal(width).astype(np.float32)
    halves = plain.copy()
    for start in range(0, width, 32):
        run = (rng.integers(-126, 126, 32) + 0.5) / 127.0
        run[0] = 1.0  # the run's largest: its step is 1/127
        halves[start : start + 32] = run * rng.uniform(0.1, 10)
    uneven = plain.copy()
    uneven[32:64] *= np.float32(1e-6)
    uneven[64:96] = 0.0
    return [plain, halves, uneven, plain * np.float32(1e-20), plain * np.float32(1e15)]


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
@pytest.mark.parametrize(("count", "width"), [(3, 256), (17, 1024), (1013, 768)])
def test_the_scan_in_bytes_is_within_the_margin_it_gives(qtype: Q, count: int, width: int) -> None:
    _, screen, numbers = screen_of(qtype, count, width, seed=count + width + 1)
    for query in hard_queries(width, seed=count):
        length = float(np.linalg.norm(query.astype(np.float64)))
        scores, margin = screen.bounded_scores(query, length)
        error = np.abs(scores - exact_cosines(numbers, screen.lengths, query))
        assert error.max() <= margin
        # Bytes, not 16-bit integers: the margin is wider than the 16-bit scan's bound, and it is needed.
        assert margin > screen.error_bound(length)
        if count > 1000 and qtype != Q.Q4_K:  # Q4_K's 16-bit bound carries its spread (2.3 here): far looser
            assert error.max() > screen.error_bound(length)


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_a_query_whose_rounding_points_along_a_row_meets_the_margin_nearly(qtype: Q) -> None:
    """Each number just under half a step from a whole step, on the side of one row's own sign: that row's score
    is off by nearly the margin itself (Cauchy-Schwarz nearly an equality), so a margin any smaller fails here."""
    width = 768
    _, screen, numbers = screen_of(qtype, 200, width, seed=9)
    target = 11
    sign = np.sign(numbers[target])
    rng = np.random.default_rng(10)
    step = np.float32(1.0) / np.float32(127.0)  # each run's largest is 1: its step
    whole = rng.integers(-120, 121, width).astype(np.float64)
    whole[::32] = 127.0  # the run's largest, 1 within float32's rounding of 127 steps
    query = ((whole + 0.499 * sign * (whole != 127.0)) * np.float64(step)).astype(np.float32)
    query[::32] = 1.0
    length = float(np.linalg.norm(query.astype(np.float64)))
    scores, margin = screen.bounded_scores(query, length)
    error = np.abs(scores - exact_cosines(numbers, screen.lengths, query))
    assert error.max() <= margin
    assert error[target] > 0.5 * margin


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
@pytest.mark.parametrize("size", [1e20, 1e36])
def test_a_query_too_large_for_bytes_is_scanned_in_float32_within_the_float_bound(qtype: Q, size: float) -> None:
    _, screen, numbers = screen_of(qtype, 100, 512, seed=4)
    query = np.random.default_rng(5).standard_normal(512).astype(np.float32) * np.float32(size)
    length = float(np.linalg.norm(query.astype(np.float64)))
    scores, margin = screen.bounded_scores(query, length)
    assert margin < screen.error_bound(length)  # no rounding of the query: the float scan's bound alone
    assert np.abs(scores - exact_cosines(numbers, screen.lengths, query)).max() <= margin


def step_by_step(table, query64: np.ndarray, exclude: list[int]) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """The search without its one-call path: the scan in bytes, then the candidates picked, scored, ordered."""
    screen, rows = table.stored_screen, table.rows
    return nb.search_bounded(
        rows.shape[0], query64, K, exclude, screen.bounded_scores, partial(screen.exact_scores, rows),
        partial(screen.best_of, rows),
    )  # fmt: skip


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_search_in_one_call_gives_the_step_by_step_answer_bit_for_bit(tmp_path: Path, qtype: Q) -> None:
    stored = ties_of(qtype, seed=int(qtype) + 30)
    with np.errstate(invalid="ignore", over="ignore"):
        numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        screen = table.stored_screen
        assert "against the query in single bytes" in table.search_method()  # what `info` says
        vector = numbers[50] + 0.01 * np.random.default_rng(3).standard_normal(numbers.shape[1])
        asked = [(screen.unit_rows(table.rows, row), [row]) for row in (50, 7, 2999)] + [(vector, [])]
        for query64, exclude in asked:
            length = float(np.linalg.norm(query64))
            whole = screen.whole_search(table.rows, query64.astype(np.float32), query64, length, K, exclude)
            assert whole is not None  # the one-call path ran
            ids, cosines = step_by_step(table, query64, exclude)
            np.testing.assert_array_equal(whole[0], ids)
            np.testing.assert_array_equal(whole[1].view(np.uint32), cosines.view(np.uint32))
            expected, _ = float64_top_k(numbers, query64, K, tuple(exclude))
            assert whole[0].tolist() == expected
    finally:
        table.close()


@grouped_here
def test_the_search_in_one_call_refuses_ids_outside_the_table_in_one_sentence(tmp_path: Path) -> None:
    stored = grid.blocks_of(Q.IQ1_S, 40, 256, seed=6)
    table = open_table(str(write_gguf(tmp_path / "IQ1_S.gguf", stored, Q.IQ1_S)))
    try:
        query64 = table.stored_screen.unit_rows(table.rows, 3)
        for wrong in ([40], [-1]):
            with pytest.raises(ValueError, match="^an excluded id is outside the table$"):
                table.stored_screen.whole_search(table.rows, query64.astype(np.float32), query64, 1.0, 5, wrong)
        assert [n.id for n in table.neighbours(3, k=39).neighbours] == float64_top_k(
            dequantize(stored, Q.IQ1_S).astype(np.float64), query64, 39, (3,)
        )[0]
    finally:
        table.close()


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_groups_scanned_by_another_build_answer_in_one_call_from_the_float_scan(
    tmp_path: Path, qtype: Q, other_build: str
) -> None:
    """A table opened where VNNI runs, searched after a switch to a build without it: the one call scans the stored
    blocks in float32 with the float bound, and answers as float64."""
    _quants.use_build("best")
    stored = ties_of(qtype, seed=int(qtype) + 40)
    with np.errstate(invalid="ignore", over="ignore"):
        numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        assert table.stored_screen.groups is not None or qtype in AS_STORED  # those: the blocks as stored
        _quants.use_build(other_build)
        assert "single bytes" not in table.search_method()
        for row in (50, 7):
            expected, _ = float64_top_k(numbers, numbers[row], K, (row,))
            assert [n.id for n in table.neighbours(row, k=K).neighbours] == expected
    finally:
        table.close()


def query_in_bytes(query: np.ndarray) -> np.ndarray:
    """The query the byte scans read, in float64: each run of 32 numbers as whole steps of its largest over 127
    (``quantise_query_bytes``: float32 arithmetic, rounding half to even)."""
    runs = query.astype(np.float32).reshape(-1, 32)
    largest = np.abs(runs).max(axis=1, keepdims=True)
    step = np.where(largest == 0, np.float32(1), largest / np.float32(127)).astype(np.float32)
    whole = np.clip(np.rint(runs / step), -127, 127)
    return (step.astype(np.float64) * whole).reshape(-1)


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_scan_in_bytes_is_the_rows_products_with_the_querys_bytes(qtype: Q) -> None:
    """Against the query's bytes themselves, each score is within float32's rounding of the float64 product: the
    margin's room for the query's rounding is not spent on the scan's own arithmetic (a scan off by a few steps
    of the query passes the margin, not this)."""
    _, screen, numbers = screen_of(qtype, 1013, 768, seed=31)
    for query in hard_queries(768, seed=32)[:3]:
        rounded = query_in_bytes(query)
        scores, _ = screen.bounded_scores(query, float(np.linalg.norm(query.astype(np.float64))))
        error = np.abs(scores - exact_cosines(numbers, screen.lengths, rounded))
        assert error.max() <= screen._bound(float(np.linalg.norm(rounded)), 0.0)
