"""Both front doors answer every question of the README alike: the command line and the window's request kinds.

Each README command line that asks a question about tokens is run through ``cli.main`` (JSON), and
the same question is put to the request kinds the window's panes submit, with the request a pane
builds (a typed word as the person typed it, the Map menu's word choices, the Layers pane's fields).
The answers are compared token by token: ids, and cosines and coordinates to 1e-9. The reading of
a typed word is checked against GPT-2's own tokenizer (transformers), and the cosines against a
float64 computation on the rows read straight from the safetensors file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedexplorer.cli import build_parser, main
from embedexplorer.core.common.terminal import finite_or_none
from embedexplorer.core.directions.direction import DEFAULT_PAIRS, DirectionSpec
from embedexplorer.core.maps.word_sets import matching
from embedexplorer.core.tables.opening import open_table
from embedexplorer.jobs.base import JobContext, Kind, Session
from embedexplorer.jobs.compare_jobs import COMPARE, CompareRequest
from embedexplorer.jobs.direction_jobs import DIRECTION, DirectionRequest
from embedexplorer.jobs.exercise_jobs import ANALOGY, FAMILY_DISTANCES, AnalogyRequest, DistancesRequest
from embedexplorer.jobs.layer_jobs import LAYERS, LAYERS_WARM, MODEL_KEY, LayersRequest, WarmRequest
from embedexplorer.jobs.map_jobs import WORD_MAP, WordMapRequest
from embedexplorer.jobs.table_jobs import (
    COSINE,
    MAP,
    NEIGHBOURS,
    TOKENS,
    CosineRequest,
    MapRequest,
    NeighboursRequest,
    TokensRequest,
)

from ..gpt2_fixture import build_gpt2_tokenizer
from .test_readme import WORDS, WORDS_FILE, readme_commands

# The questions; info, models and downloads ask none about tokens.
QUESTIONS = ("tokens", "neighbours", "cosine", "analogy", "direction", "map", "layers", "compare")
PICTURES = ("--png", "--svg", "--html", "--csv")
CLOSE = 1e-9


def without_pictures(argv: list[str]) -> list[str]:
    """The question without its picture files: the window's exports are another matter."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in PICTURES:
            skip = True
        else:
            kept.append(word)
    return kept


# The questions' flags the README does not use: each asked through both doors too.
GROUPS_FILE = "groups.json"
FLAGS_NOT_IN_THE_README = [
    ["embedexplorer", "neighbours", "Paris", "--exact", "-k", "4"],
    ["embedexplorer", "analogy", "king", "man", "woman", "-k", "3", "--include-inputs", "--exact"],
    ["embedexplorer", "direction", "--pair", "he", "she", "--words", "paris", "-k", "5", "--no-baseline", "--exact"],
    ["embedexplorer", "direction", "--groups", GROUPS_FILE, "--words", "king", "-k", "4", "--no-baseline"],
    ["embedexplorer", "map", "--multi-token", "skip"],
]


def question_cases() -> list[tuple[list[str], str]]:
    found: list[tuple[list[str], str]] = []
    for argv in [*readme_commands(), *FLAGS_NOT_IN_THE_README]:
        if argv[1] not in QUESTIONS:
            continue
        argv = without_pictures(argv)
        models = ("as written",) if "--model" in argv or argv[1] == "compare" else ("bundled", "gpt2", "gguf")
        for model in models:
            # A GGUF file's layers are not run (the last test here); its t-SNE map is GPT-2's slow way again.
            if model == "gguf" and (argv[1] == "layers" or "tsne" in argv):
                continue
            if (argv, model) not in found:
                found.append((argv, model))
    return found


def case_id(value: object) -> str:
    return " ".join(value)[:60] if isinstance(value, list) else str(value)


def plain(value: object) -> Any:
    """As the command line's JSON holds it."""
    return json.loads(json.dumps(finite_or_none(value), ensure_ascii=False))


