"""NVFP4, TQ1_0, IQ3_XXS and IQ3_S tables, copied sixteen rows at a time at open and scanned by AVX-512
VNNI, answer as a float64 search over gguf's dequantised values; their C dequantiser gives gguf's numbers
bit for bit.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute force
over its numbers.  The tables: the GPT-2-shaped fixture's rows (TQ1_0 by gguf's own quantiser, NVFP4 and
the IQ3s as random blocks with finite scales) and random blocks with near ties, row counts that are not multiples of
16, widths of one to four blocks, rows that are all zero, rows whose scale is infinite or NaN, every
NVFP4 scale byte; and the builds without VNNI, which keep the bfloat16 copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize, quantize

from embedexplorer import open_table
from embedexplorer.core.search import stored_search
from embedexplorer.core.search.fp4_ternary_groups import FP4_TERNARY_KINDS
from embedexplorer.core.search.group_copy import copy_in_groups

from ..gguf_fixture import float64_top_k, random_blocks, write_gguf
from .grouped_rows import exact_cosines, zero_ids

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")

TYPES = [Q.NVFP4, Q.TQ1_0, Q.IQ3_XXS, Q.IQ3_S]
BLOCK = {Q.NVFP4: (64, 36), Q.TQ1_0: (256, 54), Q.IQ3_XXS: (256, 98), Q.IQ3_S: (256, 110)}
# Byte ranges, inside one block, of each type's codes (a low bit there moves a number or a few).
CODE_BYTES = {Q.NVFP4: (4, 36), Q.TQ1_0: (0, 52), Q.IQ3_XXS: (2, 66), Q.IQ3_S: (2, 66)}
K = 10


def grouped(qtype: Q) -> bool:
    return bool(_quants.grouped_scan())


needs_groups = pytest.mark.skipif(
    not all(grouped(t) for t in TYPES), reason="this CPU has no AVX-512 VNNI: these keep a bfloat16 copy"
)


def stored_rows(qtype: Q, count: int, width: int, seed: int) -> np.ndarray:
    """Random rows of ``qtype`` of lengths about 0.3 to 3, with all-zero rows at ``zero_ids``."""
    rng = np.random.default_rng(seed)
    if qtype == Q.TQ1_0:
        rows = rng.standard_normal((count, width)).astype(np.float32)
        rows *= np.exp(rng.uniform(-1.2, 1.1, (count, 1))).astype(np.float32)
        rows[zero_ids(count)] = 0.0
        return np.asarray(quantize(rows, qtype))
    stored = random_blocks(count, width, qtype, rng, (0.002, 0.05))
    stored[zero_ids(count)] = 0
    return stored


def screen_for(stored: np.ndarray, qtype: Q, width: int) -> tuple[stored_search.StoredScreen, np.ndarray]:
    """The first pass over ``stored`` rows as a table opens them (with the groups), and gguf's numbers."""
    numbers = dequantize(stored, qtype).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        lengths = np.linalg.norm(numbers, axis=1)
    kind = FP4_TERNARY_KINDS[qtype.name]
    groups = copy_in_groups(stored, kind, width, _quants)
    screen = stored_search.StoredScreen(stored, kind, lengths, 0.0, quantised_width=width, groups=groups)
    assert screen.integer
    return screen, numbers


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_dequantise_gives_ggufs_numbers_bit_for_bit(qtype: Q) -> None:
    numbers, block_bytes = BLOCK[qtype]
    rng = np.random.default_rng(int(qtype))
    blocks = rng.integers(0, 256, size=(4096, block_bytes), dtype=np.uint8)
    if qtype == Q.NVFP4:  # every scale byte, 0x7F (zero), 0xFF (240) and the subnormal ones among them
        blocks[:256, 0] = np.arange(256)
        blocks[256:512, 1:4] = np.arange(256)[:, None]
    else:  # d: random float16 bits, infinities, NaN, subnormals and signed zeros among them
        blocks[:4, 52:54] = np.array([0x7C00, 0xFC00, 0x7E00, 0x8000], dtype="<u2").view(np.uint8).reshape(4, 2)
    ours = np.empty((4096, numbers), dtype=np.float32)
    _quants.dequantise(blocks, FP4_TERNARY_KINDS[qtype.name], ours)
    theirs = np.asarray(dequantize(blocks, qtype), dtype=np.float32)
    assert theirs.shape == ours.shape
    nan = np.isnan(theirs)
    np.testing.assert_array_equal(np.isnan(ours), nan)
    np.testing.assert_array_equal(ours.view(np.uint32)[~nan], theirs.view(np.uint32)[~nan])  # signed zeros too
    # The reader's rows for the exact pass are these.
    assert qtype.name in stored_search.DEQUANTISED_KINDS


