"""GGUF quantised tables scanned in their stored blocks answer as a float64 search over gguf's dequantised values.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64
brute force over its numbers. Tables hold exact ties (copies of a row) and near ties: copies
with one stored number moved by one quantisation step, whose cosines with the original differ
by less than the first pass's error bound, so only the exact rescoring can order them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.search import stored_search
from embedexplorer.core.search.iq_groups import GRID_KINDS

from ..gguf_fixture import float64_top_k, quantised_rows, write_gguf

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")

TYPES = [Q.Q8_0, Q.Q4_0, Q.Q4_K, Q.Q6_K]
READ_TYPES = [*TYPES, Q.Q5_K]  # dequantised by the C code (Q5_K is scanned by its grouped copy: test_q5_k_groups)
# Byte ranges, inside one block, of each type's quantised numbers (their low bit moves one number by one step).
NUMBER_BYTES = {Q.Q8_0: (2, 34), Q.Q4_0: (2, 18), Q.Q4_K: (16, 144), Q.Q5_K: (16, 176), Q.Q6_K: (0, 128)}
BLOCK_BYTES = {Q.Q8_0: 34, Q.Q4_0: 18, Q.Q4_K: 144, Q.Q5_K: 176, Q.Q6_K: 210}
ROWS, WIDTH, K = 3000, 512, 12
ORIGINAL, COPIES, NEAR = 50, (140, 141), range(100, 140)


def near_tie_blocks(qtype: Q, seed: int) -> np.ndarray:
    """Random stored rows of ``qtype`` with exact copies of one row and 40 copies one step away from it.

    Two copies whose steps move the cosine exactly alike (the same number at another place) would
    tie in exact arithmetic and be ordered by float64 rounding alone: such a step is drawn again, so
    the near ties are all distinct, by far less than the first pass's bound and far more than float64's.
    """
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((ROWS, WIDTH)).astype(np.float32)
    stored = np.array(quantised_rows(rows, qtype, seed=seed))
    for copy in COPIES:
        stored[copy] = stored[ORIGINAL]
    first, last = NUMBER_BYTES[qtype]
    blocks = stored.shape[1] // BLOCK_BYTES[qtype]
    original = dequantize(stored[ORIGINAL : ORIGINAL + 1], qtype).astype(np.float64)[0]
    taken: list[float] = []
    for row in NEAR:
        while True:
            stored[row] = stored[ORIGINAL]
            byte = int(rng.integers(0, blocks)) * BLOCK_BYTES[qtype] + int(rng.integers(first, last))
            stored[row, byte] ^= 1
            moved = dequantize(stored[row : row + 1], qtype).astype(np.float64)[0]
            cosine = float(moved @ original / np.linalg.norm(moved) / np.linalg.norm(original))
            if cosine < 1 and all(abs(cosine - other) > 1e-12 for other in taken):
                taken.append(cosine)
                break
    return stored


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_the_scan_is_within_its_bound_of_gguf_dequantised_rows(qtype: Q, build: str) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype))
    numbers = dequantize(stored, qtype).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    spread = stored_search.quantised_spread(stored, WIDTH, lengths) if qtype == Q.Q4_K else None
    screen = stored_search.StoredScreen(
        stored, stored_search.QUANT_KINDS[qtype.name], lengths, 0.0, quantised_width=WIDTH, spread=spread
    )
    assert screen.integer  # the integer scan where this build has it
    query = np.random.default_rng(1).standard_normal(WIDTH).astype(np.float32)
    scores = screen.scores(query)
    exact = numbers @ query.astype(np.float64) / lengths
    bound = screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    assert np.abs(scores - exact).max() <= bound
    assert np.abs(scores - exact).max() > 0
    # A query of numbers far from 1 (the integer scan's steps are powers of two): still within the bound.
    for size in (1e-20, 1e20):
        far = query * np.float32(size)
        error = np.abs(screen.scores(far) - numbers @ far.astype(np.float64) / lengths).max()
        assert error <= screen.error_bound(float(np.linalg.norm(far.astype(np.float64))))


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_near_ties_come_out_as_a_float64_search_orders_them(tmp_path: Path, qtype: Q, build: str) -> None:
    stored = near_tie_blocks(qtype, seed=int(qtype) + 10)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    screen = table.screen
    assert screen.quantised and screen.bits is table.rows.raw  # the stored blocks, no copy
    assert "blocks as stored" in table.search_method()
    ids, cosines = float64_top_k(numbers, numbers[ORIGINAL], K, (ORIGINAL,))
    # The near ties are real: neighbours closer to each other than the first pass can tell apart.
    assert set(ids[:2]) == set(COPIES) and set(ids[2:]) <= set(NEAR)
    assert np.min(np.diff(-cosines[2:])) < screen.error_bound(1.0)
    result = table.neighbours(ORIGINAL, k=K)
    assert [n.id for n in result.neighbours] == ids
    np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
    # A vector near the original (not a row): the same order as the oracle's.
    vector = numbers[ORIGINAL] + 0.01 * np.random.default_rng(2).standard_normal(WIDTH)
    ids, _ = float64_top_k(numbers, vector, K, ())
    assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
    for token_id in (0, 2999):
        ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
        assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids


def test_without_the_quantised_scan_a_table_answers_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = near_tie_blocks(Q.Q4_K, seed=7)
    numbers = dequantize(stored, Q.Q4_K).astype(np.float64)
    path = write_gguf(tmp_path / "q4k.gguf", stored, Q.Q4_K)
    scanned = open_table(str(path))
    monkeypatch.setattr(stored_search, "_quants", None)
    rounded = open_table(str(path))
    assert scanned.screen.quantised and not rounded.screen.quantised  # bfloat16 roundings instead
    for token_id in (ORIGINAL, 7, 2999):
        ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
        assert [n.id for n in scanned.neighbours(token_id, k=K).neighbours] == ids
        assert [n.id for n in rounded.neighbours(token_id, k=K).neighbours] == ids


@pytest.mark.parametrize("width", [33, 64, 95, 775])
@pytest.mark.parametrize("kind", [0, 1], ids=["bfloat16", "float16"])
def test_16_bit_rows_of_any_width_are_scored_within_the_bound(width: int, kind: int) -> None:
    """The bfloat16 scan reads 32 numbers to a load (float16 16): widths with tails of every size."""
    dtype = torch.bfloat16 if kind == 0 else torch.float16
    rows = torch.randn(500, width, generator=torch.Generator().manual_seed(width)).to(dtype)
    rows[3] = rows[4]
    bits = rows.view(torch.int16).numpy().view(np.uint16)
    numbers = rows.to(torch.float64).numpy()
    lengths = np.linalg.norm(numbers, axis=1)
    screen = stored_search.StoredScreen(bits, kind, lengths, 0.0)
    query = np.random.default_rng(width).standard_normal(width).astype(np.float32)
    scores = screen.scores(query)
    exact = numbers @ query.astype(np.float64) / lengths
    assert np.abs(scores - exact).max() <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    assert scores[3] == scores[4]  # equal rows score exactly alike


def _rows_before_a_closed_page(bits: np.ndarray, offset: int) -> tuple[np.ndarray, object]:
    """A copy of ``bits`` that starts ``offset`` bytes past a 64-byte line and whose last byte is in the last line
    before a page that can't be read (mprotect: a read past the line is a crash, not a quiet wrong number); and
    the map that holds it."""
    import ctypes
    import mmap

    page = mmap.PAGESIZE
    pages = -(-(bits.nbytes + 128) // page)
    region = mmap.mmap(-1, (pages + 1) * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    assert libc.mprotect(ctypes.c_void_p(base + pages * page), page, 0) == 0
    end = pages * page - 64 + ((offset + bits.nbytes) % 64 or 64)
    copy = np.frombuffer(region, dtype=np.uint8, count=bits.nbytes, offset=end - bits.nbytes)
    copy = copy.view(np.uint16).reshape(bits.shape)
    copy[:] = bits
    assert copy.ctypes.data % 64 == offset
    return copy, region


@pytest.mark.parametrize("width", [32, 40, 64, 96, 768, 800])
@pytest.mark.parametrize("offset", [2, 8, 16, 32, 56, 62])
def test_bfloat16_rows_anywhere_in_a_line_are_scored_as_on_a_line(width: int, offset: int) -> None:
    """A file's table rarely starts on a 64-byte line (GGUF aligns to 32 bytes, safetensors to 8): the scan reads
    such rows by whole lines put together again. Scores are the same to the bit as for rows on a line, within the
    bound of float64's, and no read goes past the line that holds the table's last byte (the page after is shut).
    Rows of 40 numbers start at every offset in turn, on a line too, and end in a tail of 8."""
    rows = torch.randn(203, width, generator=torch.Generator().manual_seed(width + offset)).to(torch.bfloat16)
    rows[7] = rows[8]
    numbers = rows.to(torch.float64).numpy()
    lengths = np.linalg.norm(numbers, axis=1)
    aligned = np.empty(rows.numel() + 32, dtype=np.uint16)
    start = (-aligned.ctypes.data % 64) // 2
    on_a_line = aligned[start : start + rows.numel()].reshape(rows.shape)
    on_a_line[:] = rows.view(torch.int16).numpy().view(np.uint16)
    assert on_a_line.ctypes.data % 64 == 0
    shifted, region = _rows_before_a_closed_page(on_a_line, offset)
    query = np.random.default_rng(offset).standard_normal(width).astype(np.float32)
    expected = stored_search.StoredScreen(on_a_line, 0, lengths, 0.0).scores(query)
    screen = stored_search.StoredScreen(shifted, 0, lengths, 0.0)
    scores = screen.scores(query)
    np.testing.assert_array_equal(scores, expected)
    exact = numbers @ query.astype(np.float64) / lengths
    assert np.abs(scores - exact).max() <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    assert scores[7] == scores[8]
    del shifted, screen
    region.close()  # type: ignore[attr-defined]


# Where each type keeps its float16 scale(s) in a block: set to infinity and NaN in a few blocks below.
SCALE_BYTES = {Q.Q8_0: (0,), Q.Q4_0: (0,), Q.Q4_K: (0, 2), Q.Q5_K: (0, 2), Q.Q6_K: (208,)}


@pytest.mark.parametrize("qtype", READ_TYPES, ids=[t.name for t in READ_TYPES])
def test_rows_read_from_the_file_are_ggufs_dequantised_numbers(tmp_path: Path, qtype: Q) -> None:
    """The C dequantiser gives, bit for bit, what gguf's ``dequantize`` gives (infinite and NaN scales too)."""
    stored = near_tie_blocks(qtype, seed=int(qtype) + 20)
    for row, bits in ((5, 0x7C00), (6, 0x7E00), (7, 0xFC00)):  # +inf, NaN, -inf
        for offset in SCALE_BYTES[qtype]:
            stored[row, offset : offset + 2] = np.array([bits], dtype="<u2").view(np.uint8)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    picked = [0, 5, 6, 7, 50, 140, 2999]
    with np.errstate(invalid="ignore"):  # gguf's own infinity times zero
        np.testing.assert_array_equal(table.rows[picked], dequantize(stored[picked], qtype))
        np.testing.assert_array_equal(table.rows[:], dequantize(stored, qtype))
    # Rows holding infinity or NaN point nowhere: they are never anyone's neighbour.
    assert not {5, 6, 7} & {n.id for n in table.neighbours(0, k=K).neighbours}


