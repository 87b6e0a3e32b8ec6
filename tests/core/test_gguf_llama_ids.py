"""GGUF tokenizers give exactly the ids llama.cpp gives, on llama.cpp's own vocabulary files.

The expected ids (tests/data/llama_ids/expected.json.gz) were made by llama.cpp itself,
through llama-cpp-python, by tests/data/llama_ids/make_expected.py: 600 texts per
vocabulary file, llama_tokenize(add_special=false, parse_special=false).  The vocabulary
files are llama.cpp's models/ggml-vocab-*.gguf, which .ci/setup fetches.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedexplorer.core.text.llama_pretokenizers import PRE_TOKENIZERS
from embedexplorer.core.text.llama_vocab import LlamaTokenizer, check_kind

from ..gguf_fixture import float64_top_k
from .test_sources import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "llama_ids"
sys.path.insert(0, str(DATA))
import vocab_files  # noqa: E402


@lru_cache(maxsize=1)
def expected() -> dict[str, Any]:
    return json.loads(gzip.decompress((DATA / "expected.json.gz").read_bytes()))


def metadata_of(name: str) -> dict[str, object]:
    """A real or derived vocabulary file's metadata; missing files fail in CI (skip elsewhere)."""
    folder = vocab_files.vocab_folder()
    needed = [folder / vocab_files.derived_files().get(name, (name, {}))[0]]
    if name == "derived-kind-rwkv.gguf" or (name.startswith("derived-") and name not in vocab_files.derived_files()):
        needed.append(folder / vocab_files.RWKV_VOCAB)
    missing = [path for path in needed if not path.is_file()]
    if missing:
        message = f"{missing[0]} is missing: run .ci/setup, which fetches llama.cpp's vocabulary files"
        if os.environ.get("CI") or os.environ.get("EMBEDEXPLORER_REQUIRE_SCAN"):
            pytest.fail(message)
        pytest.skip(message)
    return vocab_files.metadata_of(name)


FILES = sorted(expected()["ids"])


def texts_of(name: str) -> list[str]:
    """The stored texts, then the ones this file's quirks need (vocab_files.EXTRA_TEXTS)."""
    return expected()["texts"] + vocab_files.EXTRA_TEXTS.get(name, [])


def test_every_kind_and_every_family_is_covered() -> None:
    kinds = {}
    for name in FILES:
        metadata = metadata_of(name)
        kinds.setdefault(str(metadata["tokenizer.ggml.model"]), []).append(name)
    assert {"llama", "gpt2", "bert", "t5", "gemma4", "rwkv", "whitespace", "hybriddna", "plamo2", "test"} <= set(kinds)
    pres = {check_kind(metadata_of(name), name)[1] for name in FILES}  # the name llama.cpp goes by
    behaviours = {PRE_TOKENIZERS[name] for name in pres if name in PRE_TOKENIZERS}
    assert behaviours == set(PRE_TOKENIZERS.values())
    assert len(expected()["texts"]) >= 600
    assert all(len(expected()["ids"][name]) == len(texts_of(name)) for name in FILES)


@pytest.mark.parametrize("name", FILES)
def test_ids_equal_llama_cpp(name: str) -> None:
    tokenizer = LlamaTokenizer(metadata_of(name), name)
    texts = texts_of(name)
    wrong = []
    for text, ids in zip(texts, expected()["ids"][name], strict=True):
        got = tokenizer.encode(text)
        if got != ids:
            wrong.append(f"{text!r}: ours {got} llama.cpp {ids}")
    assert not wrong, f"{len(wrong)} of {len(texts)} texts differ:\n" + "\n".join(wrong[:20])


