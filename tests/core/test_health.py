"""Vocabulary health against references nobody on the team wrote.

* MiniLM's 994 [unusedN] tokens never occur in any training text (BERT's vocabulary
  reserved them): the ranking, which never reads a token's spelling, must put them on top.
* scikit-learn's PCA is the oracle for the first principal component.
* A float64 brute force over every pair of rows is the oracle for duplicates.
* transformers' own Python GPT-2 tokenizer (not the Rust one the app runs) is the oracle
  for which GPT-2 tokens come back from a round trip.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from embedexplorer.core.health.duplicates import NEAR_COSINE, find_duplicates
from embedexplorer.core.health.row_pass import first_component, read_rows
from embedexplorer.core.health.scoring import BROKEN
from embedexplorer.core.health.vocabulary_health import vocabulary_health
from embedexplorer.core.sources.resolve import bundled_model_dir
from embedexplorer.core.tables.embedding_table import EmbeddingTable


@pytest.fixture(scope="module")
def minilm_health(minilm_table):  # type: ignore[no-untyped-def]
    return vocabulary_health(minilm_table)


def _unused_ids(table) -> set[int]:  # type: ignore[no-untyped-def]
    return {i for i, t in enumerate(table.vocabulary.facts.raw_tokens) if t.startswith("[unused")}


def test_minilm_unused_tokens_dominate_the_top(minilm_table, minilm_health) -> None:  # type: ignore[no-untyped-def]
    unused = _unused_ids(minilm_table)
    assert len(unused) == 994
    top = {int(i) for i in minilm_health.top(1500)}
    found = len(unused & top)
    # Measured 985 of 994 (docs/health.md); by chance alone 1,500 of 30,522 would hold about 49.
    assert found >= 950, found
    assert int(minilm_health.flagged[sorted(unused)].sum()) >= 950  # measured 993 over the threshold
    # Every one of them is unreachable by the tokenizer's own round trip, and none is called special.
    assert minilm_health.flags["unreachable"][list(unused)].all()
    assert not minilm_health.flags["special"][list(unused)].any()


def test_minilm_special_tokens_are_named_and_left_out_of_the_reference(minilm_table, minilm_health) -> None:  # type: ignore[no-untyped-def]
    special = set(np.flatnonzero(minilm_health.flags["special"]).tolist())
    assert special == {0, 100, 101, 102, 103}  # [PAD] [UNK] [CLS] [SEP] [MASK], from tokenizer.json's added tokens
    assert minilm_health.reference_count == int(minilm_health.flags["unreachable"].sum()) - len(
        special & set(np.flatnonzero(minilm_health.flags["unreachable"]).tolist())
    )


def test_first_component_is_scikit_learns(minilm_table) -> None:  # type: ignore[no-untyped-def]
    from sklearn.decomposition import PCA

    rows = np.asarray(minilm_table.rows, dtype=np.float32)
    ours = first_component(rows)
    theirs = PCA(n_components=1).fit(rows.astype(np.float64)).components_[0]
    assert abs(float(ours @ theirs)) > 0.9999


def test_duplicates_match_a_float64_brute_force(minilm_table) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    rows = np.array(np.asarray(minilm_table.rows)[:3000], dtype=np.float32)
    rows[10] = rows[20]  # an exact copy
    rows[30] = rows[40] * 1.5  # the same direction, another length
    rows[50] = rows[60] + 1e-3 * rng.standard_normal(rows.shape[1]).astype(np.float32)  # nearly the same
    rows[70] = rows[80] + 0.2 * rng.standard_normal(rows.shape[1]).astype(np.float32)  # close, not a duplicate
    facts = read_rows(rows, lambda done, total: None)
    found = find_duplicates(rows, facts.sketch, facts.length, facts.finite & ~facts.zero, lambda: None)
    unit = rows.astype(np.float64) / np.linalg.norm(rows.astype(np.float64), axis=1, keepdims=True)
    cosines = unit @ unit.T
    np.fill_diagonal(cosines, -1)
    brute_near = (cosines >= NEAR_COSINE).any(axis=1)
    equal = (rows[:, None, :] == rows[None, :, :]).all(axis=2)
    np.fill_diagonal(equal, False)
    assert found.near.tolist() == brute_near.tolist()
    assert found.exact.tolist() == equal.any(axis=1).tolist()
    assert set(np.flatnonzero(found.near).tolist()) >= {10, 20, 30, 40, 50, 60}
    assert not found.near[70] and found.partner[10] == 20


def test_rows_sharing_one_direction_find_their_duplicates_in_bounded_memory() -> None:
    """Rows with a common component (a real table's usual lean, or Q4_K/Q5_K blocks' offsets) fall on
    one side of most sketch planes: the codes' groups fill up and give millions of candidate pairs.
    Comparing all their sketches at once took 1.1 GB for this 12 MB table (4.5 GB for a Qwen-shaped one)."""
    import tracemalloc

    rng = np.random.default_rng(3)
    rows = (rng.standard_normal((50_000, 64)) + rng.standard_normal(64)).astype(np.float32)
    rows[10] = rows[20]
    rows[50] = rows[60] + 1e-3 * rng.standard_normal(64).astype(np.float32)
    facts = read_rows(rows, lambda done, total: None)
    tracemalloc.start()
    try:
        found = find_duplicates(rows, facts.sketch, facts.length, facts.finite & ~facts.zero, lambda: None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * rows.nbytes, f"{peak / 2**20:.0f} MB for a {rows.nbytes / 2**20:.0f} MB table"
    assert found.exact[10] and found.exact[20] and found.partner[10] == 20
    assert found.near[50] and found.partner[60] == 50


def test_gpt2_round_trip_matches_transformers_python_tokenizer(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    from tests.gpt2_fixture import build_gpt2_tokenizer

    report = vocabulary_health(gpt2_table)
    slow = build_gpt2_tokenizer()
    theirs = set()
    for token_id in range(len(slow)):
        text = slow.decode([token_id], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        if slow.encode(text, add_special_tokens=False) != [token_id]:
            theirs.add(token_id)
    ours = set(np.flatnonzero(report.flags["unreachable"]).tolist())
    assert ours == theirs
    assert len(ours) > 0


def test_a_random_table_flags_next_to_nothing(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    report = vocabulary_health(gpt2_table)
    # GPT-2-shaped rows drawn at random: no row is broken or repeated, and a threshold of
    # four robust standard deviations leaves almost every token unflagged.
    counts = report.counts()
    assert counts["non-finite"] == counts["all-zero"] == counts["duplicate"] == counts["near-duplicate"] == 0
    assert int(report.flagged.sum()) < 0.001 * report.size
    # The unreachable tokens of a random table look like any other row: their cosines to
    # their own mean (leave one out) sit where every row's do.
    unreachable = report.flags["unreachable"]
    assert abs(np.nanmedian(report.indicators["cosine_z"][unreachable])) < 1.0


def test_gguf_tokenizer_goes_through_the_same_round_trip(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    import gguf

    from embedexplorer import open_table
    from tests.minilm_gguf import write_minilm_gguf

    path = write_minilm_gguf(tmp_path / "minilm.gguf", gguf.GGMLQuantizationType.F32, vocabulary="llama.cpp")
    table = open_table(str(path))
    try:
        report = vocabulary_health(table)
    finally:
        table.close()
    unused = sorted(_unused_ids(minilm_table))
    assert report.flags["unreachable"][unused].all()
    assert set(np.flatnonzero(report.flags["special"]).tolist()) == {0, 100, 101, 102, 103}
    assert len(set(unused) & {int(i) for i in report.top(1500)}) >= 950


def test_json_lists_the_top_tokens_in_the_issues_shape(minilm_health) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(json.dumps(minilm_health.as_json(5)))
    assert set(data) == {"model", "summary", "tokens"}
    assert data["summary"]["threshold"] == minilm_health.threshold
    assert data["summary"]["reasons"]["unreachable"] == int(minilm_health.flags["unreachable"].sum())
    assert [set(t) for t in data["tokens"]] == [{"id", "token", "score", "reasons", "indicators"}] * 5
    scores = [t["score"] for t in data["tokens"]]
    assert scores == sorted(scores, reverse=True)
    assert len(minilm_health.as_json(10**9)["tokens"]) == minilm_health.size


# ----- bad input: one sentence each, nothing lost ------------------------------------------
def test_a_table_of_nan_rows_is_one_sentence(minilm_table) -> None:  # type: ignore[no-untyped-def]
    rows = np.full((minilm_table.rows.shape[0], 16), np.nan, dtype=np.float32)
    table = EmbeddingTable("nan rows", rows, minilm_table.vocabulary, rows.size, folder=bundled_model_dir())
    report = vocabulary_health(table)
    assert (report.score == BROKEN).all() and report.flags["non-finite"].all()
    assert any("not finite" in note for note in report.notes)
    json.dumps(report.as_json(3), allow_nan=False)  # nothing NaN reaches the JSON


def test_a_vocabulary_of_one_token_is_one_sentence(minilm_table) -> None:  # type: ignore[no-untyped-def]
    rows = np.ones((1, 8), dtype=np.float32)
    table = EmbeddingTable("one token", rows, minilm_table.vocabulary, rows.size)
    report = vocabulary_health(table)
    assert report.size == 1 and report.indicators["length"][0] == pytest.approx(np.sqrt(8))
    assert any("one token" in note for note in report.notes)


def test_a_tokenizer_that_fails_on_a_token_marks_that_token(tmp_path: Path) -> None:
    # A WordLevel tokenizer without an unknown token fails on any word it lacks: the token
    # "c d" is split at the space into two words it does not have.
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    vocab = {"a": 0, "b": 1, "c d": 2, "e": 3}
    tokenizer = Tokenizer(WordLevel(vocab))
    tokenizer.pre_tokenizer = WhitespaceSplit()
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "vocab_size": 4, "hidden_size": 8}))
    rows = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    save_file({"embeddings.word_embeddings.weight": rows}, str(tmp_path / "model.safetensors"))
    from embedexplorer import open_table

    table = open_table(str(tmp_path))
    try:
        report = vocabulary_health(table)
    finally:
        table.close()
    assert report.flags["tokenizer-failed"].tolist() == [False, False, True, False]
    assert not report.flags["unreachable"][2]
    assert any("failed on 1 token" in note for note in report.notes)


def test_exports_carry_provenance_and_neutralise_formulas(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    import csv

    from embedexplorer.core.health.export import write_health

    report = vocabulary_health(minilm_table, provenance=True)
    csv_path, json_path = tmp_path / "health.csv", tmp_path / "health.json"
    write_health(csv_path, report, date="2026-01-01T00:00:00Z")
    write_health(json_path, report, date="2026-01-01T00:00:00Z")
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    facts = [line for line in lines if line.startswith("# ")]
    assert any(line.startswith("# table_sha256: ") and len(line.split(": ")[1]) == 12 for line in facts)
    assert facts[-1] == "# exported: 2026-01-01T00:00:00Z"
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert len(rows) == report.size
    by_id = {int(float(row["id"])): row for row in rows}
    for text in ("=", "+", "-", "@"):  # tokens of BERT's vocabulary a spreadsheet would read as a formula
        token_id = minilm_table.vocabulary.token_id(text)
        assert by_id[token_id]["token"] == "'" + text
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["provenance"]["model"] == minilm_table.name and len(data["tokens"]) == report.size
    assert data["tokens"][0]["id"] == int(rows[0]["id"].split(".")[0])


def test_a_bfloat16_table_takes_the_stored_path_and_agrees(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    import shutil

    import torch
    from safetensors.torch import save_file as save_torch

    from embedexplorer import open_table

    source = bundled_model_dir()
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "config.json"):
        shutil.copy(source / name, tmp_path / name)
    rows = torch.from_numpy(np.array(minilm_table.rows, dtype=np.float32)).to(torch.bfloat16)
    save_torch({"embeddings.word_embeddings.weight": rows}, str(tmp_path / "model.safetensors"))
    table = open_table(str(tmp_path))
    try:
        assert table.stored and table.dtype == "BF16"
        report = vocabulary_health(table)
    finally:
        table.close()
    exact = np.linalg.norm(rows.float().numpy().astype(np.float64), axis=1)  # numpy's float64 lengths
    np.testing.assert_allclose(report.indicators["length"], exact, rtol=1e-9)
    unused = _unused_ids(minilm_table)
    assert len(unused & {int(i) for i in report.top(1500)}) >= 950
