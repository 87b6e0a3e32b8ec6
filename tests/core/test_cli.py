"""The command line as a user runs it: JSON shapes, readable output, one-line errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.core.test_sources import run_cli
from tests.images import png_facts


def run_json(*args: str) -> Any:
    result = run_cli(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_tokens_on_gpt2(gpt2_folder) -> None:
    out = run_json("tokens", "The capital of France is", "--model", str(gpt2_folder))
    assert out["model"] == str(gpt2_folder)
    assert [t["id"] for t in out["tokens"]] == [464, 3139, 286, 4881, 318]
    assert out["tokens"][0] == {"id": 464, "token": "The"}


def test_neighbours_shape_and_values(gpt2_folder, gpt2_table) -> None:
    out = run_json("neighbours", " Paris", "-k", "5", "--model", str(gpt2_folder))
    assert out["query"] == {"id": 6342, "token": "_Paris"}
    assert len(out["neighbours"]) == 5
    expected = gpt2_table.neighbours(" Paris", 5).neighbours
    assert [n["id"] for n in out["neighbours"]] == [n.id for n in expected]
    assert set(out["neighbours"][0]) == {"id", "token", "cosine"}


def test_cosine_info_and_analogy_on_bundled() -> None:
    cosine = run_json("cosine", "monday", "tuesday", "--model", "bundled")
    assert 0.5 < cosine["cosine"] <= 1.0
    info = run_json("info", "--model", "bundled")
    assert {
        "model",
        "rows",
        "width",
        "table_weights",
        "model_weights",
        "share",
        "position_rows",
        "baseline_cosine",
    } <= set(info)
    assert (info["rows"], info["width"], info["position_rows"]) == (30522, 384, 512)
    assert info["neighbour_search"].startswith(("one bfloat16 pass", "one float32 pass"))
    analogy = run_json("analogy", "king", "man", "woman", "--model", "bundled")
    assert analogy["neighbours"][0]["token"] == "queen"


def test_info_on_gpt2_matches_chapter(gpt2_folder) -> None:
    info = run_json("info", "--model", str(gpt2_folder))
    assert info["table_weights"] == 38_597_376 and info["model_weights"] == 124_439_808
    assert round(info["share"] * 100, 1) == 31.0 and info["position_rows"] == 1024


def test_map_json_and_png(tmp_path) -> None:
    png = tmp_path / "map.png"
    out = run_json("map", "--model", "bundled", "--png", str(png), "--width", "1200")
    assert len(out["points"]) == 63
    assert len({p["family"] for p in out["points"]}) == 8
    assert {"token", "family", "x", "y"} <= set(out["points"][0])
    assert 0 < out["explained_variance"] < 1
    width, _, colours = png_facts(png)
    assert width == 1200
    assert colours > 20  # a drawing, not a blank page


def test_readable_output_names_the_model() -> None:
    result = run_cli("neighbours", "monday", "--model", "bundled")
    assert result.returncode == 0
    assert result.stdout.startswith("model: all-MiniLM-L6-v2 (bundled)")
    assert "tuesday" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("info", "--model", "/no/such/folder"), "No such folder"),
        (("neighbours", "   ", "--model", "bundled"), "Type a word first"),  # the window's words, one rule
        (("neighbours", "monday", "-k", "0"), "at least 1"),
        (("map", "--families", "/no/such/file.json", "--model", "bundled"), "Cannot read the families file"),
    ],
)
def test_errors_are_one_line_exit_2(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_map_of_words_matching_a_regex_or_listed_in_a_file(tmp_path, minilm_table) -> None:
    days = r"^(mon|tues|wednes|thurs|fri|satur|sun)day$"
    out = run_json("map", "--words", days, "--model", "bundled")
    assert out["projection"] == "pca" and len(out["points"]) == 7
    assert out["families"]["days"] == 7  # MiniLM reads the chapter's ' Monday' as its one token 'monday'
    listing = tmp_path / "words.txt"
    listing.write_text("monday\ntuesday\nparis\nzxqvbnmw\n", encoding="utf-8")
    listed = run_json("map", "--words", f"@{listing}", "--model", "bundled")
    assert [p["token"] for p in listed["points"][:3]] == ["monday", "tuesday", "paris"]
    assert listed["points"][3]["ids"] == [t.id for t in minilm_table.encode("zxqvbnmw")]
    png = tmp_path / "days.png"
    drawn = run_cli("map", "--words", days, "--model", "bundled", "--png", str(png))
    assert drawn.returncode == 0 and "7 rows matching" in drawn.stdout
    assert png_facts(png)[0] == 1600


def test_tsne_map_from_the_command_line_reads_the_cache(tmp_path, minilm_table) -> None:
    from embedexplorer.core.maps.map_cache import MapCache
    from embedexplorer.core.maps.word_maps import word_map
    from embedexplorer.core.maps.word_sets import matching

    words = r"^(mon|tues|wednes|thurs|fri|satur|sun)day$|^[a-c][a-z]{5}s$"
    # Computed here (the engine's t-SNE is tested in test_word_maps); the command line must find it.
    computed = word_map(minilm_table, matching(minilm_table, words), None, "tsne", cache=MapCache(tmp_path / "maps"))
    result = run_cli(
        "map", "--words", words, "--projection", "tsne", "--model", "bundled", "--json",
        env={"EMBEDEXPLORER_CACHE_DIR": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["from_cache"] and out["projection"] == "tsne" and "neighbours by cosine" in out["keeps"]
    assert [[p["x"], p["y"]] for p in out["points"]] == computed.coords.tolist()


@pytest.mark.parametrize(
    ("words", "projection", "said"),
    [
        (r"^zzqqxx$", "pca", "matches '^zzqqxx$'"),
        ("(unclosed", "pca", "not a valid regular expression"),
        ("@/nonexistent/words.txt", "pca", "Cannot read the word list"),
        (r"^(mon|tues)day$", "tsne", "needs at least 10 rows"),
    ],
)
def test_map_words_mistakes_are_one_line(words: str, projection: str, said: str) -> None:
    result = run_cli("map", "--words", words, "--projection", projection, "--model", "bundled")
    assert result.returncode == 2 and said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_layers_json_is_one_object_per_layer(minilm_table) -> None:
    texts = ("the river bank", "--place", "3", "--compare", "my bank account")
    result = run_cli("layers", *texts, "-k", "3", "--json", "--model", "bundled")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress bars or load reports from transformers
    rows = json.loads(result.stdout)
    assert [r["layer"] for r in rows] == list(range(7))
    assert all(set(r) == {"layer", "length", "cosine_to_row", "cosine_to_compare", "nearest", "guess"} for r in rows)
    assert all(r["guess"] == [] for r in rows)  # MiniLM was saved without an output head: no guess to give
    assert all(len(r["nearest"]) == 3 and set(r["nearest"][0]) == {"token", "id", "cosine"} for r in rows)
    assert rows[0]["nearest"][0] == {"token": "bank", "id": 2924, "cosine": rows[0]["nearest"][0]["cosine"]}
    # The second "bank" was found in the second text by its id; the two drift apart.
    assert rows[-1]["cosine_to_compare"] < rows[0]["cosine_to_compare"] < 1.0
    alone = run_json("layers", "the river bank", "--place", "3", "--model", "bundled")
    assert all(r["cosine_to_compare"] is None for r in alone)
    assert [r["length"] for r in alone] == pytest.approx([r["length"] for r in rows], rel=1e-6)


def test_layers_json_guess_is_the_models_own_and_info_names_the_head(llama_folder, gpt2_folder) -> None:
    from transformers import AutoModelForCausalLM

    rows = run_json("layers", " The river bank was steep", "--place", "3", "-k", "4", "--model", str(llama_folder))
    assert all(len(r["guess"]) == 4 and set(r["guess"][0]) == {"id", "token", "prob"} for r in rows)
    full = AutoModelForCausalLM.from_pretrained(str(llama_folder), use_safetensors=True).eval()
    import torch

    from embedexplorer import open_table

    ids = [t.id for t in open_table(str(llama_folder)).encode(" The river bank was steep")]
    with torch.inference_mode():
        probs = torch.softmax(full(torch.tensor([ids])).logits[0, 2], -1)
    top = torch.topk(probs, 4)
    assert [g["id"] for g in rows[-1]["guess"]] == top.indices.tolist()
    assert [g["prob"] for g in rows[-1]["guess"]] == pytest.approx(top.values.tolist(), abs=1e-5)
    assert run_json("info", "--model", str(llama_folder))["output_head"] == "own"
    info = run_cli("info", "--model", str(gpt2_folder))
    assert "output head: the embedding table itself (tied)" in info.stdout
    assert run_json("info", "--model", "bundled")["output_head"] == "none"


def test_layers_readable_output_has_a_row_per_layer(gpt2_folder) -> None:
    result = run_cli("layers", "The capital of France is", "--place", "4", "-k", "2", "--model", str(gpt2_folder))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "token _France (id 4881) at place 4 of 'The capital of France is'"
    assert "next-token guess" in result.stdout
    table = lines[lines.index(next(line for line in lines if line.startswith("layer"))) + 1 :]
    assert [line.split()[0] for line in table] == ["input", *map(str, range(1, 13))]


def test_the_entry_point_knows_the_commands_by_name_without_importing_them() -> None:
    from embedexplorer.cli import COMMANDS
    from embedexplorer.cli.early import COMMAND_NAMES

    assert COMMAND_NAMES == set(COMMANDS)


@pytest.mark.parametrize(
    ("words", "starts"),
    [
        (["neighbours", " Paris", "--model", "{gpt2}", "--json"], True),
        (["tokens", "--model={gpt2}", "a text"], True),
        (["cosine", "a", "b", "--model", "bundled", "--model", "{gpt2}"], True),  # the last one counts
        (["neighbours", " Paris", "--model", "{gpt2}", "--download"], False),  # the parser decides
        (["neighbours", " Paris", "--model", "{gpt2}", "--help"], False),
        (["neighbours", "--", "--model", "{gpt2}"], False),  # words after -- are not options
        (["--model", "{gpt2}"], False),  # the window's option
        (["neighbours", " Paris", "--model", "{gpt2}/config.json"], False),  # not a folder
        (["neighbours", " Paris", "--model", "bundled"], False),
    ],
)
def test_the_tokenizer_starts_before_the_parser_only_for_a_plainly_named_folder(
    words: list[str], starts: bool, gpt2_folder
) -> None:
    import os

    from embedexplorer.cli.early import start_tokenizer_soon
    from embedexplorer.core.text import tokenizer_process

    start_tokenizer_soon([w.replace("{gpt2}", str(gpt2_folder)) for w in words])
    try:
        assert (os.path.realpath(gpt2_folder) in tokenizer_process._early) == starts
    finally:
        tokenizer_process.close_early()


def test_a_usage_error_kills_the_child_started_early_instead_of_waiting_for_its_tokenizer(gpt2_folder, capsys) -> None:
    import os
    import signal

    from embedexplorer.cli.early import start_tokenizer_soon
    from embedexplorer.cli.entry import main
    from embedexplorer.core.text import tokenizer_process

    words = ["neighbours", " Paris", "--model", str(gpt2_folder), "--no-such-option"]
    start_tokenizer_soon(words)
    child = tokenizer_process._early[os.path.realpath(gpt2_folder)]._process
    assert child is not None
    with pytest.raises(SystemExit) as exit_info:
        main(words)
    assert exit_info.value.code == 2
    assert "--no-such-option" in capsys.readouterr().err
    # Killed and reaped at once, not asked to end after it has loaded its tokenizer.
    assert not tokenizer_process._early
    assert child.returncode == -signal.SIGKILL


@pytest.mark.parametrize(
    "question", [("neighbours", " bank"), ("cosine", " bank", " river"), ("analogy", " king", " man", " woman")]
)
def test_the_baseline_reads_as_the_window_and_info_print_it(gpt2_folder, gpt2_table, question) -> None:
    """A tiny negative mean cosine (GPT-2's random table: -0.0002) is "0.000" in the window's neighbours
    pane and in ``info``: the questions' baseline line says the same, never "-0.000"."""
    from embedexplorer.core.text.texts import fixed

    assert -0.0005 < gpt2_table.baseline_cosine < 0  # the case in question: it rounds to a signed zero
    result = run_cli(*question, "--model", str(gpt2_folder))
    assert result.returncode == 0, result.stderr
    shown = fixed(gpt2_table.baseline_cosine, 3)
    assert f"(baseline for unrelated tokens here: {shown})" in result.stdout.splitlines()
    info = run_cli("info", "--model", str(gpt2_folder)).stdout
    assert f"mean cosine of unrelated tokens (baseline): {shown}" in info.splitlines()



@pytest.mark.parametrize(
    "question",
    [("tokens", "i love 🙂"), ("neighbours", "paris", "-k", "3"), ("cosine", "paris", "france")],
)
def test_json_keys_are_the_same_whatever_the_model_says(gpt2_folder, question) -> None:
    """A script reads the same keys from every model, whether the model has a note on the question or not.

    MiniLM has no token for 🙂 (a note on [UNK]); GPT-2 splits 'paris' in two (a note on its first token)."""
    on_gpt2 = run_json(*question, "--model", str(gpt2_folder))
    on_minilm = run_json(*question, "--model", "bundled")
    assert set(on_minilm) == set(on_gpt2)
    assert {bool(on_gpt2["note"]), bool(on_minilm["note"])} == {True, False}, "one of the two has a note"


def test_every_option_with_a_default_names_it_in_its_help() -> None:
    """--help tells what an option left out means, and the figure it gives is the one the parser uses."""
    import argparse

    from embedexplorer.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    unnamed = []
    for name, command in commands.choices.items():
        for action in command._actions:
            default = action.default
            if not action.option_strings or default in (None, False, [], argparse.SUPPRESS):
                continue
            help_text = (action.help or "") % {"default": default}
            if "default" not in help_text or str(default) not in help_text.replace(",", ""):
                unnamed.append(f"{name} {action.option_strings[0]} (default {default!r}): {action.help!r}")
    assert not unnamed, "\n".join(unnamed)
