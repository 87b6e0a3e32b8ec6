"""Q4_K tables scanned by groups of 16 rows (the queries after the first, on AVX-512 VNNI) answer as a
float64 search over gguf's dequantised values, and as the first query's scan of the blocks as stored.

The oracle is the gguf package's ``dequantize`` (llama.cpp's own Python code) and a float64 brute
force over its numbers. The tables: the GPT-2-shaped fixture's rows and the bundled MiniLM's
quantised to Q4_K, rows llama.cpp's own quantiser wrote, and random blocks with near ties; row
counts that are not multiples of 16, widths of one to four blocks, rows that are all zero.
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

from ..gguf_fixture import float64_top_k, q4_k_blocks, write_gguf
from .grouped_rows import assert_gpt2_rows_answer_as_float64, varied_rows, zero_ids
from .test_quantised_scan import COPIES, NEAR, ORIGINAL, near_tie_blocks

_quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")
pytestmark = pytest.mark.skipif(
    not _quants.grouped_scan(), reason="this CPU has no AVX-512 VNNI: Q4_K rows are scanned as stored only"
)
LLAMA_BLOCKS = Path(__file__).resolve().parents[1] / "data" / "llama_quants" / "blocks.json.gz"
K = 10


def screen_for(stored: np.ndarray, width: int) -> tuple[stored_search.StoredScreen, np.ndarray]:
    """The first pass over ``stored`` Q4_K rows as a table opens it, and gguf's float64 numbers."""
    numbers = dequantize(stored, Q.Q4_K).astype(np.float64)
    lengths = np.linalg.norm(numbers, axis=1)
    spread = stored_search.quantised_spread(stored, width, lengths)
    screen = stored_search.StoredScreen(
        stored, stored_search.QUANT_KINDS["Q4_K"], lengths, 0.0, quantised_width=width, spread=spread
    )
    assert screen.integer  # the integer scan, which the groups are for
    return screen, numbers


