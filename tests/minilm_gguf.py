"""The bundled MiniLM table written as a GGUF file, quantised by the gguf package (llama.cpp's own Python code).

Q4_K is not possible for this table: K types pack 256 numbers a block and MiniLM's rows
have 384 (llama.cpp itself stores such tensors in another type), and the gguf package
cannot quantise to K types at all. Q4_0 (4 bits, blocks of 32) is the nearest type it
writes. The vocabulary is MiniLM's own token list, so the two tables match by id.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from gguf.constants import GGMLQuantizationType

from .gguf_fixture import write_gguf


def write_minilm_gguf(path: Path, qtype: GGMLQuantizationType = GGMLQuantizationType.Q4_0) -> Path:
    from embedexplorer.core.tables.embedding_table import open_table

    table = open_table("bundled")
    try:
        rows = np.asarray(table.rows, dtype=np.float32)
        tokens = list(table.vocabulary.facts.raw_tokens)
    finally:
        table.close()
    stored = rows if qtype == GGMLQuantizationType.F32 else gguf.quants.quantize(rows, qtype)
    return write_gguf(path, stored, qtype, tokens=tokens, tokenizer_model="llama", pre=None, architecture="bert")