def ask(session: Session, kind: Kind[Any, Any], request: object) -> Any:
    return kind.run(JobContext(session), request)


def typed(args: argparse.Namespace, word: str) -> str:
    """The README's rule: a word in double quotes is read exactly as typed (what ``--exact`` asks for)."""
    return f'"{word}"' if getattr(args, "exact", False) else word


def through_the_window(args: argparse.Namespace, session: Session, cache: str | None, folder: Path) -> Any:
    """The question as the window's panes put it to the worker, normalised like the command line's JSON."""
    table = session.table
    command = args.command
    if command == "tokens":
        report = ask(session, TOKENS, TokensRequest(args.text)).report
        return {"tokens": [[t.id, t.token] for t in report.tokens]}
    if command == "neighbours":
        from embedexplorer.core.tables.spelling import word_or_first_token

        # The selected token: the typed word read by the window's rule, then its neighbours.
        chosen = word_or_first_token(table, typed(args, args.word))
        answer = ask(session, NEIGHBOURS, NeighboursRequest(chosen.id, args.k)).result
        return {"query": chosen.id, "neighbours": [[n.id, n.cosine] for n in answer.neighbours]}
    if command == "cosine":
        answer = ask(session, COSINE, CosineRequest(typed(args, args.a), typed(args, args.b)))
        return {"ids": [answer.a_id, answer.b_id], "cosine": answer.cosine}
    if command == "analogy":
        a, b, c = (typed(args, w) for w in (args.a, args.b, args.c))
        expect = "" if args.expect is None else typed(args, args.expect)
        answer = ask(session, ANALOGY, AnalogyRequest(a, b, c, args.k, args.include_inputs, expect))
        found = answer.expected
        expected = None if found is None else [found.query.id, None if found.rank is None else found.rank.rank]
        return {"neighbours": [[n.id, n.cosine] for n in answer.neighbours], "expected": expected}
    if command == "direction" and args.groups:
        groups = json.loads((folder / args.groups).read_text(encoding="utf-8"))
        spec = DirectionSpec(groups=tuple(tuple(typed(args, w) for w in groups[end]) for end in ("from", "to")))
        words = tuple(typed(args, w) for w in args.words)
        report = ask(session, DIRECTION, DirectionRequest(spec, words, args.k, baseline=not args.no_baseline))
        return direction_figures(plain(report.to_dict()))
    if command == "direction":
        spec = DirectionSpec(pairs=tuple((typed(args, a), typed(args, b)) for a, b in (args.pair or DEFAULT_PAIRS)))
        words = tuple(typed(args, w) for w in args.words)
        report = ask(session, DIRECTION, DirectionRequest(spec, words, args.k, baseline=not args.no_baseline))
        return direction_figures(plain(report.to_dict()))
    if command == "map" and args.words is None and args.projection == "pca":
        drawn = ask(session, MAP, MapRequest(args.families, args.multi_token))
        distances = ask(session, FAMILY_DISTANCES, DistancesRequest(family_map=drawn))
        return {"points": map_points(plain(drawn.to_dict(table.name))), "distances": plain(distances.to_list())} | (
            marked_on(session, drawn, args)
        )
    if command == "map":
        # Map > Whole vocabulary, Words matching..., or the words pasted into the list box.
        if args.words == "all":
            request = WordMapRequest("all", method=args.projection, seed=args.seed, cache_dir=cache)
        elif args.words.startswith("@"):
            text = (folder / args.words[1:]).read_text(encoding="utf-8")
            request = WordMapRequest("list", text, method=args.projection, seed=args.seed, cache_dir=cache)
        else:
            request = WordMapRequest("regex", args.words, method=args.projection, seed=args.seed, cache_dir=cache)
        drawn = ask(session, WORD_MAP, request)
        return {"points": map_points(plain(drawn.to_dict()))} | marked_on(session, drawn, args)
    if command == "layers":
        request = LayersRequest(args.text, args.place, args.compare, args.compare_place, args.k)
        return {"layers": layer_figures(plain(ask(session, LAYERS, request).answer.as_rows()))}
    raise AssertionError(command)