@pytest.mark.parametrize("width", [256, 512, 768, 1024])
@pytest.mark.parametrize("count", [3, 15, 16, 17, 1013])
def test_grouped_scores_are_within_the_bound_of_ggufs_numbers(width: int, count: int) -> None:
    stored = q4_k_blocks(varied_rows(count, width, seed=width + count))
    screen, numbers = screen_for(stored, width)
    lengths = screen.lengths
    query = np.random.default_rng(count).standard_normal(width).astype(np.float32)
    exact = np.where(lengths > 0, numbers @ query.astype(np.float64) / np.where(lengths > 0, lengths, 1), 0.0)
    bound = screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    first = screen.scores(query)
    assert screen.groups is None  # the first query reads the blocks as stored and copies nothing
    later = screen.scores(query)
    assert screen.groups is not None and screen.groups_bytes == -(-count // 16) * width // 256 * 2368
    for scores in (first, later):
        assert np.abs(scores - exact).max() <= bound
    assert np.abs(later - exact).max() > 0  # the bound is checked against real rounding
    assert (later[zero_ids(count)] == 0).all()  # all-zero rows point nowhere
    # Far from 1 and very uneven queries: the runs' steps are other powers of two.
    for size in (1e-20, 1e20):
        far = query * np.float32(size)
        far[:32] *= np.float32(1e-6)
        error = np.abs(screen.scores(far) - numbers @ far.astype(np.float64) / np.where(lengths > 0, lengths, 1))
        assert error[lengths > 0].max() <= screen.error_bound(float(np.linalg.norm(far.astype(np.float64))))


def test_every_sub_block_counts_in_the_grouped_scan() -> None:
    """A query that is zero but for one sub-block's 32 numbers, for each sub-block in turn: each row's
    grouped score must be that sub-block's part of its cosine (a dropped or mis-scaled one is far off)."""
    width = 512
    stored = q4_k_blocks(varied_rows(37, width, seed=5))
    screen, numbers = screen_for(stored, width)
    live = screen.lengths > 0
    screen.scores(np.ones(width, dtype=np.float32))  # the first query: the groups come with the next
    for sub in range(width // 32):
        query = np.zeros(width, dtype=np.float32)
        query[32 * sub : 32 * sub + 32] = np.random.default_rng(sub).standard_normal(32)
        scores = screen.scores(query)
        exact = numbers[live] @ query.astype(np.float64) / screen.lengths[live]
        assert np.abs(scores[live] - exact).max() <= screen.error_bound(float(np.linalg.norm(query)))
        assert np.abs(exact).max() > 100 * screen.error_bound(float(np.linalg.norm(query)))
    assert screen.groups is not None


def test_the_gpt2_table_quantised_answers_as_float64_first_and_later(tmp_path: Path, gpt2_table) -> None:  # type: ignore[no-untyped-def]
    assert_gpt2_rows_answer_as_float64(tmp_path, gpt2_table, Q.Q4_K, q4_k_blocks)


def test_the_bundled_table_quantised_answers_as_float64(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    """MiniLM's 384 numbers a row, padded to two blocks with zeros: sub-blocks of nothing but zeros too."""
    rows = np.zeros((minilm_table.rows.shape[0], 512), dtype=np.float32)
    rows[:, :384] = np.asarray(minilm_table.rows, dtype=np.float32)
    stored = q4_k_blocks(rows)
    numbers = dequantize(stored, Q.Q4_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "minilm-q4_k.gguf", stored, Q.Q4_K)))
    try:
        for token_id in (minilm_table.query("king").id, minilm_table.query("paris").id, 30_521):
            ids, _ = float64_top_k(numbers, numbers[token_id], K + 1, (token_id,))
            first = [n.id for n in table.neighbours(token_id, k=K).neighbours]
            later = [n.id for n in table.neighbours(token_id, k=K + 1).neighbours]  # another k: asked afresh
            assert first == later[:K] == ids[:K] and later == ids
        assert table.screen.groups is not None
    finally:
        table.close()


def test_rows_llama_cpp_quantised_answer_as_float64(tmp_path: Path) -> None:
    """llama.cpp's own Q4_K blocks (32 rows of the GPT-2-shaped fixture) and 5 copies of them, each with
    one number moved by one step (near ties, no exact ones): 37 rows, so the last group holds 5."""
    table_data = json.loads(gzip.decompress(LLAMA_BLOCKS.read_bytes()))["tables"]["gpt2-Q4_K_M-token-embd-Q4_K"]
    blocks = np.frombuffer(base64.b64decode(table_data["blocks"]), dtype=np.uint8).reshape(len(table_data["ids"]), -1)
    stored = np.concatenate([blocks, blocks[[3, 3, 9, 20, 31]]])
    for row, byte in zip(range(32, 37), (16, 16 + 144 + 77, 200, 16 + 2 * 144 + 5, 300), strict=True):
        stored[row, byte] ^= 1
    numbers = dequantize(stored, Q.Q4_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "llama-q4_k.gguf", stored, Q.Q4_K)))
    try:
        assert table.screen.integer
        for token_id, k in ((3, K), (0, K), (36, K), (20, K), (3, K + 1), (33, K)):
            ids, _ = float64_top_k(numbers, numbers[token_id], k, (token_id,))
            assert [n.id for n in table.neighbours(token_id, k=k).neighbours] == ids
        assert table.screen.groups is not None
    finally:
        table.close()


def test_near_ties_come_out_in_float64_order_from_the_groups(tmp_path: Path) -> None:
    stored = near_tie_blocks(Q.Q4_K, seed=61)
    numbers = dequantize(stored, Q.Q4_K).astype(np.float64)
    table = open_table(str(write_gguf(tmp_path / "ties.gguf", stored, Q.Q4_K)))
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


def test_a_table_too_large_for_the_cache_keeps_its_blocks_as_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the size limit no copy is made (the scan as stored is bound by memory already): same scores."""
    stored = q4_k_blocks(varied_rows(100, 512, seed=9))
    screen, numbers = screen_for(stored, 512)
    monkeypatch.setattr(stored_screen, "_GROUPS_MAX_BYTES", stored.nbytes - 1)
    query = np.random.default_rng(4).standard_normal(512).astype(np.float32)
    scores = [screen.scores(query) for _ in range(3)]
    assert screen.groups is None and screen.groups_bytes == 0
    np.testing.assert_array_equal(scores[0], scores[2])
    monkeypatch.setattr(stored_screen, "_GROUPS_MAX_BYTES", stored.nbytes)
    screen.scores(query)
    assert screen.groups is not None
