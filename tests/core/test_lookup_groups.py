"""IQ4_XS, TQ2_0 and MXFP4 tables, copied sixteen rows at a time at open and scanned against the integer
query (AVX-512 VNNI), answer as a float64 search over gguf's dequantised values.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute force
over its numbers. The tables: the GPT-2-shaped fixture's and the bundled MiniLM's rows quantised by the
gguf package (MXFP4, TQ2_0) or by a plain quantiser into IQ4_XS's blocks (the gguf package has none),
random blocks with near ties, row counts that are not multiples of 16, one to four blocks wide, rows
that are all zero, and rows whose scales are infinite, NaN, subnormal or at e8m0's extremes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf.constants import GGML_QUANT_SIZES
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.search import stored_search
from embedexplorer.core.search.group_copy import copy_in_groups
from embedexplorer.core.search.lookup_groups import LOOKUP_KINDS

from ..gguf_fixture import float64_top_k, write_gguf
from .grouped_rows import assert_within_the_bound_at_any_scale, exact_cosines, varied_rows

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")
needs_vnni = pytest.mark.skipif(
    not _quants.grouped_scan(), reason="this CPU has no AVX-512 VNNI: these types keep a bfloat16 copy"
)
TYPES = [Q.IQ4_XS, Q.TQ2_0, Q.MXFP4]
IDS = [t.name for t in TYPES]
# Byte ranges, inside one block, of each type's codes (their low bit moves one number by a step or so).
CODE_BYTES = {Q.IQ4_XS: (8, 136), Q.TQ2_0: (0, 64), Q.MXFP4: (1, 17)}
K = 12
ORIGINAL, COPIES, NEAR = 50, (140, 141), range(100, 140)


def iq4_xs_blocks(rows: np.ndarray, seed: int = 0) -> np.ndarray:
    """``rows`` in IQ4_XS blocks by a plain quantiser: each sub-block's scale (some negative, as llama.cpp's
    may be) a 6-bit multiple of the block's float16 d, each number the nearest of IQ4_NL's 16 values."""
    count, width = rows.shape
    x = np.asarray(rows, dtype=np.float32).reshape(-1, 8, 32)
    sign = np.where(np.random.default_rng(seed).random(x.shape[:2]) < 0.3, -1.0, 1.0).astype(np.float32)
    wanted = np.abs(x).max(axis=2) / 127 * sign
    d = (np.abs(wanted).max(axis=1) / 31).astype(np.float16)
    d32 = d.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.nan_to_num(np.clip(np.rint(wanted / d32), -32, 31))
    step = d32 * scale
    values = np.array(gguf.quants.IQ4_NL.kvalues, dtype=np.float32)
    q = np.abs(step[..., None, None] * values - x[..., None]).argmin(axis=-1).astype(np.uint8)
    ls = (scale + 32).astype(np.uint8)
    out = np.zeros((x.shape[0], 136), dtype=np.uint8)
    out[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    high = ((ls >> 4).astype(np.uint16) << (2 * np.arange(8, dtype=np.uint16))).sum(axis=1).astype("<u2")
    out[:, 2:4] = high.view(np.uint8).reshape(-1, 2)
    out[:, 4:8] = (ls[:, 0::2] & 15) | ((ls[:, 1::2] & 15) << 4)
    out[:, 8:] = (q[:, :, :16] | (q[:, :, 16:] << 4)).reshape(-1, 128)
    return out.reshape(count, width // 256 * 136)


def stored_rows(rows: np.ndarray, qtype: Q, seed: int = 0) -> np.ndarray:
    """``rows`` as ``qtype`` stores them: the gguf package's quantiser, or ``iq4_xs_blocks`` (2,048 rows at a
    time: both compare every number with all 16 values at once)."""
    parts = []
    for start in range(0, rows.shape[0], 2048):
        part = np.asarray(rows[start : start + 2048], dtype=np.float32)
        parts.append(iq4_xs_blocks(part, seed + start) if qtype == Q.IQ4_XS else gguf.quants.quantize(part, qtype))
    return np.ascontiguousarray(np.concatenate(parts))


def screen_for(stored: np.ndarray, qtype: Q, width: int) -> tuple[stored_search.StoredScreen, np.ndarray]:
    """The first pass over ``stored`` rows as a table opens them, and gguf's float64 numbers."""
    with np.errstate(invalid="ignore", over="ignore"):
        numbers = dequantize(stored, qtype).astype(np.float64)
        lengths = np.linalg.norm(numbers, axis=1)
    kind = LOOKUP_KINDS[qtype.name]
    groups = copy_in_groups(stored, kind, width, _quants)
    return stored_search.StoredScreen(stored, kind, lengths, 0.0, quantised_width=width, groups=groups), numbers