def test_a_q4_k_row_whose_offsets_cancel_keeps_the_float_scan_and_the_answers(tmp_path: Path) -> None:
    """A row whose numbers are d s q - m n with both terms large and their differences tiny (all
    zero but one) has a spread far over the integer scan's limit: the table is scanned in float32."""
    stored = near_tie_blocks(Q.Q4_K, seed=31)
    block = np.zeros(144, dtype=np.uint8)
    block[0:4] = np.array([0.01, 0.01], dtype="<f2").view(np.uint8)  # d = dmin
    block[4:8], block[8:12], block[12:16] = 4, 252, 196  # every scale 4, every min 60: 4 d q - 60 d
    block[16:] = 0xFF  # q = 15 everywhere: every number 0 ...
    block[16] = 0xFE  # ... but one, 4 d (14 - 15)
    stored[9] = np.tile(block, WIDTH // 256)
    numbers = dequantize(stored, Q.Q4_K).astype(np.float64)
    assert np.count_nonzero(numbers[9]) == WIDTH // 256
    table = open_table(str(write_gguf(tmp_path / "cancel.gguf", stored, Q.Q4_K)))
    assert table.screen.quantised and not table.screen.integer
    for token_id in (9, ORIGINAL, 3):
        ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
        assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_queries_at_the_integer_limits_are_within_the_bound(qtype: Q, build: str) -> None:
    """Runs of 32 whose largest number rounds to 2^14 steps (VNNI's split of it into two bytes is at its
    widest there), of either sign, of one power of two, and of zeros, beside ordinary runs."""
    stored = near_tie_blocks(qtype, seed=int(qtype) + 40)
    numbers = dequantize(stored, qtype).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    spread = stored_search.quantised_spread(stored, WIDTH, lengths) if qtype == Q.Q4_K else None
    screen = stored_search.StoredScreen(
        stored, stored_search.QUANT_KINDS[qtype.name], lengths, 0.0, quantised_width=WIDTH, spread=spread
    )
    rng = np.random.default_rng(int(qtype))
    query = rng.standard_normal(WIDTH).astype(np.float32)
    just_under_one = np.nextafter(np.float32(1), np.float32(0))
    runs = query.reshape(-1, 32)
    runs[0] = just_under_one  # every number rounds up to 2^14 steps
    runs[1] = -just_under_one
    runs[2, ::2], runs[2, 1::2] = just_under_one, -just_under_one
    runs[3] = 0.5  # a power of two: 2^13 steps
    runs[4] = 0.0
    runs[5] = rng.choice([-1, 1], 32) * just_under_one * rng.uniform(0.999, 1, 32).astype(np.float32)
    for size in (1.0, 2.0**-60, 2.0**60):  # powers of two keep each run's largest just under one
        scaled = query * np.float32(size)
        error = np.abs(screen.scores(scaled) - numbers @ scaled.astype(np.float64) / lengths).max()
        assert 0 < error <= screen.error_bound(float(np.linalg.norm(scaled.astype(np.float64))))


@pytest.mark.parametrize("width", [32, 480, 512, 800])
@pytest.mark.parametrize("qtype", [Q.Q8_0, Q.Q4_0], ids=["Q8_0", "Q4_0"])
def test_rows_of_32_number_blocks_of_any_count_are_within_the_bound(qtype: Q, width: int, build: str) -> None:
    """The integer scans take sixteen Q8_0 blocks' weights at a time and Q4_0's blocks two to a vector:
    counts of blocks below, at and past sixteen, odd (a Q4_0 block alone at the end) and even."""
    rows = np.random.default_rng(width).standard_normal((300, width)).astype(np.float32)
    stored = np.ascontiguousarray(quantised_rows(rows, qtype))
    numbers = dequantize(stored, qtype).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    screen = stored_search.StoredScreen(
        stored, stored_search.QUANT_KINDS[qtype.name], lengths, 0.0, quantised_width=width
    )
    query = np.random.default_rng(width + 1).standard_normal(width).astype(np.float32)
    error = np.abs(screen.scores(query) - numbers @ query.astype(np.float64) / lengths).max()
    assert 0 < error <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))


