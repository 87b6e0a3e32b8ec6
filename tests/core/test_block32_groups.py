"""GGUF tables of 32-number blocks (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL) scanned by groups of 16 rows
(quants_groups32.h) answer as a float64 search over gguf's dequantised values.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute
force over its numbers.  The tables: random rows quantised by gguf's own quantiser (IQ4_NL, which it
cannot quantise, by a nearest-value quantiser here: its numbers are whatever gguf's dequantize
reads), the GPT-2-shaped fixture's rows and the bundled MiniLM's, near ties, row counts that are not
multiples of 16, widths of one to four blocks, rows that are zero and rows whose scales are
infinite or NaN.  Q8_0 and Q4_0 are grouped from their second query on, the others at open.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGML_QUANT_SIZES
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize, quantize

from embedexplorer import open_table
from embedexplorer.core.search import stored_screen, stored_search
from embedexplorer.core.search.block32_groups import Q4_0_KIND
from embedexplorer.core.search.group_copy import copy_in_groups

from ..gguf_fixture import float64_top_k, write_gguf
from .grouped_rows import exact_cosines, varied_rows, zero_ids

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")
VNNI = _quants.grouped_scan()
needs_vnni = pytest.mark.skipif(not VNNI, reason="this CPU has no AVX-512 VNNI: these types get a bfloat16 copy")

TYPES = [Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.IQ4_NL]
# Read as stored at a table's first query, by their groups from the second.
LATER = (Q.Q8_0, Q.Q4_0)
KINDS = {
    Q.Q8_0: stored_search.QUANT_KINDS["Q8_0"],
    Q.Q4_0: Q4_0_KIND,
    **{Q[name]: kind for name, kind in stored_search.BLOCK32_KINDS.items()},
}
IDS = [t.name for t in TYPES]
# llama.cpp's kvalues_iq4nl (ggml-common.h), what an IQ4_NL code stands for.
IQ4_NL_VALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], dtype=np.float32)
K = 10


def iq4_nl_blocks(rows: np.ndarray) -> np.ndarray:
    """``rows`` as IQ4_NL blocks (the gguf package has no quantiser for it): d the block's largest size
    over 127, each number the nearest of d times the 16 values."""
    x = np.asarray(rows, dtype=np.float32).reshape(-1, 32)
    d = (np.abs(x).max(axis=1) / 127).astype(np.float16)
    scaled = x / np.where(d == 0, 1, d.astype(np.float32))[:, None]
    codes = np.abs(scaled[..., None] - IQ4_NL_VALUES).argmin(axis=2).astype(np.uint8)
    out = np.zeros((x.shape[0], 18), dtype=np.uint8)
    out[:, :2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = codes[:, :16] | (codes[:, 16:] << 4)
    return out.reshape(rows.shape[0], -1)


def stored_rows(rows: np.ndarray, qtype: Q) -> np.ndarray:
    return iq4_nl_blocks(rows) if qtype == Q.IQ4_NL else np.asarray(quantize(rows, qtype))


def screen_for(stored: np.ndarray, qtype: Q, width: int) -> tuple[stored_search.StoredScreen, np.ndarray]:
    """The first pass as a table opens it (groups at open but for Q8_0 and Q4_0), and gguf's float64 numbers."""
    numbers = dequantize(stored, qtype).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    kind = KINDS[qtype]
    spread = stored_search.quantised_spread(stored, width, lengths, kind) if qtype in (Q.Q4_1, Q.Q5_1) else None
    groups = None if qtype in LATER else copy_in_groups(stored, kind, width, _quants)
    screen = stored_search.StoredScreen(stored, kind, lengths, 0.0, quantised_width=width, spread=spread, groups=groups)
    assert screen.integer
    return screen, numbers


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_c_dequantiser_gives_ggufs_numbers_bit_for_bit(qtype: Q) -> None:
    """Random bytes as blocks, scales of every kind: normal, subnormal, zero, negative, infinite, NaN."""
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    rng = np.random.default_rng(int(qtype))
    blocks = rng.integers(0, 256, size=(4000, block_bytes), dtype=np.uint8)
    halves = rng.uniform(-0.1, 0.1, size=(4000, 2)).astype(np.float16)
    halves[:8] = np.array([[0, 0], [np.inf, 1], [1, -np.inf], [np.nan, 0.5], [6e-8, -6e-8], [-0.0, 2], [65504, 1e-5],
                           [1e-7, np.nan]], dtype=np.float16)  # fmt: skip
    blocks[:, 0:2] = halves[:, :1].view(np.uint8)
    if qtype in (Q.Q4_1, Q.Q5_1):
        blocks[:, 2:4] = halves[:, 1:].view(np.uint8)
    rows = blocks.reshape(1000, 4 * block_bytes)
    expected = np.asarray(dequantize(rows, qtype), dtype=np.float32)
    out = np.empty((1000, 128), dtype=np.float32)
    _quants.dequantise(rows, KINDS[qtype], out)
    np.testing.assert_array_equal(out.view(np.uint32), expected.view(np.uint32))
    # And through the reader, as the exact pass reads rows.
    from embedexplorer.core.readers.gguf import _dequantize_rows

    np.testing.assert_array_equal(_dequantize_rows(rows, qtype).view(np.uint32), expected.view(np.uint32))


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
@pytest.mark.parametrize("width", [32, 64, 96, 128])
@pytest.mark.parametrize("count", [3, 15, 16, 17, 1013])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(qtype: Q, width: int, count: int) -> None:
    stored = stored_rows(varied_rows(count, width, seed=width + count, shifted=True), qtype)
    screen, numbers = screen_for(stored, qtype, width)
    query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
    exact = exact_cosines(numbers, screen.lengths, query)
    bound = screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    first = screen.scores(query)
    assert (screen.groups is None) == (qtype in LATER)  # their first query reads the blocks as stored
    later = screen.scores(query)
    assert screen.groups is not None
    assert screen.groups_bytes == _quants.groups_size(KINDS[qtype], count, width)
    assert screen.groups_bytes == -(-count // 16) * 16 * stored.shape[1]  # the stored bytes, no more
    for scores in (first, later):
        assert np.abs(scores - exact).max() <= bound
    assert np.abs(later - exact).max() > 0  # the bound is checked against real rounding
    assert (later[zero_ids(count)] == 0).all()
    # Far from 1 and very uneven queries: the runs' steps are other powers of two.
    for size in (1e-20, 1e20):
        far = query * np.float32(size)
        far[:16] *= np.float32(1e-6)
        error = np.abs(screen.scores(far) - exact_cosines(numbers, screen.lengths, far))
        assert error.max() <= screen.error_bound(float(np.linalg.norm(far.astype(np.float64))))


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_every_number_counts_in_the_grouped_scan(qtype: Q) -> None:
    """A query that is zero but for four numbers, for each four in turn (each of a block's vectors and
    nibbles): each row's grouped score must be those numbers' part of its cosine."""
    width = 64
    stored = stored_rows(varied_rows(37, width, seed=5, shifted=True), qtype)
    screen, numbers = screen_for(stored, qtype, width)
    live = screen.lengths > 0
    screen.scores(np.ones(width, dtype=np.float32))
    screen.scores(np.ones(width, dtype=np.float32))  # Q8_0's and Q4_0's groups come with their second query
    assert screen.groups is not None
    for four in range(width // 4):
        query = np.zeros(width, dtype=np.float32)
        query[4 * four : 4 * four + 4] = np.random.default_rng(four).standard_normal(4) + 3
        bound = screen.error_bound(float(np.linalg.norm(query)))
        exact = numbers[live] @ query.astype(np.float64) / screen.lengths[live]
        assert np.abs(screen.scores(query)[live] - exact).max() <= bound
        assert np.abs(exact).max() > 100 * bound


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_near_ties_come_out_in_float64_order(tmp_path: Path, qtype: Q) -> None:
    """Copies of one row with one stored code moved by one step:
    cosines closer together than the first pass can tell apart; only the exact pass orders them."""
    rng = np.random.default_rng(int(qtype) + 70)
    stored = stored_rows(rng.standard_normal((3003, 128)).astype(np.float32), qtype)
    original, copies, near = 50, (140, 141), range(100, 140)
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    first_code = block_bytes - 16
    stored[list(copies)] = stored[original]
    base = dequantize(stored[original : original + 1], qtype).astype(np.float64)[0]
    taken: list[float] = []
    for row in near:
        while True:
            stored[row] = stored[original]
            where = int(rng.integers(0, 4)) * block_bytes + int(rng.integers(first_code, block_bytes))
            stored[row, where] ^= 1 << int(rng.choice([0, 4]))  # one code one step: its low or high nibble
            moved = dequantize(stored[row : row + 1], qtype).astype(np.float64)[0]
            cosine = float(moved @ base / np.linalg.norm(moved) / np.linalg.norm(base))
            if 0.999 < cosine < 1 and all(abs(cosine - other) > 1e-12 for other in taken):
                taken.append(cosine)
                break
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    try:
        assert table.screen.quantised == (VNNI or qtype in LATER)
        ids, cosines = float64_top_k(numbers, numbers[original], 13, (original,))
        assert set(ids[:2]) == set(copies) and set(ids[2:]) <= set(near)
        assert np.min(np.diff(-cosines[2:])) < table.screen.error_bound(1.0)
        first = [n.id for n in table.neighbours(original, k=12).neighbours]
        later = [n.id for n in table.neighbours(original, k=13).neighbours]  # another k: asked afresh
        assert first == later[:12] == ids[:12] and later == ids
        assert (table.screen.groups is not None) == VNNI
        vector = numbers[original] + 0.01 * rng.standard_normal(128)
        ids, _ = float64_top_k(numbers, vector, K, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=K).neighbours] == ids
        for token_id in (0, 3002, 3000):  # the last group holds 11 rows
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_rows_with_infinite_or_nan_scales_point_nowhere(tmp_path: Path, qtype: Q) -> None:
    """Rows whose block scale (or min) is infinite or NaN have no length: they are never a neighbour,
    and the rows beside them in their group of 16 answer as the oracle's."""
    stored = stored_rows(varied_rows(40, 96, seed=8, shifted=True), qtype)
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    bad = {3: np.inf, 17: np.nan, 18: -np.inf, 39: np.nan}
    for row, value in bad.items():
        at = (row % 3) * block_bytes + (2 if qtype in (Q.Q4_1, Q.Q5_1) and row % 2 else 0)
        stored[row, at : at + 2] = np.array([value], dtype="<f2").view(np.uint8)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}-bad.gguf", stored, qtype)))
    try:
        for token_id in (4, 16, 19, 38, 4):
            ids, cosines = float64_top_k(numbers, numbers[token_id], 6, (token_id,))
            assert cosines[-1] > 0  # so a row pointing nowhere (cosine 0) is none of them
            assert [n.id for n in table.neighbours(token_id, k=6).neighbours] == ids
        for row in bad:
            scores = table.screen.scores(np.ones(96, dtype=np.float32))
            assert scores[row] == 0
    finally:
        table.close()


