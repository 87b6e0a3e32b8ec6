"""IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M tables, copied at open sixteen rows at a time (AVX-512 VNNI),
answer as a float64 search over gguf's dequantised values; their rows read by the C dequantiser are
gguf's numbers bit for bit.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute force
over its numbers. The tables are random blocks (the gguf package cannot quantise to these types) with
near ties, row counts that are not multiples of 16, one to four blocks a row, rows all zero and rows
whose float16 d is infinite or NaN (they point nowhere); the builds without VNNI keep the bfloat16 copy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGML_QUANT_SIZES
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.search import stored_search
from embedexplorer.core.search.group_copy import copy_in_groups

from ..gguf_fixture import float64_top_k, random_blocks, write_gguf
from .grouped_rows import exact_cosines, zero_ids

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")

TYPES = [Q.IQ2_XXS, Q.IQ2_XS, Q.IQ2_S, Q.IQ1_S, Q.IQ1_M]
IDS = [t.name for t in TYPES]
grouped_here = pytest.mark.skipif(
    not _quants.grouped_scan(), reason="this CPU has no AVX-512 VNNI: these tables keep their bfloat16 copy"
)
# Where each type keeps the low bytes of its grid indices inside a block (flipping a low bit there
# moves eight numbers): IQ2_XXS four bytes of each eight, the others a run of bytes.
GRID_BYTES = {
    Q.IQ2_XXS: [2 + 8 * sub + at for sub in range(8) for at in range(4)],
    Q.IQ2_XS: list(range(2, 66)),
    Q.IQ2_S: list(range(2, 34)),
    Q.IQ1_S: list(range(2, 34)),
    Q.IQ1_M: list(range(0, 32)),
}
K = 12


def blocks_of(qtype: Q, count: int, width: int, seed: int) -> np.ndarray:
    """Random rows with finite scales, some all zero (``zero_ids``) and some with d infinite or NaN."""
    rows = random_blocks(count, width, qtype, np.random.default_rng(seed), (0.002, 0.05))
    stored = rows.reshape(count, -1).copy()
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    for row in zero_ids(count):
        for b in range(width // 256):
            set_d(stored[row, b * block_bytes : (b + 1) * block_bytes], qtype, 0x0000)
    for row, bits in zip(broken_ids(count), (0x7C00, 0x7E00), strict=False):
        set_d(stored[row, 0:block_bytes], qtype, bits)
    return stored


def broken_ids(count: int) -> list[int]:
    """Rows whose first block's d is infinite, then NaN."""
    return [count // 2 + 1, count // 2 + 2] if count >= 5 else []


def set_d(block: np.ndarray, qtype: Q, bits: int) -> None:
    """Write a block's float16 d: its first two bytes, or IQ1_M's four top nibbles of its scale words."""
    if qtype != Q.IQ1_M:
        block[0:2] = np.array([bits], dtype="<u2").view(np.uint8)
        return
    words = block[48:56].view("<u2").copy()
    for w in range(4):
        words[w] = (words[w] & 0x0FFF) | (((bits >> (4 * w)) & 0xF) << 12)
    block[48:56] = words.view(np.uint8)


# Bytes of a group's block: quants_iq.h's top (stored, 16 rows: 1056, 1184, 1312, 800, 896).
GROUP_BLOCK_BYTES = {Q.IQ2_XXS: 1120, Q.IQ2_XS: 1248, Q.IQ2_S: 1824, Q.IQ1_S: 1184, Q.IQ1_M: 1248}


def grouped_screen(stored: np.ndarray, qtype: Q, width: int) -> tuple[stored_search.StoredScreen, np.ndarray]:
    """The grouped first pass over ``stored`` as a table opens it, and gguf's float64 numbers."""
    with np.errstate(invalid="ignore", over="ignore"):
        numbers = dequantize(stored, qtype).astype(np.float64)
        lengths = np.linalg.norm(numbers, axis=1)
    kind = stored_search.GRID_KINDS[qtype.name]
    groups = copy_in_groups(stored, kind, width, _quants)
    screen = stored_search.StoredScreen(stored, kind, lengths, 0.0, quantised_width=width, groups=groups)
    return screen, numbers


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_rows_are_ggufs_numbers_bit_for_bit(qtype: Q) -> None:
    """Finite blocks, and random bytes (float16 d infinite or NaN in some): every bit of every float32."""
    rng = np.random.default_rng(int(qtype))
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    special = []
    for stored in (blocks_of(qtype, 700, 1024, seed=3), rng.integers(0, 256, (6000, block_bytes), dtype=np.uint8)):
        with np.errstate(invalid="ignore", over="ignore"):
            expected = dequantize(stored, qtype).reshape(stored.shape[0], -1)
        out = np.empty(expected.shape, dtype=np.float32)
        _quants.dequantise(np.ascontiguousarray(stored), stored_search.GRID_KINDS[qtype.name], out)
        np.testing.assert_array_equal(out.view(np.uint32), expected.view(np.uint32))
        special += [np.isnan(expected).any(), np.isinf(expected).any()]
    assert special[0] and special[1] and special[2]  # infinite and NaN d were reached (random bytes: NaN)


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
@pytest.mark.parametrize(("count", "width"), [(3, 256), (15, 512), (16, 768), (17, 1024), (1013, 768)])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(qtype: Q, count: int, width: int) -> None:
    stored = blocks_of(qtype, count, width, seed=count + width)
    screen, numbers = grouped_screen(stored, qtype, width)
    # The layout quants_iq.h gives, per 16 rows and block of 256 numbers: d, the odd integers, the planes, minus bits.
    assert screen.integer and screen.groups_bytes == -(-count // 16) * (width // 256) * GROUP_BLOCK_BYTES[qtype]
    query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
    exact = exact_cosines(numbers, screen.lengths, query)
    scores = screen.scores(query)
    error = np.abs(scores - exact)
    assert error.max() <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    assert error.max() > 0  # the bound is checked against real rounding
    assert (scores[zero_ids(count) + broken_ids(count)] == 0).all()  # rows pointing nowhere
    # Far from 1 and very uneven queries (other steps), and one too large for the integer query (the
    # float scan of the stored blocks): all within the bound.
    for size in (1e-20, 1e20, 1e36):
        far = query * np.float32(size)
        far[:32] *= np.float32(1e-6)
        error = np.abs(screen.scores(far) - exact_cosines(numbers, screen.lengths, far))
        assert error.max() <= screen.error_bound(float(np.linalg.norm(far.astype(np.float64))))


@grouped_here
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_every_sixteen_numbers_count_in_the_grouped_scan(qtype: Q) -> None:
    """A query that is zero but for 16 numbers, for each 16 in turn: each row's score must be that part of
    its cosine (a dropped step, a wrong scale or sign, or a misplaced offset is far off)."""
    width = 512
    stored = blocks_of(qtype, 37, width, seed=5)
    screen, numbers = grouped_screen(stored, qtype, width)
    live = np.isfinite(screen.lengths) & (screen.lengths > 0)
    for start in range(0, width, 16):
        query = np.zeros(width, dtype=np.float32)
        query[start : start + 16] = np.random.default_rng(start).standard_normal(16)
        exact = exact_cosines(numbers, screen.lengths, query)
        bound = screen.error_bound(float(np.linalg.norm(query)))
        assert np.abs(screen.scores(query)[live] - exact[live]).max() <= bound
        assert np.abs(exact).max() > 100 * bound


def near_tie_blocks(qtype: Q, seed: int) -> np.ndarray:
    """3,001 random rows: row 50, two exact copies of it (140, 141), and 40 copies with one grid index
    bit flipped (100-139), each cosine with row 50 distinct."""
    stored = blocks_of(qtype, 3001, 512, seed=seed)
    stored[[140, 141]] = stored[50]
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    rng = np.random.default_rng(seed)
    original = dequantize(stored[50:51], qtype).astype(np.float64)[0]
    taken: list[float] = []
    for row in range(100, 140):
        while True:
            stored[row] = stored[50]
            stored[row, int(rng.integers(0, 2)) * block_bytes + int(rng.choice(GRID_BYTES[qtype]))] ^= 1
            moved = dequantize(stored[row : row + 1], qtype).astype(np.float64)[0]
            cosine = float(moved @ original / np.linalg.norm(moved) / np.linalg.norm(original))
            if cosine < 1 and all(abs(cosine - other) > 1e-12 for other in taken):
                taken.append(cosine)
                break
    return stored


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_near_ties_come_out_as_a_float64_search_orders_them(tmp_path: Path, qtype: Q) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype) + 10)
    with np.errstate(invalid="ignore", over="ignore"):
        numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        screen = table.screen
        if _quants.grouped_scan():
            assert screen.groups_at_open and screen.bits is table.rows.raw
            assert f"a copy of its {qtype.name} blocks sixteen rows at a time, made at open" in table.search_method()
        ids, cosines = float64_top_k(numbers, numbers[50], K, (50,))
        assert set(ids[:2]) == {140, 141} and set(ids[2:]) <= set(range(100, 140))
        assert np.min(np.diff(-cosines[2:])) < screen.error_bound(1.0)  # closer than the first pass tells
        result = table.neighbours(50, k=K)
        assert [n.id for n in result.neighbours] == ids
        np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
        vector = numbers[50] + 0.01 * np.random.default_rng(2).standard_normal(512)
        ids, _ = float64_top_k(numbers, vector, K, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
        for token_id in (1, 7, 2999):  # 3,001 rows: the last group holds 9 (rows 0 and 3000 are zero)
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
        nowhere = set(zero_ids(3001) + broken_ids(3001))
        assert not nowhere & {n.id for n in table.neighbours(3, k=60).neighbours}
    finally:
        table.close()


@pytest.mark.parametrize("qtype", [Q.IQ2_XXS, Q.IQ1_M], ids=["IQ2_XXS", "IQ1_M"])
def test_builds_without_vnni_keep_the_bfloat16_copy_and_the_answers(tmp_path: Path, qtype: Q, other_build: str) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype) + 20)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        assert not table.screen.quantised and table.screen.groups is None
        assert "bfloat16 roundings" in table.search_method()
        for token_id in (50, 7, 2999):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@grouped_here
def test_a_grouped_table_scanned_by_another_build_reads_its_blocks_in_float32(other_build: str) -> None:
    """Groups made where VNNI runs, scanned after a switch to a build without it: the float scan of the
    stored blocks, within the same bound."""
    _quants.use_build("best")
    stored = blocks_of(Q.IQ2_S, 100, 512, seed=8)
    screen, numbers = grouped_screen(stored, Q.IQ2_S, 512)
    _quants.use_build(other_build)
    query = np.random.default_rng(9).standard_normal(512).astype(np.float32)
    error = np.abs(screen.scores(query) - exact_cosines(numbers, screen.lengths, query))
    assert error.max() <= screen.error_bound(float(np.linalg.norm(query)))
