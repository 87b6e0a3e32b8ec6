"""Two tables compared token by token, checked against plain numpy (float64) on the same numbers."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table
from embedexplorer.core.common.errors import Interrupted, QueryError, TableNotFoundError
from embedexplorer.core.compare.comparison import compare_tables
from embedexplorer.core.compare.every_neighbour import nearest_of_all
from embedexplorer.core.compare.output_head import output_head_table
from embedexplorer.jobs.base import JobContext, Session
from embedexplorer.jobs.compare_jobs import CompareRequest, compare

from ..gguf_fixture import gpt2_vocabulary, small_vocabulary, write_gguf
from ..minilm_gguf import write_minilm_gguf

ROOT = Path(__file__).resolve().parents[2]


def numpy_nearest(rows: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain numpy: float64 cosines of the query rows with every row, the row itself left out, ties by id."""
    unit = np.asarray(rows, dtype=np.float64)
    unit = unit / np.linalg.norm(unit, axis=1, keepdims=True)
    scores = unit[queries] @ unit.T
    scores[np.arange(queries.size), queries] = -np.inf
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return order, scores


def assert_same_neighbours(found: np.ndarray, expected: np.ndarray, scores: np.ndarray, tie: float = 0.0) -> None:
    """The same k ids per row; with ``tie`` > 0, an id may differ only where numpy's own cosines are that close."""
    if tie == 0.0:
        np.testing.assert_array_equal(found, expected)
        return
    for row in np.flatnonzero((np.sort(found, axis=1) != np.sort(expected, axis=1)).any(axis=1)):
        kth = scores[row, expected[row, -1]]
        odd = np.setxor1d(found[row], expected[row])
        assert np.all(np.abs(scores[row, odd] - kth) <= tie), (row, odd, scores[row, odd], kth)


def overlaps(near_a: np.ndarray, near_b: np.ndarray) -> np.ndarray:
    return np.array([len(set(a) & set(b)) for a, b in zip(near_a.tolist(), near_b.tolist(), strict=True)])


def small_table(tmp_path: Path, name: str, rows: np.ndarray, tokens: list[str] | None = None) -> Path:
    return write_gguf(tmp_path / f"{name}.gguf", rows.astype(np.float32), Q.F32, tokens=tokens)


@pytest.fixture
def pair(tmp_path: Path):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    rows_a = rng.standard_normal((400, 24)).astype(np.float32)
    rows_b = (rows_a + 0.4 * rng.standard_normal(rows_a.shape)).astype(np.float32)
    return rows_a, rows_b, small_table(tmp_path, "a", rows_a), small_table(tmp_path, "b", rows_b)


def test_nearest_of_all_equals_numpy_on_random_tables() -> None:
    rng = np.random.default_rng(3)
    for count, width, k in ((300, 16, 1), (300, 16, 10), (9000, 40, 10), (6000, 8, 50)):
        rows = rng.standard_normal((count, width)).astype(np.float32)
        queries = np.arange(count)
        targets = (queries + 17) % count
        found = nearest_of_all(rows, queries, k, targets=targets)
        expected, scores = numpy_nearest(rows, queries, k)
        assert_same_neighbours(found.ids, expected, scores, tie=1e-6)
        np.testing.assert_allclose(found.cosines, np.take_along_axis(scores, found.ids, 1), atol=1e-6)
        ranks = 1 + (scores > scores[queries, targets][:, None]).sum(axis=1)
        assert np.mean(found.target_ranks == ranks) > 0.999
        assert np.all(np.abs(found.target_ranks - ranks) <= 1)


def test_every_token_of_a_small_pair_against_numpy(pair) -> None:  # type: ignore[no-untyped-def]
    rows_a, rows_b, path_a, path_b = pair
    a, b = open_table(path_a), open_table(path_b)
    result = compare_tables(a, b, k=10)
    queries = np.arange(400)
    near_a, _ = numpy_nearest(rows_a, queries, 10)
    near_b, scores_b = numpy_nearest(rows_b, queries, 10)
    assert result.match.by == "id" and len(result) == 400
    np.testing.assert_array_equal(result.near_a, near_a)
    np.testing.assert_array_equal(result.near_b, near_b)
    np.testing.assert_array_equal(result.overlap, overlaps(near_a, near_b))
    ranks = 1 + (scores_b > scores_b[queries, near_a[:, 0]][:, None]).sum(axis=1)
    np.testing.assert_array_equal(result.rank_in_b, ranks)
    a64, b64 = rows_a.astype(np.float64), rows_b.astype(np.float64)
    cosines = (a64 * b64).sum(1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64, axis=1)
    np.testing.assert_allclose(result.row_cosine, cosines, atol=1e-12)
    np.testing.assert_allclose(result.relative_error, np.linalg.norm(a64 - b64, axis=1) / np.linalg.norm(a64, axis=1))
    summary = result.summary()
    assert summary["mean_overlap"] == pytest.approx(overlaps(near_a, near_b).mean())
    assert sum(summary["overlap_histogram"]) == 400
    most = summary["most_changed"][0]
    assert most["overlap"] == overlaps(near_a, near_b).min()
    payload = result.to_dict()
    assert payload["matched"] == 400 and len(payload["tokens"]) == 400 and payload["k"] == 10
    assert set(payload["tokens"][0]) == {"id", "token", "row_cosine", "overlap"}