def test_a_q5_k_table_answers_as_a_float64_search_of_ggufs_numbers(tmp_path: Path) -> None:
    """Q5_K's first pass scans its copy sixteen rows at a time (AVX-512 VNNI) or its bfloat16 copy; the exact
    pass reads the rows by the C dequantiser."""
    stored = near_tie_blocks(Q.Q5_K, seed=51)
    numbers = dequantize(stored, Q.Q5_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "q5k.gguf", stored, Q.Q5_K)))
    assert table.screen.quantised == _quants.grouped_scan()  # else the bfloat16 copy's scan
    for token_id in (ORIGINAL, 0, 2999):
        ids, cosines = float64_top_k(numbers, numbers[token_id], K, (token_id,))
        result = table.neighbours(token_id, k=K)
        assert [n.id for n in result.neighbours] == ids
        np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)


def _every_read_kind() -> list[tuple[Q, int]]:
    from embedexplorer.core.search.stored_screen import DEQUANTISED_KINDS

    return [(Q[name], kind) for name, kind in sorted(DEQUANTISED_KINDS.items(), key=lambda item: item[1])]


@pytest.mark.parametrize(("qtype", "kind"), _every_read_kind(), ids=[q.name for q, _ in _every_read_kind()])
def test_the_exact_pass_dots_are_float64_dots_of_ggufs_numbers(qtype: Q, kind: int) -> None:
    """``dot_rows`` (the exact pass of a stored table's search) sums each chosen row's products with the query
    in float64 from the very numbers gguf's ``dequantize`` gives; ids repeat and come in any order."""
    rng = np.random.default_rng(kind)
    width = 512
    stored = np.ascontiguousarray(quantised_rows(rng.standard_normal((40, width)).astype(np.float32), qtype, seed=kind))
    query = rng.standard_normal(width)
    ids = np.array([39, 0, 7, 7, 21, 3], dtype=np.int64)
    dots = np.empty(ids.shape[0], dtype=np.float64)
    _quants.dot_rows(stored, kind, ids, query, dots)
    numbers = dequantize(stored[ids], qtype).astype(np.float64)
    expected = numbers @ query
    np.testing.assert_allclose(dots, expected, rtol=1e-12, atol=1e-12 * float(np.abs(numbers).sum(axis=1).max()))
    assert dots[2] == dots[3]  # one row twice: the same sum, in the same order


