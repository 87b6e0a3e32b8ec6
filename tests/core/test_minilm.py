"""The bundled all-MiniLM-L6-v2 table: a real learned table, opened offline."""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA

from embedexplorer.core.maps.family_map import family_map, load_families

WEEKDAYS = {"tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}


def test_opens_offline_with_real_shape(minilm_table) -> None:
    facts = minilm_table.facts()
    assert (facts.rows, facts.width) == (30_522, 384)
    assert facts.position_rows == 512
    assert 0 < facts.share < 1
    assert "bundled" in minilm_table.name


def test_monday_neighbours_are_the_other_weekdays(minilm_table) -> None:
    first_eight = {n.token for n in minilm_table.neighbours("monday", k=8).neighbours}
    assert WEEKDAYS <= first_eight


def test_wordpiece_pieces_keep_their_hashes(minilm_table) -> None:
    tokens = minilm_table.encode("embeddings")
    assert len(tokens) > 1
    assert all(t.token.startswith("##") for t in tokens[1:])


def test_unknown_word_is_reported(minilm_table) -> None:
    query = minilm_table.query("😀")
    assert query.token == "[UNK]"
    assert "no token" in query.note


def test_map_has_eight_families_and_sklearn_variance(minilm_table) -> None:
    result = family_map(minilm_table, load_families())
    assert len(result.families) == 8
    assert len(result.points) == 63
    rows = np.vstack([np.asarray(minilm_table.rows[list(p.ids)]).mean(axis=0) for p in result.points])
    expected = PCA(n_components=2, svd_solver="full").fit(rows).explained_variance_ratio_.sum()
    assert abs(result.explained_variance - expected) < 1e-5
    # Same-family words are nearer each other than words of different families.
    assert result.within_family_cosine > result.between_family_cosine


def test_baseline_is_small_for_unrelated_tokens(minilm_table) -> None:
    assert -0.2 < minilm_table.baseline_cosine < 0.2
    # The days are far above the baseline: "near" is judged against it.
    assert minilm_table.cosine("monday", "tuesday") > minilm_table.baseline_cosine + 0.3


def test_repeated_queries_are_remembered_and_the_memory_is_bounded(minilm_table, monkeypatch) -> None:
    from embedexplorer.core.tables import embedding_table as tables
    monkeypatch.setattr(tables, "QUERY_MEMORY", 3)
    minilm_table._queries.clear()
    first = minilm_table.query("monday")
    assert minilm_table.query("monday") is first  # the tokenizer is not asked twice
    for word in ("tuesday", "paris", "banana", "king"):
        minilm_table.query(word)
    assert len(minilm_table._queries) == 3
    assert "monday" not in minilm_table._queries  # the oldest word went first
    again = minilm_table.query("monday")
    assert again == first and again is not first
    minilm_table._queries.clear()


def test_neighbours_of_an_unnormalised_vector_report_true_cosines(minilm_table) -> None:
    row = minilm_table.row(minilm_table.query("monday").id)
    scaled = minilm_table.neighbours_of_vector(row * 37.5, k=5)
    direct = minilm_table.neighbours("monday", k=5)
    # The query itself comes first at cosine 1, then the same neighbours with the same cosines.
    assert scaled.neighbours[0].token == "monday"
    assert abs(scaled.neighbours[0].cosine - 1.0) < 1e-5
    assert [n.token for n in scaled.neighbours[1:]] == [n.token for n in direct.neighbours[:4]]
    assert np.allclose([n.cosine for n in scaled.neighbours[1:]], [n.cosine for n in direct.neighbours[:4]], atol=1e-5)