@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_builds_without_vnni_answer_the_same(tmp_path: Path, qtype: Q, other_build: str) -> None:
    """Opened on a build without the grouped scan, the table takes today's path (its blocks as stored
    for Q8_0 and Q4_0, a bfloat16 copy for the others); a table opened with its groups, then scanned by such a
    build, reads its blocks as stored: the same neighbours either way."""
    stored = stored_rows(varied_rows(2003, 128, seed=int(qtype), shifted=True), qtype)
    numbers = dequantize(stored, qtype).astype(np.float64)
    path = write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)
    table = open_table(str(path))
    try:
        assert table.screen.quantised == (qtype in LATER) and table.screen.groups is None
        for token_id in (7, 1, 2001, 7):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
        assert table.screen.groups is None
    finally:
        table.close()
    if not VNNI:
        return
    _quants.use_build("best")
    screen, _ = screen_for(stored, qtype, 128)
    query = np.random.default_rng(3).standard_normal(128).astype(np.float32)
    screen.scores(query), screen.scores(query)
    assert screen.groups is not None
    _quants.use_build(other_build)
    exact = exact_cosines(numbers, screen.lengths, query)
    assert np.abs(screen.scores(query) - exact).max() <= screen.error_bound(float(np.linalg.norm(query)))


@needs_vnni
@pytest.mark.parametrize("qtype", [Q.Q4_1, Q.Q5_1], ids=["Q4_1", "Q5_1"])
def test_a_table_whose_mins_cancel_its_codes_keeps_a_bfloat16_copy(tmp_path: Path, qtype: Q) -> None:
    """Rows whose d q and m nearly cancel (numbers near 0 from d 7 - 6.99): the grouped scan's bound would pass
    nearly every row to the exact pass, so the table takes its bfloat16 copy, and answers as the oracle."""
    rng = np.random.default_rng(12)
    codes = np.full((500, 64), 7, dtype=np.uint8)  # d 7 + m = 0.0117: most numbers nearly 0
    for row in range(500):
        codes[row, rng.integers(0, 64, size=3)] = rng.choice([6, 8], size=3)
    codes = codes.reshape(500, 2, 32)
    stored = np.zeros((500, 2, GGML_QUANT_SIZES[qtype][1]), dtype=np.uint8)
    stored[:, :, 0:4] = np.array([1.0, -6.99], dtype="<f2").view(np.uint8)
    stored[:, :, -16:] = codes[:, :, :16] | (codes[:, :, 16:] << 4)
    stored = stored.reshape(500, -1)
    numbers = dequantize(stored, qtype).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    assert stored_search.quantised_spread(stored, 64, lengths, KINDS[qtype]) is None
    table = open_table(str(write_gguf(tmp_path / "cancel.gguf", stored, qtype)))
    try:
        assert not table.screen.quantised and table.screen.groups is None
        # Rows alike but for three numbers tie exactly: the k best cosines are the oracle's, in its order.
        _, cosines = float64_top_k(numbers, numbers[9], K, (9,))
        got = table.neighbours(9, k=K).neighbours
        np.testing.assert_allclose([n.cosine for n in got], cosines, rtol=0, atol=1e-6)
    finally:
        table.close()


