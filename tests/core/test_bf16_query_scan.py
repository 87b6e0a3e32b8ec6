"""bfloat16 rows scanned against the query rounded to bfloat16 (AVX512_BF16's vdpbf16ps, ``bf16_query_dot.h``).

The oracle is a float64 search over the stored numbers: every score lies within the margin the scan gives for its
query, and the neighbours equal float64's, near ties included.  Queries and tables the scan cannot take keep the
float32 scan, with the same answers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from embedexplorer import open_table
from embedexplorer.core.search import _scan, stored_search
from embedexplorer.core.search.neighbours import search_bounded

from ..gguf_fixture import float64_top_k
from .test_half_precision import half_folder
from .test_quantised_scan import _rows_before_a_closed_page

needs_bf16 = pytest.mark.skipif(not _scan.BF16_QUERY, reason="this CPU has no AVX512_BF16")


def _bf16_rows(count: int, width: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random bfloat16 rows as their bits and as float64."""
    rows = torch.randn(count, width, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)
    return rows.view(torch.int16).numpy().view(np.uint16).copy(), rows.to(torch.float64).numpy()


def _screen(bits: np.ndarray, numbers: np.ndarray) -> stored_search.StoredScreen:
    return stored_search.StoredScreen(bits, 0, np.linalg.norm(numbers, axis=1), 0.0)


def _within_margin(screen: stored_search.StoredScreen, numbers: np.ndarray, query: np.ndarray) -> float:
    """The scan's scores against float64's: each within the margin it gave; returns that margin over |query|."""
    length = float(np.linalg.norm(query.astype(np.float64)))
    scores, margin = screen.bounded_scores(query, length)
    lengths = np.linalg.norm(numbers, axis=1)
    exact = numbers @ query.astype(np.float64) / np.where(lengths > 0, lengths, 1.0)
    assert np.abs(scores.astype(np.float64) - exact).max() <= margin
    return margin / length


@needs_bf16
@pytest.mark.parametrize("width", [7, 32, 33, 40, 100, 775, 3584])
@pytest.mark.parametrize("size", [2.0**-30, 1.0, 3e4, 2.0**35])
def test_scores_lie_within_the_margin_of_their_querys_own_rounding(width: int, size: float) -> None:
    """Widths with and without tails, queries from tiny to large: the margin holds, and is the query's own rounding
    (about 2^-9 of it for a query of whole runs), not a margin wide enough to let anything through."""
    bits, numbers = _bf16_rows(400, width, width)
    screen = _screen(bits, numbers)
    assert screen.query_in_bf16
    query = (np.random.default_rng(width).standard_normal(width) * size).astype(np.float32)
    relative = _within_margin(screen, numbers, query)
    assert relative < (2.0**-7 if width >= 32 else 2.0**-16)


@needs_bf16
@pytest.mark.parametrize("offset", [2, 30, 56])
def test_rows_off_a_line_score_as_rows_on_one(offset: int) -> None:
    """A file's table starts anywhere in a line (safetensors aligns to 8): whole lines are read and put together, and
    nothing past the line holding the table's last byte is read (the page after it is shut)."""
    bits, numbers = _bf16_rows(203, 800, offset)
    shifted, region = _rows_before_a_closed_page(bits, offset)
    query = np.random.default_rng(offset).standard_normal(800).astype(np.float32)
    length = float(np.linalg.norm(query.astype(np.float64)))
    on_a_line = _screen(bits, numbers).bounded_scores(query, length)
    screen = _screen(shifted, numbers)
    off_a_line = screen.bounded_scores(query, length)
    np.testing.assert_array_equal(off_a_line[0], on_a_line[0])
    assert off_a_line[1] == on_a_line[1]
    _within_margin(screen, numbers, query)
    del shifted, screen
    region.close()  # type: ignore[attr-defined]


@needs_bf16
def test_rows_at_an_odd_address_are_read_as_well() -> None:
    """A buffer one byte off: loads that need no alignment at all."""
    bits, numbers = _bf16_rows(300, 96, 5)
    raw = np.zeros(bits.nbytes + 1, dtype=np.uint8)
    odd = raw[1:].view(np.uint16).reshape(bits.shape)
    odd[:] = bits
    assert odd.ctypes.data % 2 == 1
    query = np.random.default_rng(5).standard_normal(96).astype(np.float32)
    _within_margin(_screen(odd, numbers), numbers, query)