@needs_groups
@pytest.mark.parametrize("blocks", [1, 2, 3, 4])
@pytest.mark.parametrize("count", [3, 15, 16, 17, 1013])
@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(qtype: Q, count: int, blocks: int) -> None:
    width = blocks * BLOCK[qtype][0]
    stored = stored_rows(qtype, count, width, seed=count + width)
    screen, numbers = screen_for(stored, qtype, width)
    assert screen.groups is not None and screen.groups.nbytes >= stored.nbytes
    query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
    exact = exact_cosines(numbers, screen.lengths, query)
    scores = screen.scores(query)
    bound = screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    assert np.abs(scores - exact).max() <= bound
    assert np.abs(scores - exact).max() > 0  # the bound is checked against real rounding
    assert (scores[zero_ids(count)] == 0).all()  # all-zero rows point nowhere
    # Far from 1 and very uneven queries: the runs' steps are other powers of two; past 2^74 a
    # query is scored in float64 (quants_fp4_ternary.h).
    for size in (1e-20, 1e20, 1e25):
        far = query * np.float32(size)
        far[:32] *= np.float32(1e-6)
        error = np.abs(screen.scores(far) - exact_cosines(numbers, screen.lengths, far))
        assert error.max() <= screen.error_bound(float(np.linalg.norm(far.astype(np.float64))))


@pytest.fixture
def without_vbmi() -> Iterator[None]:
    """NVFP4 scanned by vpshufb: as on a CPU with VNNI but no VBMI."""
    _quants.fp4t_use_vbmi(False)
    yield
    _quants.fp4t_use_vbmi(True)


@needs_groups
@pytest.mark.parametrize("count", [17, 1013])
def test_nvfp4_without_vbmi_is_within_the_bound_too(count: int, without_vbmi: None) -> None:
    assert grouped(Q.NVFP4) and grouped(Q.TQ1_0)
    stored = stored_rows(Q.NVFP4, count, 768, seed=count)
    screen, numbers = screen_for(stored, Q.NVFP4, 768)
    for seed in range(3):
        query = np.random.default_rng(seed).standard_normal(768).astype(np.float32)
        error = np.abs(screen.scores(query) - exact_cosines(numbers, screen.lengths, query))
        assert 0 < error.max() <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))