@needs_vnni
@pytest.mark.parametrize("qtype", TYPES, ids=IDS)
def test_the_gpt2_table_quantised_answers_as_float64(tmp_path: Path, gpt2_table, qtype: Q) -> None:  # type: ignore[no-untyped-def]
    rows = np.array(gpt2_table.rows[:20_003], dtype=np.float32)  # 1,250 groups and 3 rows
    rows[[5, 20_002]] = 0.0
    stored = stored_rows(rows, qtype)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"gpt2-{qtype.name.lower()}.gguf", stored, qtype)))
    try:
        for token_id in (1000, 0, 20_001, 19_999):
            ids, cosines = float64_top_k(numbers, numbers[token_id], K + 1, (token_id,))
            for k in (K, K + 1):  # Q8_0, Q4_0: the first answer from the blocks as stored, the later ones by groups
                result = table.neighbours(token_id, k=k)
                assert [n.id for n in result.neighbours] == ids[:k]
                np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines[:k], rtol=0, atol=1e-6)
        assert table.screen.groups is not None and "sixteen rows at a time" in table.search_method()
        assert not {5, 20_002} & {n.id for n in table.neighbours(3, k=50).neighbours}
    finally:
        table.close()


@needs_vnni
@pytest.mark.parametrize("qtype", [Q.Q5_0, Q.IQ4_NL], ids=["Q5_0", "IQ4_NL"])
def test_the_bundled_table_quantised_answers_as_float64(tmp_path: Path, minilm_table, qtype: Q) -> None:  # type: ignore[no-untyped-def]
    """MiniLM's 384 numbers a row: twelve blocks of 32."""
    stored = stored_rows(np.asarray(minilm_table.rows, dtype=np.float32), qtype)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / f"minilm-{qtype.name.lower()}.gguf", stored, qtype)))
    try:
        assert table.screen.groups_at_open
        for token_id in (minilm_table.query("king").id, minilm_table.query("paris").id, 30_521):
            ids, _ = float64_top_k(numbers, numbers[token_id], K, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=K).neighbours] == ids
    finally:
        table.close()


