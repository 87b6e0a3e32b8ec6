"""Q6_K tables scanned by groups of 16 rows (the queries after the first, on AVX-512 VNNI) answer as a
float64 search over gguf's dequantised values, and as the first query's scan of the blocks as stored.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute
force over its numbers. The tables: rows llama.cpp's own quantiser wrote, the GPT-2-shaped fixture's
rows quantised to Q6_K, random blocks with near ties and with codes and scales at their limits; row
counts that are not multiples of 16, widths of one to four blocks, rows that are all zero, rows whose
scale is infinite or NaN.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.search import stored_screen, stored_search

from ..gguf_fixture import float64_top_k, random_blocks, write_gguf
from .grouped_rows import assert_gpt2_rows_answer_as_float64, exact_cosines, varied_rows, zero_ids
from .test_quantised_scan import COPIES, NEAR, ORIGINAL, near_tie_blocks

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")
needs_vnni = pytest.mark.skipif(
    not _quants.grouped_scan(), reason="this CPU has no AVX-512 VNNI: Q6_K rows are scanned as stored only"
)
LLAMA_BLOCKS = Path(__file__).resolve().parents[1] / "data" / "llama_quants" / "blocks.json.gz"
KIND = stored_search.QUANT_KINDS["Q6_K"]
K = 10


def q6_k_blocks(rows: np.ndarray) -> np.ndarray:
    """``rows`` quantised to Q6_K in llama.cpp's block layout by a plain absolute-max quantiser (the gguf
    package has none for K types): each sub-block of 16 gets an int8 scale under the block's float16 d."""
    count, width = rows.shape
    x = np.asarray(rows, dtype=np.float32).reshape(-1, 16, 16)  # blocks, sub-blocks, numbers
    picked = np.take_along_axis(x, np.abs(x).argmax(axis=2)[..., None], axis=2)[..., 0]
    wanted = -picked / 32  # the largest number in size becomes code 0 (q - 32 = -32), as llama.cpp does
    d = (np.abs(wanted).max(axis=1) / 127).astype(np.float16)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.nan_to_num(np.clip(np.rint(wanted / d[:, None].astype(np.float32)), -128, 127)).astype(np.int8)
        step = (d[:, None].astype(np.float32) * s)[..., None]
        q = np.nan_to_num(np.clip(np.rint(x / step), -32, 31)) + 32
    q = q.astype(np.uint8).reshape(-1, 2, 128)  # halves of 128 numbers
    out = np.zeros((x.shape[0], 210), dtype=np.uint8)
    ql = (q[:, :, :64] & 15) | ((q[:, :, 64:] & 15) << 4)  # numbers r and r + 64 of a half
    quarters = (q >> 4).reshape(-1, 2, 4, 32)  # numbers r, r + 32, r + 64, r + 96: qh bits 0-1, 2-3, 4-5, 6-7
    qh = quarters[:, :, 0] | quarters[:, :, 1] << 2 | quarters[:, :, 2] << 4 | quarters[:, :, 3] << 6
    out[:, :128], out[:, 128:192] = ql.reshape(-1, 128), qh.reshape(-1, 64)
    out[:, 192:208] = s.view(np.uint8)
    out[:, 208:210] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    return out.reshape(count, width // 256 * 210)


def screen_for(stored: np.ndarray, width: int) -> tuple[stored_search.StoredScreen, np.ndarray]:
    """The first pass over ``stored`` Q6_K rows as a table opens it, and gguf's float64 numbers."""
    with np.errstate(invalid="ignore"):  # gguf's own infinity times zero
        numbers = dequantize(stored, Q.Q6_K).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    return stored_search.StoredScreen(stored, KIND, lengths, 0.0, quantised_width=width), numbers


def test_the_test_quantiser_writes_blocks_gguf_reads_back_as_the_rows() -> None:
    """Guards the tables below: gguf's dequantize of ``q6_k_blocks`` is the rows, to six bits."""
    rows = varied_rows(40, 512, seed=1)
    numbers = dequantize(q6_k_blocks(rows), Q.Q6_K)
    live = np.linalg.norm(rows, axis=1) > 0
    off = np.linalg.norm(numbers - rows, axis=1)[live] / np.linalg.norm(rows, axis=1)[live]
    assert off.max() < 0.03 and (numbers[~live] == 0).all()


@needs_vnni
@pytest.mark.parametrize("width", [256, 512, 768, 1024])
@pytest.mark.parametrize("count", [3, 15, 16, 17, 1013])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(width: int, count: int) -> None:
    stored = q6_k_blocks(varied_rows(count, width, seed=width + count))
    screen, numbers = screen_for(stored, width)
    query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
    exact = exact_cosines(numbers, screen.lengths, query)
    bound = screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    first = screen.scores(query)
    assert screen.groups is None  # the first query reads the blocks as stored and copies nothing
    later = screen.scores(query)
    assert screen.groups is not None and screen.groups_bytes == -(-count // 16) * width // 256 * 3392
    assert screen.groups.ctypes.data % 64 == 0  # each 64-byte load on one cache line
    for scores in (first, later):
        assert np.abs(scores - exact).max() <= bound
    assert np.abs(later - exact).max() > 0  # the bound is checked against real rounding
    assert (later[zero_ids(count)] == 0).all()  # all-zero rows point nowhere
    # Far from 1 and very uneven queries: the runs' steps are other powers of two.
    for size in (1e-20, 1e20):
        far = query * np.float32(size)
        far[:32] *= np.float32(1e-6)
        error = np.abs(screen.scores(far) - exact_cosines(numbers, screen.lengths, far))
        assert error.max() <= screen.error_bound(float(np.linalg.norm(far.astype(np.float64))))


@needs_vnni
def test_every_sub_block_counts_in_the_grouped_scan() -> None:
    """A query that is zero but for one sub-block's 16 numbers, for each sub-block in turn: each row's
    grouped score must be that sub-block's part of its cosine (a dropped or mis-scaled one is far off)."""
    width = 512
    stored = q6_k_blocks(varied_rows(37, width, seed=5))
    screen, numbers = screen_for(stored, width)
    live = screen.lengths > 0
    screen.scores(np.ones(width, dtype=np.float32))  # the first query: the groups come with the next
    for sub in range(width // 16):
        query = np.zeros(width, dtype=np.float32)
        query[16 * sub : 16 * sub + 16] = np.random.default_rng(sub).standard_normal(16)
        scores = screen.scores(query)
        exact = numbers[live] @ query.astype(np.float64) / screen.lengths[live]
        bound = screen.error_bound(float(np.linalg.norm(query)))
        assert np.abs(scores[live] - exact).max() <= bound
        assert np.abs(exact).max() > 100 * bound
    assert screen.groups is not None


@needs_vnni
@pytest.mark.parametrize("code", [0, 63, None], ids=["codes 0", "codes 63", "codes mixed"])
def test_codes_scales_and_queries_at_their_limits_are_within_the_bound(code: int | None) -> None:
    """Every code 0 (q - 32 = -32) or 63, scales -128 and 127, against runs of the query whose largest
    number rounds to 2^14 steps, of either sign: the integer sums at their widest (2^23 a sub-block)."""
    width, count = 768, 50
    rng = np.random.default_rng(17 if code is None else code)
    stored = random_blocks(count, width, Q.Q6_K, rng, (0.001, 0.01)).reshape(-1, 210)
    if code is not None:  # 0 everywhere, or 63: low nibbles 15 and both high bits
        stored[:, :192] = 0 if code == 0 else 0xFF
    stored[::2, 192:208] = np.array([-128, 127] * 8, dtype=np.int8).view(np.uint8)
    stored = stored.reshape(count, -1)
    screen, numbers = screen_for(stored, width)
    just_under_one = np.nextafter(np.float32(1), np.float32(0))
    query = rng.standard_normal(width).astype(np.float32)
    runs = query.reshape(-1, 32)
    runs[0], runs[1] = just_under_one, -just_under_one  # xq = 2^14 and -2^14 throughout
    runs[2, ::2], runs[2, 1::2] = just_under_one, -just_under_one
    runs[3], runs[4] = 0.5, 0.0
    screen.scores(query)
    for size in (1.0, 2.0**-60, 2.0**60):
        scaled = query * np.float32(size)
        error = np.abs(screen.scores(scaled) - exact_cosines(numbers, screen.lengths, scaled)).max()
        assert 0 < error <= screen.error_bound(float(np.linalg.norm(scaled.astype(np.float64))))
    assert screen.groups is not None


@needs_vnni
def test_rows_with_infinite_or_nan_scales_point_nowhere_in_the_groups() -> None:
    """A row whose float16 d is infinite or NaN has no length: it scores 0 from the groups as from the blocks."""
    width = 512
    stored = q6_k_blocks(varied_rows(33, width, seed=8))
    for row, bits in ((4, 0x7C00), (17, 0x7E00), (32, 0xFC00)):  # +inf, NaN, -inf; the last alone in its group
        stored[row, 208:210] = np.array([bits], dtype="<u2").view(np.uint8)
    screen, numbers = screen_for(stored, width)
    assert (screen.scale[[4, 17, 32]] == 0).all()
    query = np.random.default_rng(2).standard_normal(width).astype(np.float32)
    exact = exact_cosines(numbers, screen.lengths, query)
    for _ in range(2):
        scores = screen.scores(query)
        assert (scores[[4, 17, 32]] == 0).all() and np.isfinite(scores).all()
        assert np.abs(scores - exact).max() <= screen.error_bound(float(np.linalg.norm(query)))
    assert screen.groups is not None


def test_builds_without_vnni_keep_the_blocks_as_stored(other_build: str) -> None:
    """The plain, AVX2 and AVX-512 builds without VNNI make no copy and stay within the bound."""
    width = 768
    stored = q6_k_blocks(varied_rows(100, width, seed=3))
    screen, numbers = screen_for(stored, width)
    query = np.random.default_rng(6).standard_normal(width).astype(np.float32)
    exact = exact_cosines(numbers, screen.lengths, query)
    bound = screen.error_bound(float(np.linalg.norm(query)))
    for _ in range(3):
        assert np.abs(screen.scores(query) - exact).max() <= bound
    assert screen.groups is None and not _quants.grouped_scan()


@needs_vnni
def test_a_copy_given_to_a_build_without_vnni_is_not_read() -> None:
    """quant_scores given the groups on a build that cannot scan them scans the blocks as stored."""
    width = 512
    stored = q6_k_blocks(varied_rows(40, width, seed=4))
    screen, _ = screen_for(stored, width)
    query = np.random.default_rng(9).standard_normal(width).astype(np.float32)
    screen.scores(query)
    grouped = screen.scores(query)
    assert screen.groups is not None
    try:
        _quants.use_build("avx512f-int16")
        out, progress = np.empty(40, dtype=np.float32), np.zeros(2, dtype=np.int64)
        _quants.quant_scores(stored, KIND, query, screen.scale, out, progress, True, screen.groups)
        expected = np.empty(40, dtype=np.float32)
        _quants.quant_scores(stored, KIND, query, screen.scale, expected, np.zeros(2, dtype=np.int64), True)
    finally:
        _quants.use_build("best")
    np.testing.assert_array_equal(out, expected)
    assert np.abs(out - grouped).max() <= 2 * screen.error_bound(float(np.linalg.norm(query)))


def test_a_copy_of_the_wrong_size_is_refused() -> None:
    width = 512
    stored = q6_k_blocks(varied_rows(20, width, seed=2))
    right = np.zeros(2 * 2 * _quants.Q6K_GROUP_BLOCK_BYTES, dtype=np.uint8)
    with pytest.raises(ValueError, match="groups of every 16 Q6_K rows"):
        _quants.q6_k_groups(stored, width, right[:-1], np.zeros(2, dtype=np.int64))
    query, scale = np.ones(width, dtype=np.float32), np.ones(20, dtype=np.float32)
    with pytest.raises(ValueError, match="q6_k_groups's copy of the Q6_K rows"):
        _quants.quant_scores(stored, KIND, query, scale, np.empty(20, np.float32), np.zeros(2, np.int64), True,
                             right[:-1])  # fmt: skip


def test_dequantise_is_ggufs_bit_for_bit_at_the_limits() -> None:
    """Codes 0 and 63, scales -128 and 127, and float16 scales subnormal, infinite and NaN."""
    rng = np.random.default_rng(11)
    stored = random_blocks(64, 512, Q.Q6_K, rng, (1e-7, 6e4)).reshape(-1, 210)
    stored[::3, :192] = 0xFF
    stored[1::3, :192] = 0
    stored[::2, 192:208] = np.array([-128, 127] * 8, dtype=np.int8).view(np.uint8)
    halves = np.array([1, 0x3FF, 0x7C00, 0x7E00, 0xFC00, 0x8001], dtype="<u2").view(np.uint8)
    stored[:6, 208:210] = halves.reshape(-1, 2)
    out = np.empty(stored.shape[0] * 256, dtype=np.float32)
    _quants.dequantise(stored, KIND, out)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = dequantize(stored, Q.Q6_K).reshape(-1)
    np.testing.assert_array_equal(out, expected)


@needs_vnni
def test_rows_llama_cpp_quantised_answer_as_float64(tmp_path: Path) -> None:
    """llama.cpp's own Q6_K blocks (32 rows of the GPT-2-shaped fixture) and 5 copies of them, each with
    one number moved by one step (near ties, no exact ones): 37 rows, so the last group holds 5."""
    table_data = json.loads(gzip.decompress(LLAMA_BLOCKS.read_bytes()))["tables"]["gpt2-Q4_K_M"]
    assert table_data["type"] == "Q6_K"
    blocks = np.frombuffer(base64.b64decode(table_data["blocks"]), dtype=np.uint8).reshape(len(table_data["ids"]), -1)
    stored = np.concatenate([blocks, blocks[[3, 3, 9, 20, 31]]])
    for row, byte in zip(range(32, 37), (0, 210 + 77, 130, 2 * 210 + 5, 300), strict=True):
        stored[row, byte] ^= 1
    numbers = dequantize(stored, Q.Q6_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "llama-q6_k.gguf", stored, Q.Q6_K)))
    try:
        assert table.screen.integer
        for token_id, k in ((3, K), (0, K), (36, K), (20, K), (3, K + 1), (33, K)):
            ids, _ = float64_top_k(numbers, numbers[token_id], k, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=k).neighbours] == ids
        assert table.screen.groups is not None
    finally:
        table.close()


