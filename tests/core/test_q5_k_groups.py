"""Q5_K tables scanned by their copy sixteen rows at a time (made at open, on AVX-512 VNNI) answer as a
float64 search over gguf's dequantised values; without VNNI they keep the bfloat16 copy, and the same answers.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute
force over its numbers. The tables: the GPT-2-shaped fixture's rows and the bundled MiniLM's
quantised to Q5_K (a min-max quantiser: the gguf package has none for K types), random blocks with
near ties and with every number at its largest, row counts that are not multiples of 16, widths of
one to four blocks, rows that are all zero and rows whose scales are infinite or NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.common import cache
from embedexplorer.core.search import stored_search
from embedexplorer.core.search.grouped_q5_k import q5_k_groups

from ..gguf_fixture import float64_top_k, q5_k_blocks, quantised_rows, write_gguf
from .grouped_rows import varied_rows, zero_ids
from .test_quantised_scan import COPIES, NEAR, ORIGINAL, near_tie_blocks

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")
needs_vnni = pytest.mark.skipif(
    not _quants.grouped_scan(), reason="this CPU has no AVX-512 VNNI: Q5_K tables keep the bfloat16 copy"
)
K = 10
Q5_K = stored_search.DEQUANTISED_KINDS["Q5_K"]


def grouped_screen(stored: np.ndarray, width: int) -> tuple[stored_search.StoredScreen, np.ndarray]:
    """The first pass a table opens for ``stored`` Q5_K rows, and gguf's float64 numbers."""
    with np.errstate(invalid="ignore", over="ignore"):  # gguf's own infinity times zero, and their squares
        numbers = dequantize(stored, Q.Q5_K).astype(np.float64)
        lengths = np.linalg.norm(numbers, axis=1)
    groups, spreads = q5_k_groups(stored, width)
    spread = stored_search.table_spread(spreads, lengths)
    screen = stored_search.StoredScreen(stored, Q5_K, lengths, 0.0, quantised_width=width, spread=spread, groups=groups)
    assert screen.integer and screen.groups_at_open
    return screen, numbers


def assert_within_bound(screen: stored_search.StoredScreen, numbers: np.ndarray, query: np.ndarray) -> float:
    """Every live row's score is within the bound of its float64 cosine times |query|; rows pointing nowhere
    score 0.  Returns the largest error (so a caller can check the bound is met by real rounding)."""
    live = screen.scale != 0
    scores = screen.scores(query)
    exact = numbers[live] @ query.astype(np.float64) / screen.lengths[live]
    error = float(np.abs(scores[live] - exact).max())
    assert error <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    assert (scores[~live] == 0).all()
    return error


