"""Fixtures for the fault tests: small real model folders, broken in one way each."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from embedexplorer.core.sources.resolve import bundled_model_dir

from .helpers import build_rotary_folder, link_files


@pytest.fixture(scope="session")
def rotary_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_rotary_folder(tmp_path_factory.mktemp("rotary") / "tiny-llama")


@pytest.fixture(scope="session")
def rotary_table(rotary_folder: Path):  # type: ignore[no-untyped-def]
    from embedexplorer import open_table

    return open_table(str(rotary_folder))


@pytest.fixture(scope="session")
def broken(tmp_path_factory: pytest.TempPathFactory, rotary_folder: Path, gpt2_folder: Path) -> dict[str, Path]:
    """Model folders that each fail to open in one way, by name."""
    root = tmp_path_factory.mktemp("broken")
    folders: dict[str, Path] = {}

    def folder(name: str) -> Path:
        path = root / name
        path.mkdir()
        folders[name] = path
        return path

    folder("empty")

    no_weights = folder("no-weights")
    shutil.copy(rotary_folder / "config.json", no_weights / "config.json")
    shutil.copy(rotary_folder / "tokenizer.json", no_weights / "tokenizer.json")

    pickle_only = folder("pickle-only")
    shutil.copy(rotary_folder / "config.json", pickle_only / "config.json")
    shutil.copy(rotary_folder / "tokenizer.json", pickle_only / "tokenizer.json")
    import torch

    torch.save({"model.embed_tokens.weight": torch.zeros(4, 4)}, pickle_only / "pytorch_model.bin")

    shards_pickle = folder("pickle-shards")
    shutil.copy(rotary_folder / "config.json", shards_pickle / "config.json")
    (shards_pickle / "pytorch_model-00001-of-00002.bin").write_bytes(b"\x80\x04K\x01.")

    weights = (rotary_folder / "model.safetensors").read_bytes()
    header_len = int.from_bytes(weights[:8], "little")
    variants = {
        "truncated": weights[: len(weights) // 2],
        "truncated-header": weights[: 8 + header_len // 2],
        "zero-bytes": b"",
        "garbage": bytes(range(256)) * 64,
        "not-json-header": (20).to_bytes(8, "little") + b"this is not json!!!!" + b"\0" * 64,
        "list-header": (2).to_bytes(8, "little") + b"[]",
        "bad-offsets": _bad_offsets(weights, header_len),
    }
    for name, data in variants.items():
        path = folder(name)
        shutil.copy(rotary_folder / "config.json", path / "config.json")
        shutil.copy(rotary_folder / "tokenizer.json", path / "tokenizer.json")
        (path / "model.safetensors").write_bytes(data)

    # GPT-2's tokenizer (ids up to 50,256) beside MiniLM's 30,522-row table.
    gpt2_tokenizer_on_minilm = folder("gpt2-tokenizer-minilm-table")
    link_files(bundled_model_dir(), gpt2_tokenizer_on_minilm, ("config.json", "model.safetensors"))
    shutil.copy(gpt2_folder / "tokenizer.json", gpt2_tokenizer_on_minilm / "tokenizer.json")

    # MiniLM's tokenizer (30,522 tokens) beside GPT-2's 50,257-row table: fewer ids than
    # rows, so only config.json's end-of-text id (50,256) gives the mix-up away.
    minilm_tokenizer_on_gpt2 = folder("minilm-tokenizer-gpt2-table")
    link_files(gpt2_folder, minilm_tokenizer_on_gpt2, ("config.json", "model.safetensors"))
    shutil.copy(bundled_model_dir() / "tokenizer.json", minilm_tokenizer_on_gpt2 / "tokenizer.json")
    return folders


def _bad_offsets(weights: bytes, header_len: int) -> bytes:
    header = json.loads(weights[8 : 8 + header_len])
    name = "model.embed_tokens.weight"
    begin, end = header[name]["data_offsets"]
    header[name]["data_offsets"] = [begin, end - 4]  # one number short of its shape
    raw = json.dumps(header).encode("utf-8")
    return len(raw).to_bytes(8, "little") + raw + weights[8 + header_len :]