@needs_vnni
def test_near_ties_come_out_in_float64_order_from_the_groups(tmp_path: Path) -> None:
    stored = near_tie_blocks(Q.Q6_K, seed=61)
    numbers = dequantize(stored, Q.Q6_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "ties.gguf", stored, Q.Q6_K)))
    try:
        ids, _ = float64_top_k(numbers, numbers[ORIGINAL], 13, (ORIGINAL,))
        assert set(ids[:2]) == set(COPIES) and set(ids[2:]) <= set(NEAR)
        first = [n.id for n in table.neighbours(ORIGINAL, k=12).neighbours]
        assert table.screen.groups is None
        later = [n.id for n in table.neighbours(ORIGINAL, k=13).neighbours]  # another k: asked afresh
        assert table.screen.groups is not None
        assert first == later[:12] == ids[:12] and later == ids
    finally:
        table.close()


@needs_vnni
def test_the_gpt2_table_quantised_answers_as_float64_first_and_later(tmp_path: Path, gpt2_table) -> None:  # type: ignore[no-untyped-def]
    assert_gpt2_rows_answer_as_float64(tmp_path, gpt2_table, Q.Q6_K, q6_k_blocks)


@needs_vnni
def test_a_table_too_large_for_the_cache_keeps_its_blocks_as_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the size limit no copy is made: the same scores from the blocks as stored."""
    stored = q6_k_blocks(varied_rows(100, 512, seed=9))
    screen, _ = screen_for(stored, 512)
    monkeypatch.setattr(stored_screen, "_GROUPS_MAX_BYTES", stored.nbytes - 1)
    query = np.random.default_rng(4).standard_normal(512).astype(np.float32)
    scores = [screen.scores(query) for _ in range(3)]
    assert screen.groups is None and screen.groups_bytes == 0
    np.testing.assert_array_equal(scores[0], scores[2])
    monkeypatch.setattr(stored_screen, "_GROUPS_MAX_BYTES", stored.nbytes)
    screen.scores(query)
    assert screen.groups is not None
