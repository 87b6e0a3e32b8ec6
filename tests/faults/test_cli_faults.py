"""Every fault reaches the command line as one plain line on stderr and exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import assert_one_line_error, run_cli

# (case, arguments with {name} standing for a broken folder, words the line must hold)
FOLDER_CASES = [
    ("empty", "has no config.json; it does not look like a model folder."),
    ("no-weights", "has no weights: no *.safetensors file was found."),
    ("pickle-only", "only has pickled weights (pytorch_model.bin). Loading a pickle can run arbitrary code"),
    ("truncated", "model.safetensors is truncated: it ends at byte"),
    ("garbage", "model.safetensors has a broken header"),
    ("not-json-header", "model.safetensors has an unreadable header"),
    ("gpt2-tokenizer-minilm-table", "The tokenizer has 50,257 tokens but the table has only 30,522 rows"),
    ("minilm-tokenizer-gpt2-table", "config.json says the start-of-text token is id 50,256"),
]


@pytest.mark.parametrize(("name", "words"), FOLDER_CASES, ids=[c[0] for c in FOLDER_CASES])
def test_broken_model_folders(broken: dict[str, Path], name: str, words: str) -> None:
    assert_one_line_error(run_cli("info", "--model", str(broken[name])), words)


TEXT_CASES = [
    (("tokens", ""), "embedexplorer: The text is empty; type a word."),
    (("tokens", "   "), "embedexplorer: The text is only spaces, and this tokenizer drops spaces; type a word."),
    (
        ("tokens", "\x07\x1b"),
        "embedexplorer: The tokenizer drops every character of <U+0007><U+001B> "
        "(control or invisible characters); type a word.",
    ),
    # Words are read by the window's one rule, and refused in its words.
    (("neighbours", ""), "embedexplorer: Type a word first."),
    (("neighbours", " \t "), "embedexplorer: Type a word first."),
    (("cosine", "paris", ""), "embedexplorer: Type a word first."),
    (("analogy", "king", "\x07", "woman"), "embedexplorer: There is no token in '\\x07'; type a word."),
]


@pytest.mark.parametrize(("args", "line"), TEXT_CASES, ids=[" ".join(map(repr, c[0])) for c in TEXT_CASES])
def test_texts_without_tokens(args: tuple[str, ...], line: str) -> None:
    result = run_cli(*args, "--model", "bundled")
    assert assert_one_line_error(result) == line


MODEL_CASES = [
    (("--model", "./no/such/model"), "embedexplorer: No such folder: ./no/such/model"),
    (
        ("--model", "someone/not-cached"),
        "embedexplorer: 'someone/not-cached' is not a folder and not in the local Hugging Face cache. "
        "Download it first (File > Download model, or the CLI's --download), or open a local model folder.",
    ),
    (
        ("--model", "not a model id"),
        "embedexplorer: 'not a model id' is not a folder or model id that can be opened: "
        "a Hugging Face id looks like owner/name, for example openai-community/gpt2.",
    ),
]


@pytest.mark.parametrize(("args", "line"), MODEL_CASES, ids=["missing folder", "uncached id", "invalid id"])
def test_models_that_do_not_exist(args: tuple[str, ...], line: str) -> None:
    assert assert_one_line_error(run_cli("info", *args)) == line


def test_model_path_that_is_a_file(rotary_folder: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model", encoding="utf-8")
    result = run_cli("info", "--model", str(notes))
    assert_one_line_error(result, "is a file that is not a model; choose a model folder or file.")
    # A file of a model folder (as a file dialog or a drop gives it) stands for the folder.
    opened = run_cli("info", "--model", str(rotary_folder / "config.json"))
    assert opened.returncode == 0, opened.stderr


def test_bytes_that_are_not_utf8_on_the_command_line(gpt2_folder: Path) -> None:
    # argv as raw bytes: "caf" + the two bytes of "é" + one stray byte that is no character
    argv = [sys.executable.encode(), b"-m", b"embedexplorer", b"tokens", b"caf\xc3\xa9\xff", b"--json"]
    argv += [b"--model", os.fsencode(gpt2_folder)]
    result = subprocess.run(argv, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert [t["token"] for t in out["tokens"]] == ["c", "af", "é", "\ufffd"]  # the stray byte is U+FFFD


def test_tokens_past_the_position_table_on_gpt2(gpt2_folder: Path) -> None:
    text = " hello" * 1100
    result = run_cli("tokens", text, "--model", str(gpt2_folder), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (len(out["tokens"]), out["count"], out["fits"], out["position_rows"]) == (1024, 1100, 1024, 1024)
    assert out["note"] == (
        "The text is 1,100 tokens, but the position table has 1,024 rows: there is no row for "
        "position 1,025, so only the first 1,024 tokens fit (shown)."
    )
    readable = run_cli("tokens", text, "--all", "--model", str(gpt2_folder))
    lines = readable.stdout.splitlines()
    assert lines[:2] == [f"model: {gpt2_folder}", "1100 token(s)"]
    assert lines[2 + 1024] == "-- no position row from position 1,025 on --"
    assert len([line for line in lines if line.startswith("_hello")]) == 1100
    assert lines[-1].startswith("note: The text is 1,100 tokens")


def test_tokens_json_keeps_its_shape_and_adds_keys() -> None:
    result = run_cli("tokens", "i love 🙂", "--model", "bundled", "--json")
    out = json.loads(result.stdout)
    assert out["tokens"] == [{"id": 1045, "token": "i"}, {"id": 2293, "token": "love"}, {"id": 100, "token": "[UNK]"}]
    assert (out["count"], out["fits"], out["position_rows"]) == (3, 3, 512)
    assert out["note"].startswith("1 of the 3 tokens are [UNK]")


def test_neighbours_of_a_word_the_vocabulary_lacks_carries_the_note() -> None:
    result = run_cli("neighbours", "🙂", "--model", "bundled", "-k", "3")
    assert result.returncode == 0, result.stderr
    assert "note: The vocabulary has no token for '🙂'; it became [UNK]." in result.stdout.splitlines()


def test_a_model_without_a_position_table_on_the_command_line(rotary_folder: Path) -> None:
    info = run_cli("info", "--model", str(rotary_folder))
    assert info.returncode == 0, info.stderr
    assert "no position table: the model marks positions by rotating rows (rotary embeddings)" in info.stdout
    tokens = run_cli("tokens", "paris " * 3000, "--model", str(rotary_folder), "--json")
    out = json.loads(tokens.stdout)
    assert (out["position_rows"], out["count"], out["fits"], len(out["tokens"])) == (None, 3000, 3000, 2048)
    assert out["note"] == "Showing the first 2,048 of 3,000 tokens."