# The grid kinds whose blocks start with their float16 d (IQ1_M spreads its d over four words), IQ3s too.
_D_FIRST = ("IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_S", "IQ3_XXS", "IQ3_S")


@pytest.mark.parametrize(("qtype", "kind"), _every_read_kind(), ids=[q.name for q, _ in _every_read_kind()])
def test_the_exact_pass_gives_the_same_bits_in_every_build(qtype: Q, kind: int) -> None:
    """The AVX-512 exact pass (``quants_exact.h``) keeps the portable build's eight running sums and rounds
    each product and addition as it does: the same float64 bits for every row, odd scales too (an infinite,
    NaN, negative-zero or subnormal d), so a table's answers do not depend on the machine."""
    rng = np.random.default_rng(100 + kind)
    width = 768
    stored = np.ascontiguousarray(quantised_rows(rng.standard_normal((64, width)).astype(np.float32), qtype, seed=kind))
    if qtype.name in _D_FIRST:
        odd = np.array([np.inf, -np.inf, np.nan, -0.0, 6e-8, -65504.0], dtype=np.float16)
        stored[: odd.size, :2] = odd.view(np.uint8).reshape(-1, 2)
    query = rng.standard_normal(width)
    ids = np.arange(stored.shape[0], dtype=np.int64)
    dots = {}
    for build in ("plain", "best"):
        _quants.use_build(build)
        try:
            dots[build] = np.empty(ids.shape[0], dtype=np.float64)
            _quants.dot_rows(stored, kind, ids, query, dots[build])
        finally:
            _quants.use_build("best")
    assert np.array_equal(dots["plain"].view(np.uint64), dots["best"].view(np.uint64))
    assert np.isfinite(dots["best"][8:]).all()  # the ordinary rows gave numbers, not only NaN


