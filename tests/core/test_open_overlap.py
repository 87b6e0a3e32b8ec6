"""The tokenizer is built on a thread while the table is prepared: same table, same errors, told at once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer import open_table
from embedexplorer.core.common.background import Background
from embedexplorer.core.common.errors import EmbedExplorerError

from ..gguf_fixture import quantised_rows, write_gguf


def test_a_refused_gguf_tokenizer_stops_the_dequantising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBEDEXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    rows = np.random.default_rng(2).standard_normal((40_000, 256)).astype(np.float32)
    path = write_gguf(tmp_path / "q4k.gguf", quantised_rows(rows, Q.Q4_K), Q.Q4_K, pre="no-such-split")
    reports: list[str] = []
    with pytest.raises(EmbedExplorerError, match="pre-tokenizer named 'no-such-split'"):
        open_table(str(path), progress=lambda done, total, message: reports.append(message))
    dequantising = [m for m in reports if m.startswith("Dequantising")]
    # The refusal came before the table was done (40,000 rows are 5 blocks of 8,192).
    assert len(dequantising) < 5


def test_the_same_table_opens_with_the_tokenizer_on_a_thread(tmp_path: Path) -> None:
    import gguf

    rows = np.random.default_rng(4).standard_normal((600, 64)).astype(np.float32)
    path = write_gguf(tmp_path / "bf16.gguf", quantised_rows(rows, Q.BF16), Q.BF16)
    table = open_table(str(path))
    assert table.vocabulary.size == 600 and table.dtype == "BF16"
    # The gguf package's own bfloat16 rounding, widened back to float32, is the reference.
    bits = np.ascontiguousarray(gguf.quants.quantize(rows, Q.BF16)).view(np.uint16)
    reference = (bits.astype(np.uint32) << 16).view(np.float32)
    assert np.array_equal(np.asarray(table.rows[:]), reference)
    assert table.stored_screen.lengths.shape == (600,)  # measured while the tokenizer was built


def test_background_hands_over_its_error() -> None:
    def fail() -> int:
        raise ValueError("tokenizer file broken")

    failing = Background(fail, "test")
    with pytest.raises(ValueError, match="tokenizer file broken"):
        failing.result()
    assert Background(lambda: 42, "test").result() == 42
