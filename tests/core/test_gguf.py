"""GGUF files: every common storage type answers exactly as a float64 search over its dequantised rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table

from ..gguf_fixture import float64_top_k, gpt2_vocabulary, quantised_rows, write_gguf

TYPES = [Q.F32, Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_K, Q.Q5_K, Q.Q6_K]


def stored_numbers(stored: np.ndarray, qtype: Q) -> np.ndarray:
    if stored.dtype != np.uint8:
        return stored.astype(np.float64)
    return dequantize(stored, qtype).astype(np.float64)


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_each_storage_type_matches_a_float64_search(tmp_path: Path, qtype: Q) -> None:
    rng = np.random.default_rng(int(qtype))
    rows = rng.standard_normal((3000, 256)).astype(np.float32)
    rows[7] = rows[8]  # two equal rows must tie and come out in id order
    stored = quantised_rows(rows, qtype, seed=int(qtype))
    if qtype == Q.F16:
        stored = rows.astype(np.float16)
    elif qtype == Q.F32:
        stored = rows
    numbers = stored_numbers(stored, qtype)
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored, qtype)))
    assert table.dtype == qtype.name
    assert table.stored == (qtype != Q.F32)
    if qtype not in (Q.F32, Q.F16, Q.BF16):
        assert table.facts().storage == f"{qtype.name}, dequantised"
    assert table.rows.shape == (3000, 256)
    np.testing.assert_array_equal(table.rows[[5, 2999]], numbers[[5, 2999]].astype(np.float32))
    for query in [0, 7, 1234, 2999]:
        result = table.neighbours(query, k=10)
        ids, cosines = float64_top_k(numbers, numbers[query], 10, (query,))
        assert [n.id for n in result.neighbours] == ids
        np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, rtol=0, atol=1e-6)
    vector = rng.standard_normal(256).astype(np.float32)
    ids, _ = float64_top_k(numbers, vector, 5, ())
    assert [n.id for n in table.neighbours_of_vector(vector, k=5).neighbours] == ids
    facts = table.facts()
    assert (facts.rows, facts.width, facts.table_weights, facts.model_weights) == (3000, 256, 768_000, 768_000)
    assert facts.position_rows is None


def test_gpt2_tokenizer_from_gguf_gives_the_chapters_ids(tmp_path: Path, gpt2_folder: Path) -> None:
    from tokenizers import Tokenizer

    tokens, merges = gpt2_vocabulary()
    types = [1] * len(tokens)
    types[50256] = 3  # <|endoftext|> is a control token
    rows = np.random.default_rng(1).standard_normal((len(tokens), 32)).astype(np.float16)
    positions = np.random.default_rng(2).standard_normal((1024, 32)).astype(np.float32)
    path = write_gguf(
        tmp_path / "gpt2.gguf",
        rows,
        Q.F16,
        tokens=tokens,
        merges=merges,
        token_types=types,
        extra={"position_embd.weight": positions},
    )
    table = open_table(str(path))
    assert [t.id for t in table.encode("The capital of France is")] == [464, 3139, 286, 4881, 318]
    reference = Tokenizer.from_file(str(gpt2_folder / "tokenizer.json"))
    # (No control token in these texts: tokenizer.json cuts them out, llama.cpp reads them as letters.)
    for text in [" Paris", "naïve café 東京\n\n  x y", "it's 12345 don't", "\t tabs  and   spaces "]:
        assert [t.id for t in table.encode(text)] == reference.encode(text, add_special_tokens=False).ids
    assert table.tokens[6342] == "_Paris"
    # The window's way: the tokenizer is built and run in a child process, from the same file.
    separate = open_table(str(path), separate_tokenizer=True)
    try:
        for text in ["The capital of France is", "naïve café 東京\n\n  x<|endoftext|>y"]:
            assert [t.id for t in separate.encode(text)] == [t.id for t in table.encode(text)]
        assert separate.vocabulary.facts == table.vocabulary.facts
    finally:
        separate.close()
    facts = table.facts()
    assert facts.position_rows == 1024
    assert facts.model_weights == len(tokens) * 32 + 1024 * 32
    np.testing.assert_array_equal(table.position_row(3), positions[3])


def test_a_quantised_table_reopens_from_its_cached_first_pass(tmp_path: Path) -> None:
    rows = np.random.default_rng(5).standard_normal((2048, 512)).astype(np.float32)
    stored = quantised_rows(rows, Q.Q4_K, seed=5)
    path = write_gguf(tmp_path / "q4k.gguf", stored, Q.Q4_K)
    messages: list[str] = []
    first = open_table(str(path), progress=lambda done, total, message: messages.append(message))
    assert "Dequantising the Q4_K table" in messages
    messages.clear()
    second = open_table(str(path), progress=lambda done, total, message: messages.append(message))
    assert "Dequantising the Q4_K table" not in messages
    # (A cache this small is copied into memory rather than mapped: truncating it can never end the process.)
    np.testing.assert_array_equal(np.asarray(second.screen.bits), np.asarray(first.screen.bits))
    numbers = dequantize(stored, Q.Q4_K).astype(np.float64)
    for query in (0, 2047):
        ids, _ = float64_top_k(numbers, numbers[query], 10, (query,))
        assert [n.id for n in second.neighbours(query, k=10).neighbours] == ids
