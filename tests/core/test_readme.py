"""Every command line the README shows runs as shown, on the bundled model and on the GPT-2-shaped fixture.

A renamed flag, a removed command or a changed default fails here, not in a reader's terminal.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from embedexplorer.cli import COMMANDS, COMMANDS_WITHOUT_MODEL

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
WORDS_FILE = "my-words.txt"
WORDS = ["monday", "tuesday", "paris", "france", "apple", "banana", " Monday", " Paris", "king", "queen"]


def readme_commands() -> list[list[str]]:
    """The ``embedexplorer ...`` lines of the README's code blocks, as argument lists (comments dropped)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL):
        for line in block.splitlines():
            if line.startswith("embedexplorer "):
                commands.append(shlex.split(line, comments=True))
    return commands


def cases() -> list[tuple[list[str], str]]:
    """Each command with each model; a command that names its model runs once, as written."""
    found = []
    for argv in readme_commands():
        as_written = "--model" in argv or argv[1] in COMMANDS_WITHOUT_MODEL
        for model in ("as written",) if as_written else ("bundled", "gpt2"):
            found.append((argv, model))
    return found


def test_the_readme_shows_every_command() -> None:
    shown = {argv[1] for argv in readme_commands()}
    assert shown == set(COMMANDS), set(COMMANDS) ^ shown


def case_id(value: object) -> str:
    return " ".join(value)[:60] if isinstance(value, list) else str(value)


@pytest.mark.parametrize(("argv", "model"), cases(), ids=case_id)
def test_each_readme_command_runs(argv: list[str], model: str, tmp_path: Path, gpt2_folder: Path) -> None:
    (tmp_path / WORDS_FILE).write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    args = argv[1:]
    if model != "as written":
        args += ["--model", "bundled" if model == "bundled" else str(gpt2_folder)]
    result = subprocess.run(
        [sys.executable, "-m", "embedexplorer", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    if any(a.startswith("--download") for a in args):
        # No network in tests: the command is understood and refused in one sentence about being offline.
        assert result.returncode == 2, result.stderr
        assert "offline" in result.stderr.lower() and "usage" not in result.stderr.lower(), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        return
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    for flag in ("--png", "--svg"):
        if flag in args:
            written = tmp_path / args[args.index(flag) + 1]
            assert written.stat().st_size > 1000, written