@needs_bf16
def test_a_query_with_zeros_and_subnormal_numbers_stays_within_its_margin() -> None:
    """vdpbf16ps reads a subnormal as 0: numbers that small count in the query's measured rounding."""
    bits, numbers = _bf16_rows(500, 128, 9)
    query = np.random.default_rng(9).standard_normal(128).astype(np.float32)
    query[:20] = 0.0
    query[20:40] = np.float32(1e-40)  # float32 subnormals
    query[40:60] *= np.float32(2.0**-120)  # bfloat16 subnormal once scaled
    _within_margin(_screen(bits, numbers), numbers, query)


@pytest.mark.parametrize("size", [2.0**-45, 2.0**45])
def test_a_query_out_of_the_scans_range_is_scanned_in_float32(size: float) -> None:
    """The scan writes nothing and says so (-1); the table's search then scans in float32, within its bound."""
    bits, numbers = _bf16_rows(300, 64, 1)
    query = (np.random.default_rng(1).standard_normal(64) * size).astype(np.float32)
    screen = _screen(bits, numbers)
    out = np.full(300, 7.0, dtype=np.float32)
    rounding = _scan.bf16_query_scores(bits, query, screen.scale, out, np.zeros(3, dtype=np.int64))
    assert rounding == -1.0 and np.all(out == 7.0)
    length = float(np.linalg.norm(query.astype(np.float64)))
    assert _within_margin(screen, numbers, query) == pytest.approx(screen.error_bound(length) / length)


@pytest.mark.parametrize("scale", [2.0**-70, 2.0**70])
def test_a_table_with_a_row_of_extreme_length_keeps_the_float32_scan(scale: float) -> None:
    """Flushed subnormals (a tiny row) or a sum past float32 (a huge one) would break the bound: such a table is
    scanned in float32, and its neighbours are float64's still."""
    bits, numbers = _bf16_rows(300, 64, 2)
    extreme = torch.from_numpy(numbers[17] * scale).to(torch.bfloat16)
    bits[17] = extreme.view(torch.int16).numpy().view(np.uint16)
    numbers[17] = extreme.to(torch.float64).numpy()
    screen = _screen(bits, numbers)
    assert not screen.query_in_bf16
    query = np.asarray(numbers[17], dtype=np.float32) / np.float32(scale)
    _within_margin(screen, numbers, query)


def _near_ties(width: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Rows in pairs one bfloat16 step apart in one number, and rows equal to others: cosines a few 1e-4 apart,
    inside the scan's margin, which only float64 orders."""
    bits, numbers = _bf16_rows(2000, width, 11)
    base = bits[:40].copy()
    for i in range(40):
        bits[100 + 2 * i] = base[i]
        nudged = base[i].copy()
        nudged[i % width] += 1  # one step of the last bit, away from zero
        bits[101 + 2 * i] = nudged
    bits[500] = bits[501]  # an exact tie: ids decide
    numbers = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits, numbers


@needs_bf16
@pytest.mark.parametrize("row", [0, 3, 17, 39, 500])
def test_near_ties_come_out_as_a_float64_search_orders_them(row: int) -> None:
    bits, numbers = _near_ties()
    screen = _screen(bits, numbers)
    lengths = np.linalg.norm(numbers, axis=1)

    def exact(ids: np.ndarray, query: np.ndarray) -> np.ndarray:
        return numbers[ids] @ np.asarray(query, dtype=np.float64) / lengths[ids]

    query = (numbers[row] / lengths[row]).astype(np.float32)
    found, _ = search_bounded(bits.shape[0], query, 12, (), screen.bounded_scores, exact)
    expected, _ = float64_top_k(numbers, query.astype(np.float64), 12, ())
    assert found.tolist() == expected


def test_a_bfloat16_folder_answers_as_float64_through_this_scan(tmp_path: Path) -> None:
    """The whole table, opened from a sharded folder with a NaN row and a zero row (both point nowhere, neither keeps
    the table from this scan): its neighbours are float64's, and ``info`` says how it is read."""
    folder, stored = half_folder(tmp_path / "model", torch.bfloat16, seed=4)
    table = open_table(str(folder))
    assert table.stored_screen.query_in_bf16 == bool(_scan.BF16_QUERY)
    if _scan.BF16_QUERY:
        assert "against the query in bfloat16" in table.search_method()
    for token_id in (0, 10, 2000, 30000):
        ids, cosines = float64_top_k(stored, stored[token_id], 10, (token_id,))
        result = table.neighbours(token_id, k=10)
        assert [n.id for n in result.neighbours] == ids
        np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
    table.close()
