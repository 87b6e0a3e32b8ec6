"""Q2_K and Q3_K tables, scanned through their copy of sixteen rows at a time (AVX-512 VNNI) or their
bfloat16 copy (other builds), answer as a float64 search over gguf's dequantised values.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute
force over its numbers. The tables: the GPT-2-shaped fixture's rows and the bundled MiniLM's
quantised to Q2_K and Q3_K (plain min-max quantisers in tests/low_bit_fixture.py; gguf has none
for K types), random blocks (every code and scale), near ties one quantisation step apart, row
counts that are not multiples of 16, widths of one to four blocks, zero rows and rows whose
scales are infinite or NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.search import low_bit_groups, stored_search

from ..gguf_fixture import float64_top_k, write_gguf
from ..low_bit_fixture import BLOCK_BYTES, CODE_BYTES, SCALE_BYTES, low_bit_blocks, random_blocks
from .grouped_rows import assert_within_the_bound_at_any_scale, exact_cosines, varied_rows

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")
TYPES = [Q.Q2_K, Q.Q3_K]
IDS = [t.name for t in TYPES]
vnni = pytest.mark.skipif(not _quants.grouped_scan(), reason="this CPU has no AVX-512 VNNI: no grouped copy")
K = 10
ROWS, WIDTH, ORIGINAL, COPIES, NEAR = 3000, 512, 50, (140, 141), range(100, 140)


def screen_for(stored: np.ndarray, qtype: Q, width: int) -> tuple[low_bit_groups.LowBitScreen, np.ndarray]:
    """The first pass over ``stored`` rows as a table opens it, and gguf's float64 numbers."""
    numbers = dequantize(stored, qtype).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    screen = low_bit_groups.low_bit_screen(stored, qtype.name, lengths, (), width)
    assert screen is not None and screen.groups is not None
    return screen, numbers


