"""``embedexplorer map --select WORD``: the selected token's star and rings in the JSON and the text, and one
clear sentence for each mistake (the pages and pictures are compared with the window's in tests/ui)."""

from __future__ import annotations

import json

import pytest

from tests.core.test_sources import run_cli


def test_the_selection_is_in_the_json_and_the_text(minilm_table) -> None:
    result = run_cli("map", "--model", "bundled", "--select", "monday", "-k", "4", "--json")
    assert result.returncode == 0, result.stderr
    chosen = json.loads(result.stdout)["selected"]
    nearest = minilm_table.neighbours("monday", 4).neighbours
    assert (chosen["text"], chosen["id"], chosen["token"], chosen["k"]) == ("monday", 6928, "monday", 4)
    assert [(r["id"], r["token"]) for r in chosen["rings"]] == [(n.id, n.token) for n in nearest]
    assert len(chosen["star"]) == 2 and all(len(r) == 4 for r in chosen["rings"]) and chosen["note"] == ""

    shown = run_cli("map", "--model", "bundled", "--select", "monday", "-k", "4")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    star = next(line for line in lines if line.startswith("selected: "))
    assert star.startswith("selected: monday (id 6,928), its star at ")
    assert lines[lines.index(star) + 1] == "rings at its 4 nearest rows on the map: " + ", ".join(
        n.token for n in nearest
    )


def test_a_word_of_several_tokens_selects_its_first_as_the_text_box_does(gpt2_folder) -> None:
    result = run_cli("map", "--model", str(gpt2_folder), "--select", " Parisian", "--json")
    assert result.returncode == 0, result.stderr
    chosen = json.loads(result.stdout)["selected"]
    assert (chosen["id"], chosen["token"]) == (6342, "_Paris")
    assert chosen["note"] == "' Parisian' is 2 tokens (_Paris ian); the first, _Paris, is the one selected."


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--select", "\U0001f600", "--html", "page.html"),
            "The vocabulary has no token for '\U0001f600': the tokenizer reads it as [UNK], the one row of "
            "every character it lacks, so there is no token of its own to select.",
        ),
        (("--select", "  ", "--png", "map.png"), "There is no token in an empty text; type a word."),
        (
            ("--select", "monday", "--csv", "points.csv"),
            "--select marks a token on a picture or a page: add --png, --svg or --html "
            "(--csv writes the points alone).",
        ),
        (("--select", "monday", "-k", "201"), "argument -k/--k: must be from 1 to 200"),
        (("--select", "monday", "-k", "0"), "argument -k/--k: must be from 1 to 200"),
    ],
)
def test_each_mistake_is_one_sentence_and_writes_nothing(tmp_path, args: tuple[str, ...], said: str) -> None:
    result = run_cli("map", "--model", "bundled", *(str(tmp_path / a) if "." in a else a for a in args))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and said in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []
