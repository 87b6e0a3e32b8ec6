"""A usage mistake on the command line: one safe line that points to the help of the command at hand.

Asked as a script would: `embedexplorer models --model X` said "(see embedexplorer --help)", the top
level's help, which does not list the options of `models`; and the words of a usage mistake went to the
terminal as typed, escape sequences too, past the one safe printer every other line goes through.
"""

from __future__ import annotations

import pytest

from tests.core.test_sources import run_cli


@pytest.mark.parametrize(
    ("args", "helped"),
    [
        (("models", "--model", "X"), "embedexplorer models --help"),
        (("neighbours", "bank", "--nonsense"), "embedexplorer neighbours --help"),
        (("nonsense",), "embedexplorer --help"),
    ],
)
def test_a_usage_mistake_points_to_its_commands_help(args: tuple[str, ...], helped: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert f"(see {helped})" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_words_of_a_usage_mistake_reach_the_terminal_escaped() -> None:
    result = run_cli("models", "--colour=\x1b]0;owned\x07\x1b[31mred")
    assert result.returncode == 2
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "\\x1b]0;owned\\x07" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