def near_tie_blocks(qtype: Q, seed: int) -> np.ndarray:
    """Rows with two exact copies of row ORIGINAL and 40 copies of it with one code bit flipped (a number
    moved by one or four steps), all at distinct cosines (a step drawn again where two would tie)."""
    rng = np.random.default_rng(seed)
    stored = low_bit_blocks(rng.standard_normal((ROWS, WIDTH)).astype(np.float32), qtype, seed)
    for copy in COPIES:
        stored[copy] = stored[ORIGINAL]
    first, last = CODE_BYTES[qtype]
    original = dequantize(stored[ORIGINAL : ORIGINAL + 1], qtype).astype(np.float64)[0]
    taken: list[float] = []
    for row in NEAR:
        while True:
            stored[row] = stored[ORIGINAL]
            byte = int(rng.integers(0, WIDTH // 256)) * BLOCK_BYTES[qtype] + int(rng.integers(first, last))
            stored[row, byte] ^= 1 << int(rng.integers(0, 8))
            moved = dequantize(stored[row : row + 1], qtype).astype(np.float64)[0]
            cosine = float(moved @ original / np.linalg.norm(moved) / np.linalg.norm(original))
            if cosine < 1 and all(abs(cosine - other) > 1e-12 for other in taken):
                taken.append(cosine)
                break
    return stored


def with_bad_scales(stored: np.ndarray, qtype: Q) -> np.ndarray:
    """Rows 5, 6, 7 with a block whose float16 scale(s) are +inf, NaN, -inf."""
    stored = np.array(stored)
    for row, bits in ((5, 0x7C00), (6, 0x7E00), (7, 0xFC00)):
        for offset in SCALE_BYTES[qtype]:
            stored[row, offset : offset + 2] = np.array([bits], dtype="<u2").view(np.uint8)
    return stored


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_rows_are_ggufs_dequantised_numbers_bit_for_bit(tmp_path: Path, qtype: Q) -> None:
    """The C dequantiser (every build: the exact pass's rows) gives what gguf's ``dequantize`` gives,
    for every code and scale, for infinite and NaN scales too; those rows point nowhere."""
    stored = with_bad_scales(random_blocks(qtype, 300, 768, seed=int(qtype)), qtype)
    out = np.empty((300, 768), dtype=np.float32)
    _quants.dequantise(stored, int(stored_search.DEQUANTISED_KINDS[qtype.name]), out)
    with np.errstate(invalid="ignore"):  # gguf's own infinity times zero
        reference = dequantize(stored, qtype)
        np.testing.assert_array_equal(out, reference)
        assert np.isnan(reference[5:8]).any() and np.isfinite(reference[8:]).all()
        table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
        try:
            np.testing.assert_array_equal(table.rows[[0, 5, 6, 7, 150, 299]], reference[[0, 5, 6, 7, 150, 299]])
            np.testing.assert_array_equal(table.rows[:], reference)
            assert not {5, 6, 7} & {n.id for n in table.neighbours(0, k=K).neighbours}
            assert not {5, 6, 7} & {n.id for n in table.neighbours(0, k=K + 1).neighbours}
        finally:
            table.close()


@vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
@pytest.mark.parametrize("width", [256, 512, 768, 1024])
@pytest.mark.parametrize("count", [3, 15, 16, 17, 1013])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(qtype: Q, width: int, count: int) -> None:
    stored = low_bit_blocks(varied_rows(count, width, seed=width + count), qtype, seed=count)
    screen, numbers = screen_for(stored, qtype, width)
    size = screen.groups_bytes / (-(-count // 16) * 16 * width // 256)
    assert size == {Q.Q2_K: 84, Q.Q3_K: 114}[qtype]  # bytes a row and block: about as stored (84, 110)
    query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
    assert_within_the_bound_at_any_scale(screen, numbers, query, count)


@vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_every_sub_block_counts_with_its_own_scale(qtype: Q) -> None:
    """A query that is zero but for one sub-block's 16 numbers, for each in turn (so each run of 32
    numbers of the query is shared by two sub-blocks with different scales): each row's grouped score
    must be that sub-block's part of its cosine (a dropped or mis-scaled one is far off)."""
    width = 512
    stored = random_blocks(qtype, 37, width, seed=5)
    screen, numbers = screen_for(stored, qtype, width)
    for sub in range(width // 16):
        query = np.zeros(width, dtype=np.float32)
        query[16 * sub : 16 * sub + 16] = np.random.default_rng(sub).standard_normal(16)
        bound = screen.error_bound(float(np.linalg.norm(query)))
        exact = exact_cosines(numbers, screen.lengths, query)
        assert np.abs(screen.scores(query) - exact).max() <= bound
        assert np.abs(exact).max() > 100 * bound


@vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_queries_at_the_integer_limits_are_within_the_bound(qtype: Q) -> None:
    """Runs of 32 whose largest number rounds to 2^14 steps (the split into two bytes at its widest), of
    either sign, of one power of two, and of zeros, beside ordinary runs; and every row's codes at 3."""
    stored = random_blocks(qtype, 200, WIDTH, seed=40)
    first, last = CODE_BYTES[qtype]
    stored.reshape(200, -1, BLOCK_BYTES[qtype])[:20, :, first:last] = 0xFF  # the largest code everywhere
    screen, numbers = screen_for(stored, qtype, WIDTH)
    rng = np.random.default_rng(int(qtype))
    query = rng.standard_normal(WIDTH).astype(np.float32)
    just_under_one = np.nextafter(np.float32(1), np.float32(0))
    runs = query.reshape(-1, 32)
    runs[0] = just_under_one
    runs[1] = -just_under_one
    runs[2, ::2], runs[2, 1::2] = just_under_one, -just_under_one
    runs[3] = 0.5
    runs[4] = 0.0
    for size in (1.0, 2.0**-60, 2.0**60):
        scaled = query * np.float32(size)
        error = np.abs(screen.scores(scaled) - exact_cosines(numbers, screen.lengths, scaled)).max()
        assert 0 < error <= screen.error_bound(float(np.linalg.norm(scaled.astype(np.float64))))


@vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_near_ties_come_out_in_float64_order(tmp_path: Path, qtype: Q) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype) + 60)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}-ties.gguf", stored, qtype)))
    try:
        screen = table.screen
        assert isinstance(screen, low_bit_groups.LowBitScreen) and screen.bits is table.rows.raw
        assert "sixteen rows at a time, made at open" in table.search_method()
        ids, cosines = float64_top_k(numbers, numbers[ORIGINAL], 13, (ORIGINAL,))
        assert set(ids[:2]) == set(COPIES) and set(ids[2:]) <= set(NEAR)
        assert np.min(np.diff(-cosines[2:])) < screen.error_bound(1.0)  # closer than the first pass can tell
        for k in (12, 13):
            result = table.neighbours(ORIGINAL, k=k)
            assert [n.id for n in result.neighbours] == ids[:k]
            np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines[:k], rtol=0, atol=1e-6)
        vector = numbers[ORIGINAL] + 0.01 * np.random.default_rng(2).standard_normal(WIDTH)
        ids, _ = float64_top_k(numbers, vector, K, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
    finally:
        table.close()


@vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_gpt2_table_quantised_answers_as_float64(tmp_path: Path, gpt2_table, qtype: Q) -> None:  # type: ignore[no-untyped-def]
    rows = np.array(gpt2_table.rows[:20_003], dtype=np.float32)  # 1,250 groups and 3 rows
    rows[[5, 20_002]] = 0.0
    stored = with_bad_scales(low_bit_blocks(rows, qtype), qtype)
    with np.errstate(invalid="ignore"):
        numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"gpt2-{qtype.name}.gguf", stored, qtype)))
    try:
        assert isinstance(table.screen, low_bit_groups.LowBitScreen)
        for token_id in (1000, 0, 20_001, 19_999):
            ids, cosines = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            result = table.neighbours(token_id, k=K)
            assert [n.id for n in result.neighbours] == ids
            np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
        vector = numbers[8] + 0.02 * np.random.default_rng(3).standard_normal(768)
        ids, _ = float64_top_k(numbers, vector, K, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
        assert not {5, 6, 7, 20_002} & {n.id for n in table.neighbours(3, k=50).neighbours}
    finally:
        table.close()


@vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_bundled_table_quantised_answers_as_float64(tmp_path: Path, minilm_table, qtype: Q) -> None:  # type: ignore[no-untyped-def]
    """MiniLM's 384 numbers a row, padded to two blocks with zeros: sub-blocks of nothing but zeros too."""
    rows = np.zeros((minilm_table.rows.shape[0], 512), dtype=np.float32)
    rows[:, :384] = np.asarray(minilm_table.rows, dtype=np.float32)
    stored = low_bit_blocks(rows, qtype)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"minilm-{qtype.name}.gguf", stored, qtype)))
    try:
        assert isinstance(table.screen, low_bit_groups.LowBitScreen)
        for token_id in (minilm_table.query("king").id, minilm_table.query("paris").id, 30_521):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_builds_without_vnni_keep_the_bfloat16_copy_and_the_answers(tmp_path: Path, qtype: Q, other_build: str) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype) + 70)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}-{other_build}.gguf", stored, qtype)))
    try:
        assert not table.screen.quantised and table.screen.groups is None  # the bfloat16 copy
        for token_id in (ORIGINAL, 0, 2999):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_a_grouped_screen_under_another_build_scans_the_blocks_within_the_bound(qtype: Q, other_build: str) -> None:
    """Made on VNNI, then asked under a build without it: the float scan of the stored blocks answers."""
    _quants.use_build("best")
    stored = random_blocks(qtype, 301, WIDTH, seed=8)
    screen, numbers = screen_for(stored, qtype, WIDTH)
    _quants.use_build(other_build)
    query = np.random.default_rng(9).standard_normal(WIDTH).astype(np.float32)
    error = np.abs(screen.scores(query) - exact_cosines(numbers, screen.lengths, query)).max()
    assert 0 < error <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))