def through_the_command_line(args: argparse.Namespace, out: Any) -> Any:
    """The command line's JSON, cut to the same figures."""
    command = args.command
    if command == "tokens":
        return {"tokens": [[t["id"], t["token"]] for t in out["tokens"]]}
    if command == "neighbours":
        return {"query": out["query"]["id"], "neighbours": [[n["id"], n["cosine"]] for n in out["neighbours"]]}
    if command == "cosine":
        return {"ids": [out["a_id"], out["b_id"]], "cosine": out["cosine"]}
    if command == "analogy":
        wanted = out.get("expected")
        expected = None if wanted is None else [wanted["id"], wanted["rank"]]
        return {"neighbours": [[n["id"], n["cosine"]] for n in out["neighbours"]], "expected": expected}
    if command == "direction":
        return direction_figures(out)
    if command == "map" and args.words is None and args.projection == "pca":
        return {"points": map_points(out), "distances": out["family_distances"]} | selected_figures(args, out)
    if command == "map":
        return {"points": map_points(out)} | selected_figures(args, out)
    if command == "layers":
        return {"layers": layer_figures(out)}
    raise AssertionError(command)


def marked_on(session: Session, drawn: Any, args: argparse.Namespace) -> dict[str, Any]:
    """``--select``: the word typed into the Text box (its first chip selected), then the map pane's request
    for its neighbours placed on the map: the star and rings the window draws."""
    if args.select is None:
        return {}
    first = ask(session, TOKENS, TokensRequest(args.select)).report.tokens[0]
    marks = ask(session, NEIGHBOURS, NeighboursRequest(first.id, args.k, on_map=drawn)).marks
    rings = [[r.token_id, r.at[0], r.at[1]] for r in marks.rings]
    return {"selected": [marks.token_id, list(marks.at), rings]}


def selected_figures(args: argparse.Namespace, out: dict[str, Any]) -> dict[str, Any]:
    if args.select is None:
        return {}
    chosen = out["selected"]
    return {"selected": [chosen["id"], chosen["star"], [[r["id"], r["x"], r["y"]] for r in chosen["rings"]]]}


def direction_figures(report: dict[str, Any]) -> dict[str, Any]:
    return {
        end: [[t["id"], t["score"]] for t in report[end]] for end in ("top", "bottom")
    } | {"words": [[w["id"], w["score"], w["percentile"]] for w in report["words"]], "baseline": report["baseline"]}


def map_points(drawn: dict[str, Any]) -> list[list[Any]]:
    return [[p["token"], p["ids"], p["x"], p["y"]] for p in drawn["points"]]


def layer_figures(rows: list[dict[str, Any]]) -> list[Any]:
    return rows


def same(cli: Any, window: Any, where: str = "") -> None:
    """Equal token by token: ids exactly, numbers to 1e-9."""
    if isinstance(cli, dict):
        assert isinstance(window, dict) and set(cli) == set(window), where
        for key in cli:
            same(cli[key], window[key], f"{where}.{key}")
    elif isinstance(cli, list):
        assert isinstance(window, list) and len(cli) == len(window), f"{where}: {len(cli)} != {len(window)}"
        for i, (a, b) in enumerate(zip(cli, window, strict=True)):
            same(a, b, f"{where}[{i}]")
    elif isinstance(cli, float) and not isinstance(window, bool):
        assert window == pytest.approx(cli, abs=CLOSE), where
    else:
        assert cli == window, where


def test_every_question_of_the_readme_is_covered() -> None:
    asked = {argv[1] for argv, _model in question_cases()}
    assert asked == set(QUESTIONS)


