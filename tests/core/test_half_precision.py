"""bfloat16 and float16 tables are searched as stored, and answer as a float64 search over the stored values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from embedexplorer import open_table
from embedexplorer.core.common import cache
from embedexplorer.core.search.stored_rows import StoredRows
from embedexplorer.core.sources.resolve import bundled_model_dir

from ..gguf_fixture import float64_top_k

ROWS, WIDTH = 30522, 96


def half_folder(folder: Path, dtype: torch.dtype, seed: int = 0) -> tuple[Path, np.ndarray]:
    """A Llama-named, sharded folder whose token table is ``dtype``; returns it and the stored values."""
    generator = torch.Generator().manual_seed(seed)
    table = torch.randn(ROWS, WIDTH, generator=generator).to(dtype)
    table[10] = table[11]  # equal rows tie and come out in id order
    table[12] = 0  # a row that points nowhere
    table[13, 5] = float("nan")  # and one that cannot be scaled
    head = torch.randn(ROWS, WIDTH, generator=generator).to(dtype)
    folder.mkdir(parents=True)
    save_file({"model.embed_tokens.weight": table}, str(folder / "model-00001-of-00002.safetensors"))
    save_file({"lm_head.weight": head}, str(folder / "model-00002-of-00002.safetensors"))
    index = {
        "metadata": {},
        "weight_map": {
            "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
            "lm_head.weight": "model-00002-of-00002.safetensors",
        },
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    config = {"model_type": "llama", "vocab_size": ROWS, "rope_theta": 10000.0, "tie_word_embeddings": False}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    shutil.copy(bundled_model_dir() / "tokenizer.json", folder / "tokenizer.json")
    return folder, table.to(torch.float64).numpy()


def reference_unit(stored: np.ndarray, token_id: int) -> np.ndarray:
    row = stored[token_id]
    return row / np.linalg.norm(row)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
def test_half_tables_match_a_float64_search(tmp_path: Path, dtype: torch.dtype) -> None:
    folder, stored = half_folder(tmp_path / "model", dtype)
    table = open_table(str(folder))
    assert isinstance(table.rows, StoredRows)
    assert table.dtype == ("BF16" if dtype == torch.bfloat16 else "F16")
    # The rows stay mapped from the file as stored: no float32 copy of the table is made.
    assert table.rows.raw.dtype == np.uint16 and isinstance(table.rows.raw, np.memmap)
    assert table.screen.bits is table.rows.raw
    rng = np.random.default_rng(3)
    for token_id in [0, 10, 11, 2000, *rng.integers(0, ROWS, 6).tolist()]:
        result = table.neighbours(int(token_id), k=12)
        ids, cosines = float64_top_k(stored, stored[token_id], 12, (int(token_id),))
        assert [n.id for n in result.neighbours] == ids
        np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
    expected_cosine = float(reference_unit(stored, 1) @ reference_unit(stored, 2))
    assert table.cosine(1, 2) == pytest.approx(expected_cosine, abs=1e-12)
    vector = reference_unit(stored, 5) - reference_unit(stored, 6) + reference_unit(stored, 7)
    ids, _ = float64_top_k(stored, vector, 8, (5, 6, 7))
    assert [n.id for n in table.analogy(5, 6, 7, k=8).neighbours] == ids
    facts = table.facts()
    assert (facts.rows, facts.width, facts.model_weights) == (ROWS, WIDTH, 2 * ROWS * WIDTH)
    assert facts.storage == table.dtype
    assert facts.memory_bytes < 1.1 * ROWS * WIDTH * 2


def test_rows_that_point_nowhere_score_zero(tmp_path: Path) -> None:
    folder, stored = half_folder(tmp_path / "model", torch.bfloat16)
    table = open_table(str(folder))
    every = table.neighbours(0, k=ROWS - 1).neighbours
    by_id = {n.id: n.cosine for n in every}
    assert by_id[12] == 0.0 and by_id[13] == 0.0
    assert np.all(np.isfinite([n.cosine for n in every]))


def test_lengths_are_cached_by_file_identity(tmp_path: Path) -> None:
    folder, _ = half_folder(tmp_path / "model", torch.bfloat16)
    before = set(cache.cache_dir().glob("*.lengths")) if cache.cache_dir().exists() else set()
    first = open_table(str(folder))
    made = set(cache.cache_dir().glob("*.lengths")) - before
    assert len(made) == 1
    (entry,) = made
    written = entry.stat().st_mtime_ns
    second = open_table(str(folder))
    # The second open reads the cached lengths (checked, not rewritten) instead of measuring the rows again.
    _ = second.screen
    assert entry.stat().st_mtime_ns == written and second.screen.notes == ()
    np.testing.assert_array_equal(np.asarray(second.screen.lengths), first.screen.lengths)
    # A rewritten file is a new identity: its lengths are measured, never read stale.
    shard = folder / "model-00001-of-00002.safetensors"
    shard.write_bytes(shard.read_bytes())
    third = open_table(str(folder))
    assert len(set(cache.cache_dir().glob("*.lengths")) - before) == 2
    np.testing.assert_array_equal(np.asarray(third.screen.lengths), first.screen.lengths)