@vnni
def test_a_q2_k_table_whose_offsets_cancel_keeps_the_bfloat16_copy_and_the_answers(tmp_path: Path) -> None:
    """A row whose numbers are d sc q - dmin m with both terms large and nearly all equal (all zero but
    one a block) has a spread far over the integer scan's limit: the table takes the bfloat16 copy."""
    stored = near_tie_blocks(Q.Q2_K, seed=31)
    block = np.zeros(84, dtype=np.uint8)
    block[:16] = 0xFF  # every scale and min 15: 15 d q - 15 dmin
    block[16:80] = 0xFF  # q = 3 everywhere: with dmin = 3 d, every number 0 ...
    block[16] = 0xFE  # ... but one, 15 d (2 - 3)
    block[80:84] = np.array([2.0**-6, 3 * 2.0**-6], dtype="<f2").view(np.uint8)
    stored[9] = np.tile(block, WIDTH // 256)
    numbers = dequantize(stored, Q.Q2_K).astype(np.float64)
    assert np.count_nonzero(numbers[9]) == WIDTH // 256
    table = open_table(str(write_gguf(tmp_path / "cancel.gguf", stored, Q.Q2_K)))
    try:
        assert not table.screen.quantised
        for token_id in (9, ORIGINAL, 3):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@vnni
def test_the_c_functions_refuse_what_is_not_their_rows() -> None:
    stored = random_blocks(Q.Q3_K, 20, 256, seed=1)
    out, scale, progress = np.empty(20, np.float32), np.ones(20, np.float32), np.zeros(2, np.int64)
    query = np.ones(256, np.float32)
    with pytest.raises(ValueError, match="kind"):
        _quants.low_bit_scores(stored, 2, query, scale, out, progress)
    with pytest.raises(ValueError, match="rows"):
        _quants.low_bit_scores(stored[:19], 10, query, scale, out, np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="groups"):
        _quants.low_bit_scores(stored, 10, query, scale, out, np.zeros(2, np.int64), True, np.zeros(10, np.uint8))
    with pytest.raises(ValueError, match="groups of every 16"):
        _quants.copy_groups(stored, 10, 256, np.zeros(10, np.uint8), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="kind must be 0-1 or 5-8"):  # Q4_K's copy has an entry of its own
        _quants.copy_groups(stored, 2, 256, np.zeros(10, np.uint8), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="kind must be 0-1 or 5-8"):  # Q6_K's too
        _quants.groups_size(3, 1, 256)
    with pytest.raises(ValueError, match="kind"):
        _quants.dequantise(stored, 99, np.empty((20, 256), np.float32))  # past the last kind
