"""Broken GGUF files: one plain sentence each, exit code 2 on the command line, never a hang."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from ..gguf_fixture import write_gguf
from .helpers import assert_one_line_error, run_cli


def good_gguf(path: Path, **kwargs: object) -> Path:
    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    return write_gguf(path, rows, Q.F16, **kwargs)  # type: ignore[arg-type]


def with_unknown_type(path: Path) -> Path:
    """Rewrite the token table's type number to one no gguf version knows."""
    good_gguf(path)
    data = bytearray(path.read_bytes())
    name = b"token_embd.weight"
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
    dims = struct.unpack_from("<I", data, at)[0]
    struct.pack_into("<I", data, at + 4 + 8 * dims, 250)
    path.write_bytes(bytes(data))
    return path


def truncated(path: Path) -> Path:
    good_gguf(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 4000])
    return path


def header_cut(path: Path) -> Path:
    good_gguf(path)
    path.write_bytes(path.read_bytes()[:900])
    return path


def nested_arrays(path: Path) -> Path:
    """A header whose one key holds an array of arrays, nested deeper than any real file."""
    key = b"x"
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    header += struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 5000
    path.write_bytes(header)
    return path


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


CASES = {
    "nested arrays": (nested_arrays, "is not a readable GGUF file (an array of arrays)"),
    "unknown version": (lambda p: _written(p, b"GGUF" + b"\xff" * 20), "versions 2 and 3 are read"),
    "truncated": (truncated, "truncated.gguf is truncated: it ends at byte"),
    "header cut": (header_cut, "header cut.gguf is not a readable GGUF file"),
    "no token table": (
        lambda p: good_gguf(p, table_name="output.weight"),
        "has no token table (token_embd.weight); it is not a language model.",
    ),
    "unknown quant type": (with_unknown_type, "has a storage type (number 250) that the installed gguf package"),
    "unknown tokenizer": (
        lambda p: good_gguf(p, tokenizer_model="wordpiece"),
        "uses a tokenizer of type 'wordpiece', which llama.cpp does not know either",
    ),
    "unknown pre-tokenizer": (
        lambda p: good_gguf(p, pre="chatglm-bpe-v9"),
        "splits text with a pre-tokenizer named 'chatglm-bpe-v9', which llama.cpp does not know either",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_broken_gguf_files(tmp_path: Path, case: str) -> None:
    build, words = CASES[case]
    path = build(tmp_path / f"{case}.gguf")
    assert_one_line_error(run_cli("info", "--model", str(path), timeout=60), words)


def test_a_manifest_pointing_to_a_missing_blob(tmp_path: Path) -> None:
    from ..core.test_discovery import fake_ollama

    root = tmp_path / "ollama"
    fake_ollama(root, good_gguf(tmp_path / "m.gguf"), name="gone", blob=False)
    result = run_cli("neighbours", "x", "--model", "ollama:gone", env={"OLLAMA_MODELS": str(root)}, timeout=60)
    assert_one_line_error(result, "points to the blob sha256:", "which is missing")