@needs_vnni
@pytest.mark.parametrize("qtype", LATER, ids=[t.name for t in LATER])
def test_a_table_larger_than_q4_ks_limit_is_grouped_too(monkeypatch: pytest.MonkeyPatch, qtype: Q) -> None:
    """Unlike Q4_K's, Q8_0's and Q4_0's groups pay at the Qwen-sized table too: no size limit, the same bound."""
    stored = stored_rows(varied_rows(100, 128, seed=9, shifted=True), qtype)
    screen, numbers = screen_for(stored, qtype, 128)
    monkeypatch.setattr(stored_screen, "_GROUPS_MAX_BYTES", stored.nbytes - 1)
    query = np.random.default_rng(4).standard_normal(128).astype(np.float32)
    first = screen.scores(query)
    assert screen.groups is None
    later = screen.scores(query)
    assert screen.groups is not None
    exact = exact_cosines(numbers, screen.lengths, query)
    for scores in (first, later):
        assert np.abs(scores - exact).max() <= screen.error_bound(float(np.linalg.norm(query)))


@needs_vnni
def test_rows_llama_cpp_quantised_to_q5_0_answer_as_float64(tmp_path: Path) -> None:
    """llama.cpp's own Q5_0 blocks (32 rows of MiniLM) and 5 copies of them, each with one code or one
    fifth bit moved (near ties): 37 rows, so the last group holds 5."""
    import base64
    import gzip
    import json

    data = Path(__file__).resolve().parents[1] / "data" / "llama_quants" / "blocks.json.gz"
    table_data = json.loads(gzip.decompress(data.read_bytes()))["tables"]["minilm-Q4_K_M-pure"]
    blocks = np.frombuffer(base64.b64decode(table_data["blocks"]), dtype=np.uint8).reshape(len(table_data["ids"]), -1)
    stored = np.concatenate([blocks, blocks[[3, 3, 9, 20, 31]]])
    # Bytes 2-5 of a block are its fifth bits, 6-21 its codes.
    for row, byte in zip(range(32, 37), (6, 22 + 3, 22 * 5 + 17, 22 * 7 + 2, 22 * 11 + 21), strict=True):
        stored[row, byte] ^= 1
    numbers = dequantize(stored, Q.Q5_0).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "llama-q5_0.gguf", stored, Q.Q5_0)))
    try:
        assert table.screen.groups_at_open
        for token_id, k in ((3, K), (0, K), (36, K), (20, K), (33, K), (31, 36)):
            ids, _ = float64_top_k(numbers, numbers[token_id], k, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=k).neighbours] == ids
    finally:
        table.close()


