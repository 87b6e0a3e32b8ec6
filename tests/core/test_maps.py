"""Families file, PCA map and family statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.decomposition import PCA

from embedexplorer.core.common.errors import FamiliesError
from embedexplorer.core.maps.family_map import family_cosines, family_map, load_families, pca_2d, save_families


def test_chapter_families_are_single_gpt2_tokens(gpt2_table) -> None:
    families = load_families()
    assert list(families) == ["countries", "cities", "animals", "days", "numbers", "food", "feelings", "jobs"]
    assert sum(len(words) for words in families.values()) == 63
    assert len(families["days"]) == 7
    assert all(len(words) == 8 for name, words in families.items() if name != "days")
    for words in families.values():
        for word in words:
            tokens = gpt2_table.encode(word)
            assert len(tokens) == 1, (word, tokens)
            assert tokens[0].token.startswith("_")


def test_gpt2_map_places_all_63(gpt2_table) -> None:
    result = family_map(gpt2_table, load_families())
    assert len(result.points) == 63 and not result.notes


@pytest.mark.parametrize("shape", [(63, 768), (500, 40), (9_000, 12)])  # the last spans blocks
def test_pca_matches_sklearn(shape: tuple[int, int]) -> None:
    rows = np.random.default_rng(1).normal(size=shape) @ np.diag(np.linspace(3, 0.1, shape[1]))
    ours = pca_2d(rows)
    theirs = PCA(n_components=2, svd_solver="full").fit(rows)
    assert ours.explained_variance == pytest.approx(theirs.explained_variance_ratio_.sum(), abs=1e-9)
    coords = ours.apply(rows)
    expected = theirs.transform(rows)
    for axis in range(2):  # equal up to the sign, which we fix our own way
        assert np.allclose(np.abs(coords[:, axis]), np.abs(expected[:, axis]), atol=1e-8)


def test_pca_signs_are_deterministic() -> None:
    rows = np.random.default_rng(2).normal(size=(30, 10))
    assert np.array_equal(pca_2d(rows).axes, pca_2d(rows.copy()).axes)
    for axis in pca_2d(rows).axes:
        assert axis[np.argmax(np.abs(axis))] > 0


def test_family_cosines_by_hand() -> None:
    rows = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    within, between = family_cosines(rows, ["a", "a", "b", "b"])
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    assert within == pytest.approx((unit[0] @ unit[1] + unit[2] @ unit[3]) / 2)
    assert between == pytest.approx(np.mean([unit[i] @ unit[j] for i in (0, 1) for j in (2, 3)]))


def test_multi_token_words_are_averaged_or_skipped(minilm_table) -> None:
    families = {"made-up": ["monday", "zxqvbnmw"], "real": ["tuesday", "friday"]}
    averaged = family_map(minilm_table, families, "average")
    skipped = family_map(minilm_table, families, "skip")
    assert len(averaged.points) == 4 and len(skipped.points) == 3
    assert any("averaged" in n for n in averaged.notes)
    assert any("skipped" in n for n in skipped.notes)


def test_malformed_families_file_is_reported(tmp_path) -> None:
    bad = tmp_path / "families.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(FamiliesError, match="not valid JSON"):
        load_families(bad)
    bad.write_text(json.dumps({"families": {"x": "not a list"}}), encoding="utf-8")
    with pytest.raises(FamiliesError, match="list"):
        load_families(bad)


def test_save_families_round_trips(tmp_path) -> None:
    target = tmp_path / "mine.json"
    save_families({"days": [" Monday", " Tuesday"]}, target)
    assert load_families(target) == {"days": [" Monday", " Tuesday"]}
    assert [p.name for p in tmp_path.iterdir()] == ["mine.json"]  # no temporary left behind