def test_the_exact_pass_divides_by_each_rows_length_and_gives_rows_pointing_nowhere_zero() -> None:
    """Given the lengths and scales, ``dot_rows`` gives cosines times |query|: gguf's numbers' float64 dot over
    the row's float64 length, and 0 for a row whose scale is 0 (all zeros, or a NaN scale), whatever its dot."""
    rng = np.random.default_rng(7)
    width = 512
    stored = np.ascontiguousarray(quantised_rows(rng.standard_normal((12, width)).astype(np.float32), Q.IQ2_XXS))
    stored[5, :2] = np.array([np.nan], dtype=np.float16).view(np.uint8)
    numbers = dequantize(stored, Q.IQ2_XXS).astype(np.float64)
    lengths = np.sqrt(np.einsum("ij,ij->i", numbers, numbers))
    scale = np.where(np.isfinite(lengths), 1.0 / lengths, 0.0).astype(np.float32)
    query = rng.standard_normal(width)
    ids = np.array([11, 5, 0, 3], dtype=np.int64)
    cosines = np.empty(ids.shape[0], dtype=np.float64)
    _quants.dot_rows(stored, GRID_KINDS["IQ2_XXS"], ids, query, cosines, lengths, scale)
    expected = (numbers[ids] @ query) / lengths[ids]
    expected[1] = 0.0  # row 5: NaN d, so a NaN length and scale 0
    np.testing.assert_allclose(cosines, expected, rtol=1e-12, atol=1e-12)
    assert cosines[1] == 0.0
    with pytest.raises(ValueError, match="must come together"):
        _quants.dot_rows(stored, GRID_KINDS["IQ2_XXS"], ids, query, cosines, lengths)
    with pytest.raises(ValueError, match="one per row"):
        _quants.dot_rows(stored, GRID_KINDS["IQ2_XXS"], ids, query, cosines, lengths[:-1], scale)


def test_the_exact_pass_refuses_ids_outside_the_table_in_one_sentence() -> None:
    stored = np.zeros((4, 34), dtype=np.uint8)  # four Q8_0 rows of one block
    out = np.empty(1, dtype=np.float64)
    with pytest.raises(IndexError, match="row 4 is not in the table"):
        _quants.dot_rows(stored, 0, np.array([4], dtype=np.int64), np.zeros(32), out)
    with pytest.raises(ValueError, match="one float64 per id"):
        _quants.dot_rows(stored, 0, np.array([0, 1], dtype=np.int64), np.zeros(32), out)
