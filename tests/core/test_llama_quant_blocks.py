"""The app reads token tables that llama.cpp's own quantizer wrote exactly as llama.cpp's C code dequantises them.

tests/data/llama_quants/blocks.json.gz holds rows of the tables llama.cpp made of MiniLM (Q8_0 in
its Q4_K_M, Q5_0 in its --pure Q4_K_M) and of the GPT-2-shaped fixture (Q6_K in its Q4_K_M, Q4_K
when forced), their blocks as stored and the SHA-256 of llama.cpp's float32 rows for them
(make_blocks.py, with llama-cpp-python, which CI does not have).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType

from embedexplorer import open_table

from ..gguf_fixture import small_vocabulary, write_gguf

DATA = Path(__file__).resolve().parents[1] / "data" / "llama_quants" / "blocks.json.gz"
TABLES = json.loads(gzip.decompress(DATA.read_bytes()))["tables"]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_llama_cpps_blocks_read_as_llama_cpp_reads_them(name: str, tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    table = TABLES[name]
    qtype = GGMLQuantizationType[table["type"]]
    ids = np.array(table["ids"])
    blocks = np.frombuffer(base64.b64decode(table["blocks"]), dtype=np.uint8).reshape(ids.size, -1)
    path = write_gguf(tmp_path / f"{name}.gguf", blocks, qtype, tokens=small_vocabulary(ids.size))
    opened = open_table(str(path))
    try:
        assert opened.storage_note() == f"{table['type']}, dequantised"
        rows = np.asarray(opened.rows[:], dtype="<f4")
    finally:
        opened.close()
    assert rows.shape == (ids.size, table["width"])
    assert hashlib.sha256(rows.tobytes()).hexdigest() == table["llama_cpp_f32_sha256"]
    if name.startswith("minilm"):
        # The blocks are MiniLM's own rows, a few bits short: each row within a few per cent of its source.
        source = np.asarray(minilm_table.rows[ids], dtype=np.float64)
        error = np.linalg.norm(rows - source, axis=1) / np.linalg.norm(source, axis=1)
        assert error.max() < (0.02 if table["type"] == "Q8_0" else 0.1)