@needs_groups
@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_every_piece_counts_in_the_grouped_scan(qtype: Q) -> None:
    """A query that is zero but for 16 numbers, for each 16 in turn: each row's score must be that
    piece's part of its cosine (a dropped, mis-placed or mis-scaled piece or digit is far off)."""
    width = 512
    stored = stored_rows(qtype, 37, width, seed=5)
    screen, numbers = screen_for(stored, qtype, width)
    live = screen.lengths > 0
    for piece in range(width // 16):
        query = np.zeros(width, dtype=np.float32)
        query[16 * piece : 16 * piece + 16] = np.random.default_rng(piece).standard_normal(16)
        scores = screen.scores(query)
        exact = numbers[live] @ query.astype(np.float64) / screen.lengths[live]
        bound = screen.error_bound(float(np.linalg.norm(query)))
        assert np.abs(scores[live] - exact).max() <= bound
        assert np.abs(exact).max() > 100 * bound


@needs_groups
@pytest.mark.parametrize(("qtype", "most"), [(Q.IQ3_XXS, 1.09), (Q.IQ3_S, 1.05)], ids=["IQ3_XXS", "IQ3_S"])
def test_the_iq3_copies_keep_the_grid_indices_as_stored(qtype: Q, most: float) -> None:
    """The IQ3 copies hold each grid index as the file does, plus a bit a number for its sign (IQ3_XXS's signs are
    seven bits an eight in the file): 1.08 and 1.04 times the stored bytes at GPT-2's width and 16 rows a group,
    where a 4-bit code a number took 1.41 and 1.25 times (the memory a large table's copy takes, and reads)."""
    width = 768
    stored = stored_rows(qtype, 1024, width, seed=9)
    screen, numbers = screen_for(stored, qtype, width)
    assert screen.groups is not None
    assert screen.groups.nbytes <= most * stored.nbytes
    query = np.random.default_rng(3).standard_normal(width).astype(np.float32)
    error = np.abs(screen.scores(query) - exact_cosines(numbers, screen.lengths, query))
    assert error.max() <= screen.error_bound(float(np.linalg.norm(query)))


@needs_groups
@pytest.mark.parametrize(
    ("qtype", "d_at"), [(Q.TQ1_0, 52), (Q.IQ3_XXS, 0), (Q.IQ3_S, 0)], ids=["TQ1_0", "IQ3_XXS", "IQ3_S"]
)
def test_rows_with_infinite_or_nan_scales_point_nowhere(qtype: Q, d_at: int) -> None:
    stored = stored_rows(qtype, 40, 512, seed=8)
    for row, bits in ((3, 0x7C00), (17, 0xFC00), (33, 0x7E00)):
        stored[row, d_at : d_at + 2] = np.array([bits], dtype="<u2").view(np.uint8)
    screen, numbers = screen_for(stored, qtype, 512)
    query = np.random.default_rng(2).standard_normal(512).astype(np.float32)
    scores = screen.scores(query)
    assert (scores[[3, 17, 33]] == 0).all() and np.isfinite(scores).all()
    live = np.isfinite(screen.lengths) & (screen.lengths > 0)
    exact = exact_cosines(numbers, screen.lengths, query)
    assert np.abs(scores[live] - exact[live]).max() <= screen.error_bound(float(np.linalg.norm(query)))


def near_tie_blocks(qtype: Q, rows: int, width: int, seed: int) -> np.ndarray:
    """Random rows with exact copies of row 50 (140, 141) and 40 rows (100-139) one step away from it,
    each moving the cosine by a different amount, far less than the first pass's bound: NVFP4 with one
    code's low bit flipped; TQ1_0 (whose few values give few distinct moves) with one block's d moved
    by 1 to 40 units in its last place."""
    rng = np.random.default_rng(seed)
    stored = np.array(stored_rows(qtype, rows, width, seed))
    stored[[140, 141]] = stored[50]
    first, last = CODE_BYTES[qtype]
    per_block, block_bytes = BLOCK[qtype]
    original = dequantize(stored[50:51], qtype).astype(np.float64)[0]
    taken: list[float] = []
    for row in range(100, 140):
        while True:
            stored[row] = stored[50]
            block = int(rng.integers(0, width // per_block)) * block_bytes
            if qtype == Q.TQ1_0:
                d = stored[row, block + 52 : block + 54].view("<u2")
                d += np.uint16(rng.integers(1, 41))
            else:
                stored[row, block + int(rng.integers(first, last))] ^= 1
            moved = dequantize(stored[row : row + 1], qtype).astype(np.float64)[0]
            cosine = float(moved @ original / np.linalg.norm(moved) / np.linalg.norm(original))
            if cosine < 1 and all(abs(cosine - other) > 1e-12 for other in taken):
                taken.append(cosine)
                break
    return stored


@pytest.fixture(params=["best", "avx512f-int16", "avx512f-float", "avx2", "plain"])
def build(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each build this CPU runs: the best (groups where VNNI is), and the ones without VNNI, whose
    NVFP4 and TQ1_0 tables keep the bfloat16 copy."""
    used = _quants.use_build(request.param)
    if request.param != "best" and used != request.param:
        _quants.use_build("best")
        pytest.skip(f"this CPU does not run the {request.param} build")
    yield used
    _quants.use_build("best")


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_near_ties_come_out_in_float64_order_on_every_build(tmp_path: Path, qtype: Q, build: str) -> None:
    stored = near_tie_blocks(qtype, 3001, 512, seed=61)  # 3,001 rows: the last group holds 9
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "ties.gguf", stored, qtype)))
    try:
        grouped_here = grouped(qtype)
        assert (table.screen.groups is not None) == grouped_here
        assert table.screen.quantised == grouped_here  # else the bfloat16 copy
        for k in (12, 13, 42):
            ids, cosines = float64_top_k(numbers, numbers[50], k, (50,))
            assert set(ids[:2]) == {140, 141} and set(ids[2:]) <= set(range(100, 140))
            result = table.neighbours(50, k=k).neighbours
            assert [n.id for n in result] == ids
            np.testing.assert_allclose([n.cosine for n in result], cosines, rtol=0, atol=1e-6)
    finally:
        table.close()


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_the_gpt2_table_quantised_answers_as_float64(tmp_path: Path, gpt2_table, qtype: Q) -> None:  # type: ignore[no-untyped-def]
    rows = np.array(gpt2_table.rows[:20_003], dtype=np.float32)  # 1,250 groups and 3 rows
    rows[[5, 20_002]] = 0.0
    if qtype == Q.TQ1_0:
        stored = np.asarray(quantize(rows, qtype))
    else:  # gguf cannot quantise to NVFP4 or the IQ3s: their scales over random codes, and two zero rows
        stored = random_blocks(20_003, 768, qtype, np.random.default_rng(4), (0.002, 0.05))
        stored[[5, 20_002]] = 0
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"gpt2-{qtype.name}.gguf", stored, qtype)))
    try:
        if grouped(qtype):
            assert table.screen.groups is not None
            assert "sixteen rows at a time, made at open" in table.search_method()
        for token_id in (1000, 0, 20_001, 19_999):
            ids, cosines = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            result = table.neighbours(token_id, k=K).neighbours
            assert [n.id for n in result] == ids
            np.testing.assert_allclose([n.cosine for n in result], cosines, rtol=0, atol=1e-6)
        vector = numbers[7] + 0.02 * np.random.default_rng(3).standard_normal(768)
        ids, _ = float64_top_k(numbers, vector, K, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
        assert not {5, 20_002} & {n.id for n in table.neighbours(3, k=50).neighbours}
    finally:
        table.close()


def test_the_scan_without_groups_is_scored_in_float64() -> None:
    """quant_scores given no groups (or on a build without VNNI) scores every row in float64: well
    within the bound, whatever the build."""
    for qtype in TYPES:
        width = 512
        stored = stored_rows(qtype, 50, width, seed=11)
        screen, numbers = screen_for(stored, qtype, width)
        screen.groups = None
        query = np.random.default_rng(6).standard_normal(width).astype(np.float32)
        scores = screen.scores(query)
        exact = exact_cosines(numbers, screen.lengths, query)
        assert np.abs(scores - exact).max() <= 1e-6 * float(np.linalg.norm(query))