def widths(qtype: Q) -> list[int]:
    """One to four blocks (MXFP4's are 32 numbers: also 25 blocks, GPT-2's 800-wide tail of 32 numbers)."""
    block = GGML_QUANT_SIZES[qtype][0]
    return [block, 2 * block, 3 * block, 4 * block] + ([800] if block == 32 else [])


def near_tie_blocks(qtype: Q, seed: int, rows: int = 3000) -> np.ndarray:
    """Stored rows with exact copies of one row and 40 copies one code away from it (one bit of a code
    byte flipped), their cosines with the original all distinct (by far less than the first pass's
    bound, far more than float64's).

    A code's move changes the cosine by what the number was and became, and the block's scale: MXFP4's
    scales are powers of two, mostly alike, and TQ2_0's numbers are -d, 0 and d, so its rows are 16
    blocks wide to give 40 distinct moves."""
    width = 4096 if qtype == Q.TQ2_0 else 512
    rng = np.random.default_rng(seed)
    stored = stored_rows(rng.standard_normal((rows, width)).astype(np.float32), qtype, seed)
    for copy in COPIES:
        stored[copy] = stored[ORIGINAL]
    first, last = CODE_BYTES[qtype]
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    blocks = stored.shape[1] // block_bytes
    original = dequantize(stored[ORIGINAL : ORIGINAL + 1], qtype).astype(np.float64)[0]
    taken: list[float] = []
    for row in NEAR:
        for _ in range(10_000):
            stored[row] = stored[ORIGINAL]
            byte = int(rng.integers(0, blocks)) * block_bytes + int(rng.integers(first, last))
            stored[row, byte] ^= 1 << int(rng.integers(0, 8))
            moved = dequantize(stored[row : row + 1], qtype).astype(np.float64)[0]
            cosine = float(moved @ original / np.linalg.norm(moved) / np.linalg.norm(original))
            if cosine < 1 and all(abs(cosine - other) > 1e-12 for other in taken):
                taken.append(cosine)
                break
        else:
            raise AssertionError("no distinct near tie found")
    return stored


