"""One member of a large JSON file, read without parsing the rest: the same value as ``json.loads`` gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embedexplorer.core.common.errors import EmbedExplorerError
from embedexplorer.core.common.files import read_json_member

LIMIT = 64 << 20


def _oracle(path: Path, key: str) -> object:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get(key) if isinstance(data, dict) else None


@pytest.mark.parametrize("folder", ["gpt2_folder", "llama_folder"])
def test_every_top_level_member_of_a_real_tokenizer_file_is_what_json_loads_reads(folder: str, request) -> None:  # type: ignore[no-untyped-def]
    path = request.getfixturevalue(folder) / "tokenizer.json"
    keys = list(json.loads(path.read_text(encoding="utf-8")))
    assert "post_processor" in keys and "model" in keys
    for key in [*keys, "no such member"]:
        assert read_json_member(path, key, "tokenizer file", LIMIT, EmbedExplorerError) == _oracle(path, key), key


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"a": [1, {"b": "}"}], "post_processor": {"type": "TemplateProcessing"}, "z": 1}, indent=4),
        '\n\t{ "a" : "x\\"post_processor\\"" ,\r\n "post_processor":null , "model": {"vocab": {"post_processor": 1}}}',
        json.dumps({"model": {"vocab": {"post_processor": 5}}, "post_processor": [1, 2]}, separators=(",", ":")),
        "{}",
        "[1, 2]",
        '"post_processor"',
    ],
)
def test_a_member_among_tricky_neighbours_is_what_json_loads_reads(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    assert read_json_member(path, "post_processor", "tokenizer file", LIMIT, EmbedExplorerError) == _oracle(
        path, "post_processor"
    )


@pytest.mark.parametrize(
    "text", ['{"a": 1,, "post_processor": 2}', '{"a" 1}', "{'post_processor': 1}", '{"a": tru', b"\xff\xfe{}"]
)
def test_a_broken_file_before_the_member_is_one_clear_error(tmp_path: Path, text: str | bytes) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(EmbedExplorerError, match=r"tokenizer file .*tokenizer\.json is not valid JSON"):
        read_json_member(path, "post_processor", "tokenizer file", LIMIT, EmbedExplorerError)


def test_a_file_over_its_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"post_processor": None, "model": "x" * 4096}), encoding="utf-8")
    with pytest.raises(EmbedExplorerError, match="more than a tokenizer file can sensibly be"):
        read_json_member(path, "post_processor", "tokenizer file", 1024, EmbedExplorerError)