@needs_vnni
@pytest.mark.parametrize("width", [256, 512, 768, 1024])
@pytest.mark.parametrize("count", [3, 15, 16, 17, 1013])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(width: int, count: int) -> None:
    stored = q5_k_blocks(varied_rows(count, width, seed=width + count))
    screen, numbers = grouped_screen(stored, width)
    assert screen.groups is not None and screen.groups_bytes == -(-count // 16) * width // 256 * 2880
    assert (screen.scale[zero_ids(count)] == 0).all()  # all-zero rows point nowhere
    query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
    assert assert_within_bound(screen, numbers, query) > 0  # the bound is checked against real rounding
    # Far from 1 and very uneven queries: the runs' steps are other powers of two.
    for size in (1e-20, 1e20):
        far = query * np.float32(size)
        far[:32] *= np.float32(1e-6)
        assert_within_bound(screen, numbers, far)


@needs_vnni
@pytest.mark.parametrize("width", [256, 768])
def test_random_blocks_and_the_widest_integer_sums_are_within_the_bound(width: int) -> None:
    """Random blocks (every bit pattern of qs, qh and the 6-bit scales), and rows whose every number is 31
    against runs whose every number rounds to 2^14 steps: each sub-block's integer sum is then
    32 x 31 x 2^14, its largest (just under 2^24), of either sign."""
    rows = np.zeros((40, width), dtype=np.float32)
    stored = np.ascontiguousarray(quantised_rows(rows, Q.Q5_K, seed=width))
    blocks = stored.reshape(40, width // 256, 176)
    blocks[:8, :, 16:] = 0xFF  # qh and qs all ones: q = 31 everywhere
    blocks[:4, :, 4:16] = 0xFF  # scales and mins 63 too
    screen, numbers = grouped_screen(stored, width)
    just_under_one = np.nextafter(np.float32(1), np.float32(0))
    rng = np.random.default_rng(width)
    query = rng.standard_normal(width).astype(np.float32)
    runs = query.reshape(-1, 32)
    runs[0], runs[1] = just_under_one, -just_under_one
    runs[2, ::2], runs[2, 1::2] = just_under_one, -just_under_one
    runs[3], runs[4] = 0.5, 0.0  # a power of two (2^13 steps), and nothing
    for size in (1.0, 2.0**-60, 2.0**60):
        assert assert_within_bound(screen, numbers, query * np.float32(size)) > 0
    assert_within_bound(screen, numbers, np.full(width, just_under_one))
    assert_within_bound(screen, numbers, np.full(width, -just_under_one))


@needs_vnni
def test_every_sub_block_and_fifth_bit_counts_in_the_grouped_scan() -> None:
    """A query that is zero but for one sub-block's 32 numbers, for each sub-block in turn: each row's score
    must be that sub-block's part of its cosine (a dropped sub-block, scale or fifth bit is far off); and rows
    that differ from one row in a single fifth bit each (all 256 of a block's) score apart as gguf's do."""
    width = 512
    stored = q5_k_blocks(varied_rows(37, width, seed=5))
    screen, numbers = grouped_screen(stored, width)
    for sub in range(width // 32):
        query = np.zeros(width, dtype=np.float32)
        query[32 * sub : 32 * sub + 32] = np.random.default_rng(sub).standard_normal(32)
        assert_within_bound(screen, numbers, query)
        live = screen.scale != 0
        exact = numbers[live] @ query.astype(np.float64) / screen.lengths[live]
        assert np.abs(exact).max() > 100 * screen.error_bound(float(np.linalg.norm(query)))
    one = q5_k_blocks(np.random.default_rng(8).standard_normal((1, 256)).astype(np.float32))[0]
    flipped = np.tile(one, (257, 1))
    for bit in range(256):  # qh[j]'s bit i: number 32 i + j, moved by 16 steps
        flipped[bit + 1, 16 + bit % 32] ^= np.uint8(1 << (bit // 32))
    screen, numbers = grouped_screen(flipped, 256)
    assert_within_bound(screen, numbers, np.random.default_rng(9).standard_normal(256).astype(np.float32))
    for number in range(256):  # the query that reads that number alone: the two rows' scores are far apart
        query = np.zeros(256, dtype=np.float32)
        query[number] = 1.0
        assert_within_bound(screen, numbers, query)
        exact = numbers[[0, number + 1], number] / screen.lengths[[0, number + 1]]
        assert abs(exact[1] - exact[0]) > 10 * screen.error_bound(1.0)


@needs_vnni
def test_near_ties_come_out_in_float64_order_from_the_first_query(tmp_path: Path) -> None:
    stored = near_tie_blocks(Q.Q5_K, seed=61)
    numbers = dequantize(stored, Q.Q5_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "ties.gguf", stored, Q.Q5_K)))
    try:
        screen = table.screen
        assert screen.quantised and screen.groups_at_open and screen.groups is not None
        assert "sixteen rows at a time, made at open" in table.search_method()
        ids, cosines = float64_top_k(numbers, numbers[ORIGINAL], 13, (ORIGINAL,))
        # The near ties are real: neighbours closer to each other than the first pass can tell apart.
        assert set(ids[:2]) == set(COPIES) and set(ids[2:]) <= set(NEAR)
        assert np.min(np.diff(-cosines[2:])) < screen.error_bound(1.0)
        result = table.neighbours(ORIGINAL, k=13)
        assert [n.id for n in result.neighbours] == ids
        np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
        vector = numbers[ORIGINAL] + 0.01 * np.random.default_rng(2).standard_normal(numbers.shape[1])
        ids, _ = float64_top_k(numbers, vector, K, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
        for token_id in (0, 2999):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
        # No bfloat16 copy was made, in memory or on disk.
        key = stored_search._identity(table.rows)
        assert cache.load_array(key, "bf16", table.rows.shape, np.uint16) is None
    finally:
        table.close()


@needs_vnni
def test_the_gpt2_table_quantised_answers_as_float64(tmp_path: Path, gpt2_table) -> None:  # type: ignore[no-untyped-def]
    rows = np.array(gpt2_table.rows[:20_003], dtype=np.float32)  # 1,250 groups and 3 rows
    rows[[5, 20_002]] = 0.0
    stored = q5_k_blocks(rows)
    numbers = dequantize(stored, Q.Q5_K).astype(np.float64)
    path = write_gguf(tmp_path / "gpt2-q5_k.gguf", stored, Q.Q5_K)
    for _ in range(2):  # measured at the first open, the lengths come from the cache at the second
        table = open_table(str(path))
        try:
            assert table.screen.groups_at_open
            for token_id in (1000, 0, 20_001, 19_999):
                ids, cosines = float64_top_k(numbers, numbers[token_id], K, (token_id,))
                result = table.neighbours(token_id, k=K)
                assert [n.id for n in result.neighbours] == ids
                np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
            vector = numbers[7] + 0.02 * np.random.default_rng(3).standard_normal(768)
            ids, _ = float64_top_k(numbers, vector, K, ())
            assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
            assert not {5, 20_002} & {n.id for n in table.neighbours(3, k=50).neighbours}
        finally:
            table.close()


@needs_vnni
def test_the_bundled_table_quantised_answers_as_float64(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    """MiniLM's 384 numbers a row, padded to two blocks with zeros: sub-blocks of nothing but zeros too."""
    rows = np.zeros((minilm_table.rows.shape[0], 512), dtype=np.float32)
    rows[:, :384] = np.asarray(minilm_table.rows, dtype=np.float32)
    stored = q5_k_blocks(rows)
    numbers = dequantize(stored, Q.Q5_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "minilm-q5_k.gguf", stored, Q.Q5_K)))
    try:
        assert table.screen.groups_at_open
        for token_id in (minilm_table.query("king").id, minilm_table.query("paris").id, 30_521):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@needs_vnni
def test_rows_with_infinite_or_nan_scales_point_nowhere(tmp_path: Path) -> None:
    """d or dmin infinite or NaN in one block of a row: gguf's numbers there are infinite or NaN, the row's
    length too, so it scores 0 and is never a neighbour; the rows read are gguf's, bit for bit."""
    stored = near_tie_blocks(Q.Q5_K, seed=71)
    bad = {5: (0, 0x7C00), 6: (2, 0x7E00), 7: (176, 0xFC00), 8: (178, 0x7C00), 9: (0, 0x0000)}
    for row, (offset, bits) in bad.items():  # +inf d, NaN dmin, -inf d of block 1, +inf dmin of block 1
        stored[row, offset : offset + 2] = np.array([bits], dtype="<u2").view(np.uint8)
    stored[10] = 0  # all zero
    screen, numbers = grouped_screen(stored, 512)
    assert (screen.scale[[5, 6, 7, 8, 10]] == 0).all() and screen.scale[9] != 0  # d = 0 leaves -dmin m
    query = np.random.default_rng(4).standard_normal(512).astype(np.float32)
    assert_within_bound(screen, numbers, query)
    table = open_table(str(write_gguf(tmp_path / "bad.gguf", stored, Q.Q5_K)))
    try:
        assert table.screen.groups_at_open
        with np.errstate(invalid="ignore", over="ignore"):  # gguf's own infinity times zero
            np.testing.assert_array_equal(table.rows[:], dequantize(stored, Q.Q5_K))
        for token_id in (0, ORIGINAL, 9):
            with np.errstate(invalid="ignore"):
                ids, _ = float64_top_k(numbers, numbers[token_id], 50, (token_id,))
            found = [n.id for n in table.neighbours(token_id, k=50).neighbours]
            assert found == ids and not {5, 6, 7, 8, 10} & set(found)
    finally:
        table.close()


def test_without_vnni_a_table_keeps_the_bfloat16_copy_and_the_answers(tmp_path: Path, other_build: str) -> None:
    stored = near_tie_blocks(Q.Q5_K, seed=81)
    numbers = dequantize(stored, Q.Q5_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{other_build}.gguf", stored, Q.Q5_K)))
    try:
        assert not table.screen.quantised and table.screen.rounding == stored_search.BF16_ROUNDING
        for token_id in (ORIGINAL, 0, 2999):
            ids, _ = float64_top_k(numbers, numbers[token_id], 13, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=13).neighbours] == ids
    finally:
        table.close()


@needs_vnni
def test_a_grouped_screen_scanned_by_another_build_reads_its_blocks_in_float32(other_build: str) -> None:
    """A build chosen after the copy was made (a test's use_build) scans the blocks as stored, in float32:
    still within the bound, which is the integer scan's and wider."""
    stored = q5_k_blocks(varied_rows(100, 768, seed=12))
    _quants.use_build("best")
    screen, numbers = grouped_screen(stored, 768)
    _quants.use_build(other_build)
    query = np.random.default_rng(5).standard_normal(768).astype(np.float32)
    assert assert_within_bound(screen, numbers, query) > 0


@needs_vnni
def test_a_q5_k_table_whose_offsets_cancel_keeps_the_bfloat16_copy(tmp_path: Path) -> None:
    """A row whose numbers are d s q - m n with both terms large and their differences tiny (all zero but
    one) has a spread far over the integer scan's limit: the table gets the bfloat16 copy, and answers."""
    stored = near_tie_blocks(Q.Q5_K, seed=91)
    block = np.zeros(176, dtype=np.uint8)
    block[0:4] = np.array([0.01, 0.01], dtype="<f2").view(np.uint8)  # d = dmin
    block[4:8], block[8:12], block[12:16] = 4, 252, 196  # every scale 4, every min 60: 4 d q - 60 d
    block[48:] = 0xFF  # q = 15 everywhere (no fifth bits): every number 0 ...
    block[48] = 0xFE  # ... but one, 4 d (14 - 15)
    stored[9] = np.tile(block, 2)
    numbers = dequantize(stored, Q.Q5_K).astype(np.float64)
    assert np.count_nonzero(numbers[9]) == 2
    table = open_table(str(write_gguf(tmp_path / "cancel.gguf", stored, Q.Q5_K)))
    try:
        assert not table.screen.quantised and table.screen.rounding == stored_search.BF16_ROUNDING
        for token_id in (9, ORIGINAL, 3):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


def test_the_copy_and_the_scan_refuse_buffers_of_the_wrong_size() -> None:
    stored = q5_k_blocks(varied_rows(20, 512, seed=3))
    progress = np.zeros(2, dtype=np.int64)
    with pytest.raises(ValueError, match="Q5_K rows"):
        _quants.q5_k_groups(stored, 512, np.zeros(2 * 2 * 2880 - 8, np.uint8), np.zeros(20), progress)
    with pytest.raises(ValueError, match="spreads"):
        _quants.q5_k_groups(stored, 512, np.zeros(2 * 2 * 2880, np.uint8), np.zeros(19), progress)
    groups = np.zeros(2 * 2 * 2368, np.uint8)  # Q4_K's size for these rows: not Q5_K's copy
    out, scale = np.zeros(20, np.float32), np.ones(20, np.float32)
    query = np.ones(512, np.float32)
    with pytest.raises(ValueError, match="groups"):
        _quants.quant_scores(stored, Q5_K, query, scale, out, progress, True, groups)


@needs_vnni
def test_the_copy_and_its_spreads_are_the_same_on_every_build(other_build: str) -> None:
    """The VNNI build measures the spreads from the copy's vectors, the others row by row from the blocks:
    the same integer sums and float64 operations in the same order, so the same numbers, bit for bit."""
    stored = q5_k_blocks(varied_rows(37, 768, seed=21))
    made = {}
    for build in ("best", other_build):
        _quants.use_build(build)
        made[build] = q5_k_groups(stored, 768)
    np.testing.assert_array_equal(made["best"][0], made[other_build][0])
    np.testing.assert_array_equal(made["best"][1], made[other_build][1])
    assert (made["best"][1][zero_ids(37)] == 0).all() and (np.delete(made["best"][1], zero_ids(37)) > 0).all()