def model_file(folder: Path, vocab: str, rows: np.ndarray, changes: dict[str, object] | None = None) -> Path:
    """A GGUF model file: a real vocabulary file's tokenizer keys, ``rows`` as its token table."""
    import gguf

    metadata = {**metadata_of(vocab), **(changes or {})}
    path = folder / f"model-{vocab}"
    writer = gguf.GGUFWriter(str(path), str(metadata.get("general.architecture", "llama")))
    for key, value in metadata.items():
        if not key.startswith("tokenizer."):
            continue
        if isinstance(value, str):
            writer.add_string(key, value)
        elif isinstance(value, list):
            writer.add_array(key, value)
        elif isinstance(value, np.ndarray):
            writer.add_array(key, value.tolist())
        elif isinstance(value, (bool, np.bool_)):
            writer.add_bool(key, bool(value))
        else:
            writer.add_uint32(key, int(value))  # type: ignore[call-overload]
    writer.add_tensor("token_embd.weight", rows)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_bert_gguf_answers_neighbours_like_the_bundled_minilm(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    # Ollama's all-minilm is this: MiniLM's table with a "bert" tokenizer in the GGUF keys.
    rows = np.asarray(minilm_table.rows[:], dtype=np.float32)
    path = model_file(tmp_path, "ggml-vocab-bert-bge.gguf", rows)
    result = run_cli("neighbours", "monday", "-k", "8", "--model", str(path), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    bundled = minilm_table.neighbours("monday", 8)
    assert bundled.query is not None and out["query"]["id"] == bundled.query.id
    assert [n["id"] for n in out["neighbours"]] == [n.id for n in bundled.neighbours]
    assert out["neighbours"][0]["token"] == "_tuesday"


def test_a_deepseek_r1_qwen_gguf_opens_and_answers_neighbours(tmp_path: Path) -> None:
    # Refused before ("deepseek-r1-qwen" pre-tokenizer); llama.cpp splits it as qwen2.
    qwen2 = expected()["ids"]["ggml-vocab-qwen2.gguf"]
    text, (token_id,) = next((t, ids) for t, ids in zip(expected()["texts"], qwen2, strict=True) if t == "iPhone")
    count = len(metadata_of("ggml-vocab-qwen2.gguf")["tokenizer.ggml.tokens"])  # type: ignore[arg-type]
    rows = np.random.default_rng(7).standard_normal((count, 16)).astype(np.float16)
    path = model_file(tmp_path, "ggml-vocab-qwen2.gguf", rows, {"tokenizer.ggml.pre": "deepseek-r1-qwen"})
    assert_neighbours_are_float64s(path, text, token_id, rows)


def assert_neighbours_are_float64s(path: Path, word: str, token_id: int, rows: np.ndarray) -> None:
    """``neighbours word --exact`` through the command line reads ``word`` as ``token_id`` and answers a float64 top 6.

    ``--exact``: the ids are llama.cpp's for the text as it stands (a word alone would be read
    as inside a sentence, with the space a BPE vocabulary puts before it)."""
    result = run_cli("neighbours", word, "--exact", "-k", "6", "--model", str(path), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["query"]["id"] == token_id
    ids, _ = float64_top_k(rows.astype(np.float64), rows[token_id].astype(np.float64), 6, (token_id,))
    assert [n["id"] for n in out["neighbours"]] == ids


def test_a_name_llama_cpp_does_not_know_is_refused_in_one_line(tmp_path: Path) -> None:
    rows = np.zeros((len(metadata_of("ggml-vocab-gpt-2.gguf")["tokenizer.ggml.tokens"]), 8), dtype=np.float16)  # type: ignore[arg-type]
    path = model_file(tmp_path, "ggml-vocab-gpt-2.gguf", rows, {"tokenizer.ggml.pre": "no-such-split"})
    result = run_cli("neighbours", "hello", "--model", str(path))
    assert result.returncode == 2
    assert "'no-such-split'" in result.stderr and "llama.cpp does not know" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_plamo2_gguf_opens_with_llama_cpp_ids_and_answers_neighbours(tmp_path: Path) -> None:
    # Refused before ("plamo2" was not rebuilt). The ids of a text with an emoji (bytes as <0xXX>)
    # and of a one-token text are llama.cpp's own, through the command line end to end.
    name = "derived-kind-plamo2.gguf"
    by_text = dict(zip(texts_of(name), expected()["ids"][name], strict=True))
    text = next(t for t, ids in by_text.items() if len(ids) > 4 and set(ids) & set(range(3, 259)))
    word, (token_id,) = next((t, ids) for t, ids in by_text.items() if len(ids) == 1 and len(t.strip()) > 2)
    rows = np.random.default_rng(11).standard_normal((len(metadata_of(name)["tokenizer.ggml.tokens"]), 16))  # type: ignore[arg-type]
    rows = rows.astype(np.float16)
    path = model_file(tmp_path, name, rows)
    result = run_cli("tokens", text, "--model", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert [t["id"] for t in json.loads(result.stdout)["tokens"]] == by_text[text]
    assert_neighbours_are_float64s(path, word, token_id, rows)


def test_a_plamo2_gguf_without_a_byte_token_is_refused_in_one_line(tmp_path: Path) -> None:
    # llama.cpp will not load such a file ("Byte token for <0x65> is not set"): neither do we.
    name = "derived-kind-plamo2.gguf"
    metadata = metadata_of(name)
    types = np.array(metadata["tokenizer.ggml.token_type"])
    types[metadata["tokenizer.ggml.tokens"].index("<0x41>")] = 1  # type: ignore[union-attr]
    rows = np.zeros((types.shape[0], 8), dtype=np.float16)
    path = model_file(tmp_path, name, rows, {"tokenizer.ggml.token_type": types})
    result = run_cli("tokens", "hello", "--model", str(path))
    assert result.returncode == 2
    assert "without the byte token <0x41>" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