@pytest.fixture
def best_build() -> Iterator[None]:
    yield
    _quants.use_build("best")


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_rows_read_from_the_file_are_ggufs_numbers_bit_for_bit(tmp_path: Path, qtype: Q) -> None:
    """The C dequantiser against gguf's ``dequantize``: every bit (signed zeros too), infinite, NaN and
    subnormal float16 scales, and every one of MXFP4's 256 e8m0 scales (2^-128 to 2^127)."""
    rng = np.random.default_rng(int(qtype))
    block, block_bytes = GGML_QUANT_SIZES[qtype]
    stored = rng.integers(0, 256, size=(300, 1024 // block * block_bytes), dtype=np.uint8)
    blocks = stored.reshape(-1, block_bytes)
    if qtype == Q.MXFP4:
        blocks[:, 0] = np.arange(blocks.shape[0]) % 256
    else:
        at = 0 if qtype == Q.IQ4_XS else 64
        halves = rng.uniform(-0.05, 0.05, blocks.shape[0]).astype("<f2")
        halves[:6] = np.array([0x7C00, 0x7E00, 0xFC00, 0x0001, 0x8000, 0x03FF], dtype="<u2").view("<f2")
        blocks[:, at : at + 2] = halves.view(np.uint8).reshape(-1, 2)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            expected = dequantize(stored, qtype)
        read = np.asarray(table.rows[:], dtype=np.float32)
        nan = np.isnan(expected)
        assert (np.isnan(read) == nan).all()
        np.testing.assert_array_equal(read.view(np.uint32)[~nan], expected.view(np.uint32)[~nan])
        assert nan.any() == (qtype != Q.MXFP4) and np.isinf(expected).any()  # the cases are really there
        assert (expected == 0).any()
        assert (np.signbit(expected) & (expected == 0)).any() == (qtype != Q.MXFP4)  # MXFP4's zeros are all +0
    finally:
        table.close()


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
@pytest.mark.parametrize("count", [3, 15, 16, 17, 1013])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(qtype: Q, count: int) -> None:
    for width in widths(qtype):
        stored = stored_rows(varied_rows(count, width, seed=width + count), qtype, seed=count)
        screen, numbers = screen_for(stored, qtype, width)
        assert screen.integer and screen.groups is not None
        groups = -(-count // 16)  # about the stored bytes: 2208 for 2176 (IQ4_XS), and headers padded to 64
        assert screen.groups_bytes == _quants.groups_size(LOOKUP_KINDS[qtype.name], count, width)
        assert stored.nbytes <= screen.groups_bytes <= groups * 16 * stored.shape[1] * 1.015 + 64 * groups
        query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
        assert_within_the_bound_at_any_scale(screen, numbers, query, count)


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_every_run_of_32_numbers_counts(qtype: Q) -> None:
    """A query zero but for one run of 32 numbers (an IQ4_XS sub-block, a quarter of a TQ2_0 block, an
    MXFP4 block), for each run in turn: each row's score must be that run's part of its cosine (a run
    dropped, mis-scaled or read from another row is far off)."""
    width = 512
    stored = stored_rows(varied_rows(37, width, seed=5), qtype, seed=5)
    screen, numbers = screen_for(stored, qtype, width)
    live = screen.lengths > 0
    for run in range(width // 32):
        query = np.zeros(width, dtype=np.float32)
        query[32 * run : 32 * run + 32] = np.random.default_rng(run).standard_normal(32)
        bound = screen.error_bound(float(np.linalg.norm(query)))
        scores = screen.scores(query)
        exact = numbers[live] @ query.astype(np.float64) / screen.lengths[live]
        assert np.abs(scores[live] - exact).max() <= bound
        assert np.abs(exact).max() > 50 * bound


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_near_ties_come_out_as_a_float64_search_orders_them(tmp_path: Path, qtype: Q) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype) + 10)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        screen = table.screen
        assert screen.quantised and screen.bits is table.rows.raw and screen.groups is not None  # made at open
        assert "sixteen rows at a time, made at open" in table.search_method()
        ids, cosines = float64_top_k(numbers, numbers[ORIGINAL], K, (ORIGINAL,))
        # The near ties are real: neighbours closer to each other than the first pass can tell apart.
        assert set(ids[:2]) == set(COPIES) and set(ids[2:]) <= set(NEAR)
        assert np.min(np.diff(-cosines[2:])) < screen.error_bound(1.0)
        result = table.neighbours(ORIGINAL, k=K)
        assert [n.id for n in result.neighbours] == ids
        np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
        vector = numbers[ORIGINAL] + 0.01 * np.random.default_rng(2).standard_normal(numbers.shape[1])
        ids, _ = float64_top_k(numbers, vector, K, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
        for token_id in (0, 2999):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()
    # Opened again: the lengths from the cache (checked against the table), the copy made afresh, the same answer.
    again = open_table(str(tmp_path / f"{qtype.name}.gguf"))
    try:
        assert again.screen.groups is not None and not again.screen.notes
        np.testing.assert_allclose(again.screen.lengths, np.linalg.norm(numbers, axis=1), rtol=1e-12, atol=0)
        ids, _ = float64_top_k(numbers, numbers[ORIGINAL], K, (ORIGINAL,))
        assert [n.id for n in again.neighbours(ORIGINAL, k=K).neighbours] == ids
    finally:
        again.close()


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
@pytest.mark.parametrize("build", ["plain", "avx2", "avx512f-float", "avx512f-int16"])
def test_builds_without_vnni_answer_the_same(tmp_path: Path, qtype: Q, build: str, best_build: None) -> None:
    """Without VNNI the table keeps its bfloat16 copy; a grouped table whose build changes under it is
    scored in float64 per row.  Both answer as the float64 search."""
    stored = near_tie_blocks(qtype, seed=int(qtype) + 20, rows=1500)
    numbers = dequantize(stored, qtype).astype(np.float64)
    path = write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)
    grouped = open_table(str(path))
    if _quants.use_build(build) != build:
        pytest.skip(f"this CPU does not run the {build} build")
    rounded = open_table(str(path))
    try:
        assert not rounded.screen.quantised and rounded.screen.rounding > 0  # the bfloat16 copy
        for token_id in (ORIGINAL, 7, 1499):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in rounded.neighbours(token_id, k=K).neighbours] == ids
            assert [n.id for n in grouped.neighbours(token_id, k=K).neighbours] == ids
        if grouped.screen.groups is not None:  # made where VNNI ran: now scored per row in float64
            query = numbers[3].astype(np.float32)
            exact = exact_cosines(numbers, grouped.screen.lengths, query)
            assert np.abs(grouped.screen.scores(query) - exact).max() <= 1e-6 * np.linalg.norm(query)
    finally:
        grouped.close()
        rounded.close()


@needs_vnni
@pytest.mark.parametrize("qtype", [Q.IQ4_XS, Q.TQ2_0], ids=["IQ4_XS", "TQ2_0"])
def test_rows_with_infinite_or_nan_scales_point_nowhere(tmp_path: Path, qtype: Q) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype) + 30, rows=1000)
    at = 0 if qtype == Q.IQ4_XS else 64
    for row, bits in ((5, 0x7C00), (6, 0x7E00), (7, 0xFC00), (8, 0x0001)):  # +inf, NaN, -inf, subnormal
        stored[row, at : at + 2] = np.array([bits], dtype="<u2").view(np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        assert table.screen.groups is not None
        scores = table.screen.scores(numbers[0].astype(np.float32))
        assert (scores[[5, 6, 7]] == 0).all()
        for token_id in (0, 8, ORIGINAL):
            found = [n.id for n in table.neighbours(token_id, k=50).neighbours]
            assert not {5, 6, 7} & set(found)
            live = np.isfinite(numbers).all(axis=1)
            ids, _ = float64_top_k(np.where(live[:, None], numbers, 0.0), numbers[token_id], 50, (token_id,))
            assert found == ids
    finally:
        table.close()


@needs_vnni
def test_mxfp4_scales_at_the_extremes_are_scored_exactly(tmp_path: Path) -> None:
    """e8m0 scales of 0, 1 (subnormal 2^-128, 2^-127), 2, 250, 254 and 255 (2^127, infinite numbers): their
    groups are scored in float64, the others by VNNI, and a query of huge numbers in float64 throughout."""
    stored = near_tie_blocks(Q.MXFP4, seed=71, rows=1000)
    blocks = stored.reshape(stored.shape[0], -1, 17)  # rows in groups of their own (16 rows a group)
    blocks[200, :, 0] = 0
    blocks[230, :, 0] = 1
    blocks[262, :, 0] = 2  # the smallest e the VNNI scan reads
    blocks[290, 3, 0] = 250  # one block of a row far larger than its others
    blocks[330, :, 0] = 250
    blocks[370, :, 0] = 255
    blocks[370, :, 1:] = 0x11  # codes of 1: 2^127, finite
    blocks[400, :, 0] = 255  # codes up to 12: infinite numbers, the row points nowhere
    with np.errstate(over="ignore", invalid="ignore"):
        numbers = dequantize(stored, Q.MXFP4).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "extremes.gguf", stored, Q.MXFP4)))
    try:
        screen = table.screen
        assert screen.groups is not None and screen.scale[400] == 0 and screen.scale[370] > 0
        rng = np.random.default_rng(9)
        for size in (1.0, 1e-25, 1e25):  # 1e25: steps past 2^60, every row in float64
            query = (rng.standard_normal(512) * size).astype(np.float32)
            exact = exact_cosines(numbers, screen.lengths, query)
            error = np.abs(screen.scores(query) - exact)
            assert error.max() <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
        for token_id in (200, 230, 262, 290, 330, 370, ORIGINAL):
            live = np.isfinite(numbers).all(axis=1)
            ids, _ = float64_top_k(np.where(live[:, None], numbers, 0.0), numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_gpt2_table_quantised_answers_as_float64(tmp_path: Path, qtype: Q, gpt2_table) -> None:  # type: ignore[no-untyped-def]
    rows = np.array(gpt2_table.rows[:20_003], dtype=np.float32)  # 1,250 groups and 3 rows
    rows[[5, 20_002]] = 0.0
    stored = stored_rows(rows, qtype)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"gpt2-{qtype.name}.gguf", stored, qtype)))
    try:
        assert table.screen.groups is not None
        for token_id in (1000, 0, 20_001, 19_999):
            ids, cosines = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            result = table.neighbours(token_id, k=K)
            assert [n.id for n in result.neighbours] == ids
            np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
        assert not {5, 20_002} & {n.id for n in table.neighbours(3, k=50).neighbours}
    finally:
        table.close()


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_bundled_table_quantised_answers_as_float64(tmp_path: Path, qtype: Q, minilm_table) -> None:  # type: ignore[no-untyped-def]
    """MiniLM's 384 numbers a row (padded to 512 with zeros for the 256-number blocks)."""
    source = np.asarray(minilm_table.rows, dtype=np.float32)
    width = 384 if GGML_QUANT_SIZES[qtype][0] == 32 else 512
    rows = np.zeros((source.shape[0], width), dtype=np.float32)
    rows[:, :384] = source
    stored = stored_rows(rows, qtype)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"minilm-{qtype.name}.gguf", stored, qtype)))
    try:
        for token_id in (minilm_table.query("king").id, minilm_table.query("paris").id, 30_521):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()