@pytest.mark.parametrize(("argv", "model"), question_cases(), ids=case_id)
def test_both_doors_answer_alike(
    argv: list[str],
    model: str,
    gpt2_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,  # type: ignore[no-untyped-def]
    request: pytest.FixtureRequest,
) -> None:
    (tmp_path / WORDS_FILE).write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    groups = {"from": ["he", "man", "king"], "to": ["she", "woman", "queen"]}
    (tmp_path / GROUPS_FILE).write_text(json.dumps(groups), encoding="utf-8")
    # The maps' cache is the one the README's commands use (the user's, or EMBEDEXPLORER_CACHE_DIR):
    # a t-SNE layout is computed once, by whichever door or test asks first.
    cache = None
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    words = argv[1:]
    if model != "as written":
        named = {"bundled": "bundled", "gpt2": str(gpt2_folder)}
        words += ["--model", named[model] if model in named else str(request.getfixturevalue("gpt2_gguf"))]
    if words[0] == "compare":
        compared_alike(words, capsys)
        return
    assert main([*words, "--json"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    args = build_parser().parse_args(words)
    session = Session()
    session.replace_table(open_table(args.model))
    try:
        window = through_the_window(args, session, cache, tmp_path)
    finally:
        session.replace_table(None)
    same(through_the_command_line(args, out), window)


def compared_alike(words: list[str], capsys) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """``compare`` through the command line and through the Compare pane's request, the same token by token."""
    assert main([*words, "--json"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    args = build_parser().parse_args(words)
    session = Session()
    session.replace_table(open_table(args.a, separate_tokenizer=True))
    try:
        ids = tuple(int(i) for i in matching(session.table, args.words).ids)
        window = plain(ask(session, COMPARE, CompareRequest(args.b, args.k, words=ids)).to_dict())
    finally:
        session.replace_table(None)
    assert [t["id"] for t in out["tokens"]] == [t["id"] for t in window["tokens"]]
    same(out, window)
    return out


def test_a_folder_and_a_gguf_file_compare_alike_through_both_doors(gpt2_folder: Path, gpt2_gguf: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Table A a safetensors folder, table B a GGUF file (its blocks scanned through their copy): the pane and
    the command line give the same tokens, neighbour lists and figures, either way round."""
    for a, b in ((gpt2_folder, gpt2_gguf), (gpt2_gguf, gpt2_folder)):
        out = compared_alike(["compare", str(a), str(b), "--words", "^ (king|queen|Paris)$", "-k", "5"], capsys)
        assert len(out["tokens"]) == 3


def wte_rows(folder: Path) -> np.ndarray:
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), framework="numpy") as weights:
        return weights.get_tensor("transformer.wte.weight").astype(np.float64)


@pytest.mark.parametrize(("a", "b"), [("paris", "france"), ("Monday", "Tuesday"), ("king", "queen")])
def test_a_word_alone_is_read_inside_a_sentence_and_exact_as_typed(
    a: str, b: str, gpt2_folder: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """GPT-2's own tokenizer is the oracle for the reading, float64 rows from the file for the cosine."""
    tokenizer = build_gpt2_tokenizer()
    rows = wte_rows(gpt2_folder)
    session = Session()
    session.replace_table(open_table(str(gpt2_folder)))
    try:
        for exact, read in ((False, lambda w: " " + w), (True, lambda w: w)):
            wanted = [tokenizer.encode(read(w))[0] for w in (a, b)]
            flags = ["--exact"] if exact else []
            assert main(["cosine", a, b, "--model", str(gpt2_folder), "--json", *flags]) == 0
            out = json.loads(capsys.readouterr().out)
            quoted = (f'"{a}"', f'"{b}"') if exact else (a, b)
            window = ask(session, COSINE, CosineRequest(*quoted))
            assert [out["a_id"], out["b_id"]] == [window.a_id, window.b_id] == wanted
            x, y = rows[wanted[0]], rows[wanted[1]]
            expected = float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))
            assert out["cosine"] == pytest.approx(expected, abs=1e-5)
            assert window.cosine == pytest.approx(expected, abs=1e-5)
    finally:
        session.replace_table(None)


def test_compare_opens_table_b_with_its_tokenizer_in_a_child_process(
    gpt2_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    """Table B is a file the user named: its tokenizer gets the child process and its limits, from either door."""
    import embedexplorer.core.tables.opening as opening

    seen: list[bool] = []
    real_open = opening.open_table

    def watched(*args: Any, **kwargs: Any) -> Any:
        table = real_open(*args, **kwargs)
        seen.append(table.vocabulary.in_child_process)
        return table

    monkeypatch.setattr(opening, "open_table", watched)  # both doors import it when they run
    assert main(["compare", "bundled", str(gpt2_folder), "--words", "^king$", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["b"] == str(gpt2_folder)
    assert seen == [True, True]  # A, opened by the command, then B, opened by the request kind


def test_a_gguf_tables_layers_are_refused_in_one_sentence_through_both_doors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A GGUF file gives its table, not layers this program runs: the Layers pane's request and the command line
    say so in the same one sentence, without looking for weights beside the file (they said the folder had
    no safetensors)."""
    from gguf.constants import GGMLQuantizationType as Q

    from ..gguf_fixture import write_gguf

    rows = np.random.default_rng(5).standard_normal((300, 64)).astype(np.float32)  # every byte a token
    path = write_gguf(tmp_path / "table.gguf", rows, Q.F32)
    session = Session()
    session.replace_table(open_table(str(path)))
    try:
        reply = ask(session, LAYERS, LayersRequest("ab", 1))
        # Opening the Layers tab warms the model's process: for a file whose layers never run, none starts, and
        # the tab is told why at once, in the same sentence.
        warmed = ask(session, LAYERS_WARM, WarmRequest())
        assert not warmed.started
        assert MODEL_KEY not in session.derived
    finally:
        session.replace_table(None)
    assert reply.answer is None and reply.missing is not None
    assert reply.missing.download_id is None and reply.missing.model_bytes is None
    assert reply.missing.message.startswith("Through the layers runs the whole model from a folder of safetensors")
    assert warmed.unavailable == reply.missing.message
    assert main(["layers", "ab", "--place", "1", "--model", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"embedexplorer: {reply.missing.message}"
    assert "no *.safetensors" not in err


def test_words_whose_bytes_are_not_utf8_read_as_the_window_holds_them(capsys) -> None:  # type: ignore[no-untyped-def]
    """A command-line word with bytes that are not UTF-8 (Python keeps them as lone surrogates) is read, answered and
    named as the window holds such a word: with U+FFFD in their place, never as '\\udcff' in a sentence."""
    session = Session()
    session.replace_table(open_table("bundled"))
    try:
        assert main(["neighbours", "paris\udcff", "-k", "5", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        window = ask(session, NEIGHBOURS, NeighboursRequest("paris\ufffd", 5, with_baseline=False))
        assert out["query"]["id"] == window.result.query.id
        assert [n["id"] for n in out["neighbours"]] == [n.id for n in window.result.neighbours]
        for argv in (["cosine", "\udcff", "paris"], ["analogy", "\udcff", "man", "woman"], ["tokens", "\udcff\udcfe"]):
            main(argv)
            said = capsys.readouterr()
            assert "\\udc" not in said.out + said.err
        assert main(["cosine", "\udcff", "paris"]) != 0
        assert "There is no token in '\ufffd'; type a word." in capsys.readouterr().err
        # Bytes that are UTF-8 after all (a locale that did not decode them) are the characters they spell.
        spelled = []
        for text in ("caf\udcc3\udca9", "café"):
            assert main(["tokens", text, "--json"]) == 0
            spelled.append(json.loads(capsys.readouterr().out)["tokens"])
        assert spelled[0] == spelled[1]
    finally:
        session.replace_table(None)
