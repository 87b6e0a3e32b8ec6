"""The bundled MiniLM table written as a GGUF file, quantised by the gguf package (llama.cpp's own Python code).

Q4_K is not possible for this table: K types pack 256 numbers a block and MiniLM's rows
have 384 (llama.cpp itself stores such tensors in another type: Q8_0 in its Q4_K_M, see
bench/make_llama_quants.py), and the gguf package cannot quantise to K types at all.
Q4_0 (4 bits, blocks of 32) is the nearest type it writes.

``vocabulary="wordpiece"`` keeps MiniLM's own token list ("the", "##ing"), so the two
tables match by id; ``"llama.cpp"`` writes it as llama.cpp's converter does
(convert_hf_to_gguf.py, BertModel.set_vocab: "▁the", "ing", special tokens unchanged,
tokenizer model "bert"), as a MiniLM GGUF made with llama.cpp's converter has it.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from gguf.constants import GGMLQuantizationType

from .gguf_fixture import write_gguf


def write_minilm_gguf(
    path: Path, qtype: GGMLQuantizationType = GGMLQuantizationType.Q4_0, vocabulary: str = "wordpiece"
) -> Path:
    from embedexplorer.core.tables.opening import open_table

    table = open_table("bundled")
    try:
        rows = np.asarray(table.rows, dtype=np.float32)
        tokens = list(table.vocabulary.facts.raw_tokens)
    finally:
        table.close()
    stored = rows if qtype == GGMLQuantizationType.F32 else gguf.quants.quantize(rows, qtype)
    if vocabulary == "wordpiece":
        return write_gguf(path, stored, qtype, tokens=tokens, tokenizer_model="llama", pre=None, architecture="bert")
    if vocabulary != "llama.cpp":
        raise ValueError(f"vocabulary is 'wordpiece' or 'llama.cpp', not {vocabulary!r}")
    special = _special_ids()
    control, normal = int(gguf.TokenType.CONTROL), int(gguf.TokenType.NORMAL)
    types = [control if i in special else normal for i in range(len(tokens))]
    phantom = [
        token if i in special else token[2:] if token.startswith("##") else "\u2581" + token
        for i, token in enumerate(tokens)
    ]
    return write_gguf(
        path, stored, qtype, tokens=phantom, token_types=types, tokenizer_model="bert", pre="jina-v2-en",
        architecture="bert",
    )


def _special_ids() -> set[int]:
    """MiniLM's special tokens as the tokenizers library reads them from tokenizer.json (the converter's CONTROL)."""
    from tokenizers import Tokenizer

    from embedexplorer.core.sources.resolve import bundled_model_dir

    tokenizer = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    return {i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special}
