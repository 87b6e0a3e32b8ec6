"""Issue 37, rule 4: every line to a terminal goes through the one safe printer (core/common/terminal.py).

A name from a file or a folder is one row, whatever it holds: a newline in it is shown
as ``\\n`` (it cannot forge another row), an escape sequence as ``\\x1b`` (it cannot
retitle the terminal or hide text).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q

from embedexplorer.core.common import terminal
from embedexplorer.core.sources.resolve import bundled_model_dir
from tests.gguf_fixture import write_gguf

from .helpers import link_files, run_cli

HOSTILE = "m\nall-MiniLM-L6-v2  hf-cache  GGUF  Q4_0  1 KiB  /forged\x1b]0;pwned\x07\x1b[2J"
SPELLED_OUT = "m\\nall-MiniLM-L6-v2  hf-cache  GGUF  Q4_0  1 KiB  /forged\\x1b]0;pwned\\x07\\x1b[2J"
RAW_CONTROLS = [chr(c) for c in range(32) if chr(c) != "\n"] + ["\x7f", "\x9b"]


def hostile_model(tmp_path: Path) -> Path:
    bundled = bundled_model_dir()
    folder = tmp_path / HOSTILE
    link_files(bundled, folder, tuple(file.name for file in bundled.iterdir() if file.is_file()))
    return folder


def assert_clean(text: str) -> None:
    assert not [c for c in RAW_CONTROLS if c in text], repr(text)


def test_models_lists_one_row_per_model_whatever_its_name_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / ".lmstudio" / "models" / "pub" / HOSTILE
    folder.mkdir(parents=True)
    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    write_gguf(folder / "tiny.gguf", rows, Q.F16)
    result = run_cli("models", env={"HOME": str(home), "HF_HOME": str(tmp_path / "hf"), "OLLAMA_MODELS": ""})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # The header, the bundled model (listed on every machine) and the one model in the folder.
    assert lines[0].startswith("NAME"), lines
    rows = [line for line in lines[1:] if "  bundled  " not in line]
    assert len(lines) == 3 and len(rows) == 1, lines
    assert rows[0].startswith("pub/m\\nall-MiniLM-L6-v2  hf-cache")
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in rows[0]
    assert_clean(result.stdout)


@pytest.mark.parametrize(
    "command",
    [
        ("neighbours", "dog", "-k", "3"),
        ("tokens", "dog"),
        ("cosine", "dog", "cat"),
        ("analogy", "king", "man", "woman", "-k", "3"),
        ("info",),
    ],
)
def test_a_model_path_with_a_newline_and_escapes_stays_on_its_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    folder = hostile_model(tmp_path)
    result = run_cli(*command, "--model", str(folder))
    assert result.returncode == 0, result.stderr
    assert_clean(result.stdout + result.stderr)
    model_lines = [line for line in result.stdout.splitlines() if line.startswith("model: ")]
    assert len(model_lines) == 1
    assert model_lines[0].endswith(SPELLED_OUT)
    assert not any(line.startswith("all-MiniLM-L6-v2  hf-cache") for line in result.stdout.splitlines())


def test_compare_names_both_files_on_one_line_each(tmp_path: Path) -> None:
    folder = hostile_model(tmp_path)
    result = run_cli("compare", str(folder), "bundled", "--words", "^(dog|cat|sun|moon)$", "-k", "3")
    assert result.returncode == 0, result.stderr
    assert_clean(result.stdout + result.stderr)
    assert result.stdout.splitlines()[0].startswith("A: ") and "\\n" in result.stdout.splitlines()[0]
    assert result.stdout.splitlines()[1].startswith("B: all-MiniLM-L6-v2")


def test_the_progress_line_spells_out_what_a_file_name_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    # compare's progress names A and B ("Nearest tokens in A (NAME)"); a person at a terminal sees it.
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    terminal.show_progress(1, 2, f"Nearest tokens in A ({HOSTILE})")
    terminal.end_progress()
    text = err.getvalue()
    assert text.startswith("\rNearest tokens in A (m\\nall-MiniLM-L6-v2") and "\\x1b]0;pwned\\x07" in text
    assert text.count("\x1b") == 1 and text.endswith("\x1b[K\n")  # only the printer's own erase-line