def test_vocabularies_in_another_order_are_matched_by_text(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    tokens = small_vocabulary(300)
    rows_a = rng.standard_normal((300, 12)).astype(np.float32)
    order = rng.permutation(300)
    # B lists the same tokens in another order, each with A's row: nothing changed but the ids.
    a = open_table(small_table(tmp_path, "a", rows_a, tokens))
    b = open_table(small_table(tmp_path, "b", rows_a[order], [tokens[i] for i in order]))
    result = compare_tables(a, b, k=5)
    assert result.match.by == "text" and len(result) == 300
    assert np.all(result.overlap == 5)
    np.testing.assert_allclose(result.row_cosine, 1.0, atol=1e-12)
    np.testing.assert_array_equal(order[result.ids_b], result.ids_a)


def test_the_same_file_twice_keeps_every_neighbour(pair) -> None:  # type: ignore[no-untyped-def]
    _, _, path_a, _ = pair
    result = compare_tables(open_table(path_a), open_table(path_a), k=10)
    assert np.all(result.overlap == 10)
    assert np.all(result.rank_in_b == 1)
    assert {f"{c:.3f}" for c in result.row_cosine.tolist()} == {"1.000"}
    assert any("same file" in note for note in result.notes)


def test_different_widths_compare_neighbours_only(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    rows_a = rng.standard_normal((300, 24)).astype(np.float32)
    rows_b = rng.standard_normal((300, 40)).astype(np.float32)
    a, b = open_table(small_table(tmp_path, "a", rows_a)), open_table(small_table(tmp_path, "b", rows_b))
    result = compare_tables(a, b)
    assert result.row_cosine is None and result.token(0).row_cosine is None
    assert any("different widths" in note for note in result.notes)
    queries = np.arange(300)
    expected = overlaps(numpy_nearest(rows_a, queries, 10)[0], numpy_nearest(rows_b, queries, 10)[0])
    np.testing.assert_array_equal(result.overlap, expected)


def test_few_tokens_in_common_is_one_sentence(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((2000, 8)).astype(np.float32)
    # Only the 96 byte tokens (which a byte-level tokenizer needs) are in both.
    other = small_vocabulary(96) + [f"x{i}" for i in range(2000 - 96)]
    a = open_table(small_table(tmp_path, "a", rows))
    b = open_table(small_table(tmp_path, "b", rows, other))
    with pytest.raises(QueryError, match="tokens in common"):
        compare_tables(a, b)


def test_minilm_against_its_own_q4_0_gguf(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    path = write_minilm_gguf(tmp_path / "minilm-q4_0.gguf", Q.Q4_0)
    quantised = open_table(path)
    assert quantised.storage_note() == "Q4_0, dequantised"
    rows_a = np.asarray(minilm_table.rows, dtype=np.float32)
    # The reference numbers of B: llama.cpp's own Python dequantiser on the file's blocks.
    import gguf

    tensor = next(t for t in gguf.GGUFReader(str(path)).tensors if t.name == "token_embd.weight")
    rows_b = dequantize(tensor.data, tensor.tensor_type).reshape(rows_a.shape)
    words = np.arange(1000, 30522, 97)
    result = compare_tables(minilm_table, quantised, k=10, words=words)
    near_a, scores_a = numpy_nearest(rows_a, words, 10)
    near_b, scores_b = numpy_nearest(rows_b, words, 10)
    assert_same_neighbours(result.near_a, near_a, scores_a, tie=1e-6)
    assert_same_neighbours(result.near_b, near_b, scores_b, tie=1e-6)
    expected = overlaps(near_a, near_b)
    assert np.abs(result.overlap - expected).max() <= 1 and np.mean(result.overlap == expected) > 0.99
    a64, b64 = rows_a[words].astype(np.float64), rows_b[words].astype(np.float64)
    error = np.linalg.norm(a64 - b64, axis=1) / np.linalg.norm(a64, axis=1)
    np.testing.assert_allclose(result.relative_error, error, rtol=1e-9)
    # 4 bits a number moves rows by several per cent and loses some neighbours, never most.
    assert 0.01 < float(np.mean(error)) < 0.3
    assert 5 < float(result.overlap.mean()) < 10


def test_minilm_against_a_gguf_with_llama_cpps_vocabulary(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    # llama.cpp's converter writes MiniLM's "the" as "▁the" and "##ing" as "ing": every token still pairs.
    path = write_minilm_gguf(tmp_path / "minilm-q8_0.gguf", Q.Q8_0, vocabulary="llama.cpp")
    quantised = open_table(path)
    assert quantised.vocabulary.facts.raw_tokens[2000:2002] == ["\u2581to", "\u2581was"]
    words = np.arange(0, 30522, 101)
    result = compare_tables(minilm_table, quantised, k=10, words=words)
    assert result.match.by == "text" and (result.match.only_a, result.match.only_b) == (0, 0)
    # The converter keeps vocab.txt's order, so each token's partner is the row of the same id.
    np.testing.assert_array_equal(result.match.ids_a, np.arange(30522))
    np.testing.assert_array_equal(result.match.ids_b, np.arange(30522))
    import gguf

    tensor = next(t for t in gguf.GGUFReader(str(path)).tensors if t.name == "token_embd.weight")
    rows_b = dequantize(tensor.data, tensor.tensor_type).reshape(30522, 384)
    near_a, scores_a = numpy_nearest(np.asarray(minilm_table.rows, dtype=np.float32), words, 10)
    near_b, scores_b = numpy_nearest(rows_b, words, 10)
    assert_same_neighbours(result.near_a, near_a, scores_a, tie=1e-6)
    assert_same_neighbours(result.near_b, near_b, scores_b, tie=1e-6)
    # Each list marks the neighbours the other has, though "##春" in A is "春" in B.
    for position in range(len(result)):
        change = result.token(position)
        in_b, in_a = set(result.near_b[position].tolist()), set(result.near_a[position].tolist())
        assert change.kept_a == tuple(i in in_b for i in result.near_a[position].tolist())
        assert change.kept_b == tuple(i in in_a for i in result.near_b[position].tolist())
        assert sum(change.kept_a) == sum(change.kept_b) == result.overlap[position]
    done = run_cli("bundled", str(path), "--json", "--words", "^(king|queen|##ing)$")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["matched"] == 30522 and [t["token"] for t in payload["tokens"]] == ["##ing", "king", "queen"]


def test_minilm_pairs_with_llama_cpps_own_bert_vocabulary_file(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    # ggml-vocab-bert-bge.gguf: BERT's vocabulary as an older llama.cpp converter wrote it ("[unused0]" bare).
    from .test_gguf_llama_ids import model_file

    rows = np.asarray(minilm_table.rows[:], dtype=np.float32)
    other = open_table(str(model_file(tmp_path, "ggml-vocab-bert-bge.gguf", rows)))
    assert other.vocabulary.facts.raw_tokens[1] == "[unused0]"
    result = compare_tables(minilm_table, other, k=10, words=np.arange(0, 30522, 211))
    assert (len(result.match), result.match.by, result.match.only_a, result.match.only_b) == (30522, "text", 0, 0)
    np.testing.assert_array_equal(result.match.ids_b, result.match.ids_a)
    assert np.all(result.overlap == 10) and np.all(result.row_cosine > 0.99999)


def test_wordpiece_facts_name_the_continuing_prefix_and_special_tokens(minilm_table, gpt2_table) -> None:  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    from embedexplorer.core.sources.resolve import bundled_model_dir

    tokenizer = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    special = sorted(i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special)
    facts = minilm_table.vocabulary.facts
    assert facts.continuing_prefix == "##" and list(facts.special_ids) == special == [0, 100, 101, 102, 103]
    assert gpt2_table.vocabulary.facts.continuing_prefix == "" and gpt2_table.vocabulary.facts.special_ids == ()


@pytest.mark.slow
def test_gpt2_shaped_tables_against_numpy(tmp_path: Path, gpt2_table) -> None:  # type: ignore[no-untyped-def]
    rows_a = np.asarray(gpt2_table.rows, dtype=np.float32)
    tokens, merges = gpt2_vocabulary()
    path = write_gguf(tmp_path / "gpt2-q8_0.gguf", __import__("gguf").quants.quantize(rows_a, Q.Q8_0), Q.Q8_0,
                      tokens=tokens, merges=merges)
    quantised = open_table(path)
    words = np.arange(0, 50257, 251)
    result = compare_tables(gpt2_table, quantised, k=10, words=words)
    assert result.match.by == "id" and len(result.match) == 50257
    near_a, scores_a = numpy_nearest(rows_a, words, 10)
    rows_b = np.asarray(quantised.rows[:], dtype=np.float32)
    near_b, scores_b = numpy_nearest(rows_b, words, 10)
    assert_same_neighbours(result.near_a, near_a, scores_a, tie=1e-6)
    assert_same_neighbours(result.near_b, near_b, scores_b, tie=1e-6)
    assert np.mean(result.overlap == overlaps(near_a, near_b)) > 0.99


def test_input_table_against_an_untied_output_head(tmp_path: Path) -> None:
    import torch
    from safetensors.numpy import load_file
    from transformers import GPT2Config, GPT2LMHeadModel

    from ..gpt2_fixture import build_gpt2_tokenizer

    torch.manual_seed(0)
    config = GPT2Config(n_embd=16, n_layer=1, n_head=2, n_positions=32, tie_word_embeddings=False)
    folder = tmp_path / "untied"
    GPT2LMHeadModel(config).save_pretrained(folder)
    build_gpt2_tokenizer().save_pretrained(folder)
    weights = load_file(str(folder / "model.safetensors"))
    table = open_table(folder)
    head = output_head_table(table)
    words = np.arange(0, 50257, 1009)
    result = compare_tables(table, head, k=8, words=words)
    near_a, _ = numpy_nearest(weights["transformer.wte.weight"], words, 8)
    near_b, _ = numpy_nearest(weights["lm_head.weight"], words, 8)
    np.testing.assert_array_equal(result.near_a, near_a)
    np.testing.assert_array_equal(result.near_b, near_b)
    head.close()
    assert table.encode(" Paris")  # the input table's tokenizer still answers


def test_a_tied_head_is_one_sentence(minilm_table) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TableNotFoundError, match="no output head of its own"):
        output_head_table(minilm_table)


def test_the_job_reports_progress_stops_and_keeps_table_a(pair) -> None:  # type: ignore[no-untyped-def]
    _, _, path_a, path_b = pair
    session = Session()
    session.replace_table(open_table(path_a))
    seen: list[tuple[int, int, str]] = []
    ctx = JobContext(session, report=lambda done, total, message: seen.append((done, total, message)))
    answer = compare(ctx, CompareRequest(str(path_b), k=10))
    assert len(answer) == 400 and seen[-1][0] == seen[-1][1] > 0
    stopping = JobContext(session, stopped=lambda: len(seen) > 2, report=lambda d, t, m: seen.append((d, t, m)))
    seen.clear()
    with pytest.raises(Interrupted):
        compare(stopping, CompareRequest(str(path_b), k=10))
    with pytest.raises(Exception, match=r"Could not open table B .*missing"):
        compare(JobContext(session), CompareRequest(str(path_a) + ".missing", k=10))
    assert session.table.rows.shape == (400, 24)


def test_the_progress_and_notes_say_how_many_cores_the_search_used(pair) -> None:  # type: ignore[no-untyped-def]
    """The window's long lane holds BLAS to every core but one: the compare then says it ran on that many;
    left alone it says the same count in its progress and its notes."""
    from embedexplorer.core.common.blas import cores_but_one, limit_blas

    _, _, path_a, path_b = pair
    session = Session()
    session.replace_table(open_table(path_a))
    cores = os.cpu_count()
    for limit in (cores_but_one(), None):
        seen: list[str] = []
        ctx = JobContext(session, report=lambda done, total, message, seen=seen: seen.append(message))
        with limit_blas(limit) if limit is not None else contextlib.nullcontext():
            answer = compare(ctx, CompareRequest(str(path_b), k=10))
        searching = [m for m in seen if m.startswith("Nearest tokens in")]
        said = re.search(r"on (\d+) of (\d+) cores$", searching[0])
        assert said is not None and int(said[2]) == cores and 1 <= int(said[1]) <= cores, searching
        if limit is not None:
            assert int(said[1]) == limit
        assert all(m.endswith(said[0]) for m in searching), searching
        assert any(said[0] in note for note in answer.notes), answer.notes


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "embedexplorer", "compare", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_cli_json_and_text(pair) -> None:  # type: ignore[no-untyped-def]
    rows_a, rows_b, path_a, path_b = pair
    done = run_cli(str(path_a), str(path_b), "-k", "5", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["k"] == 5 and payload["matched"] == 400 and len(payload["tokens"]) == 400
    queries = np.arange(400)
    expected = overlaps(numpy_nearest(rows_a, queries, 5)[0], numpy_nearest(rows_b, queries, 5)[0])
    assert [t["overlap"] for t in payload["tokens"]] == expected.tolist()
    text = run_cli(str(path_a), str(path_b), "--words", "^w1[0-9]$")
    assert text.returncode == 0 and "compared 10 tokens" in text.stdout and "most changed:" in text.stdout


def test_cli_bad_input_is_one_line(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, _, path_a, _ = pair
    for args in ((str(path_a), str(tmp_path / "nothing")), (str(path_a),), (str(path_a), str(path_a), "-k", "400")):
        done = run_cli(*args)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