@pytest.mark.parametrize("qtype", [Q.Q4_1, Q.Q5_1], ids=["Q4_1", "Q5_1"])
def test_the_spread_is_each_rows_sum_of_d_q_plus_m_squared(qtype: Q) -> None:
    """The spread the bound rests on (quants_groups32.h's top): sum (|d| q + |m|)^2 over each row, the
    codes q read back from gguf's own numbers (q = (v - m) / d, exact for these scales)."""
    stored = stored_rows(varied_rows(50, 96, seed=21, shifted=True), qtype)
    numbers = dequantize(stored, qtype).astype(np.float64).reshape(50, 3, 32)
    blocks = stored.reshape(50, 3, -1)
    d = blocks[..., 0:2].copy().view("<f2").astype(np.float64)
    m = blocks[..., 2:4].copy().view("<f2").astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        codes = np.where(d == 0, 0, np.rint((numbers - m) / np.where(d == 0, 1, d)))
    assert ((codes >= 0) & (codes <= (15 if qtype == Q.Q4_1 else 31))).all()
    expected = ((np.abs(d) * codes + np.abs(m)) ** 2).sum(axis=(1, 2))
    out = np.empty(50, dtype=np.float64)
    _quants.block32_spreads(stored, KINDS[qtype], 96, out, np.zeros(2, dtype=np.int64))
    np.testing.assert_allclose(out, expected, rtol=1e-12)
