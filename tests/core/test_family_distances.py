"""Which family sits furthest away, measured on whole rows: ranking, within-family means, guesses, CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from embedexplorer.core.common.errors import FamiliesError, QueryError
from embedexplorer.core.exercises.family_distances import family_distances, rank_families
from embedexplorer.core.maps.family_map import family_map, load_families
from tests.core.test_cli import run_json
from tests.core.test_sources import run_cli


def loop_means(vectors: dict[str, list[np.ndarray]]) -> dict[str, tuple[float, float]]:
    """Mean cosine to every word of the other families, and within the family, pair by pair."""

    def cos(a: np.ndarray, b: np.ndarray) -> float:
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    result = {}
    for name, own in vectors.items():
        others = [v for other, vs in vectors.items() if other != name for v in vs]
        to_others = np.mean([cos(a, b) for a in own for b in others])
        pairs = [cos(a, b) for a, b in itertools.combinations(own, 2)]
        within = np.mean(pairs) if pairs else float("nan")
        result[name] = (float(to_others), float(within))
    return result


def test_ranking_by_hand() -> None:
    rows = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 1.0, 0.2], [0.1, 1.0, 0.0], [0.0, 0.0, 1.0]])
    labels = ["a", "a", "b", "b", "c"]
    ranking = rank_families(rows, labels)
    expected = loop_means({"a": list(rows[:2]), "b": list(rows[2:4]), "c": [rows[4]]})
    assert [e.family for e in ranking.ranking] == sorted(expected, key=lambda n: expected[n][0])
    for entry in ranking.ranking:
        assert entry.to_others == pytest.approx(expected[entry.family][0])
        if entry.family == "c":
            assert np.isnan(entry.within)  # one word has no pairs
        else:
            assert entry.within == pytest.approx(expected[entry.family][1])
    listed = {row["family"]: row for row in ranking.to_list()}
    assert listed["c"]["mean_cosine_within"] is None and listed["c"]["words"] == 1


def test_minilm_ranking_equals_word_by_word_loops(minilm_table) -> None:
    families = load_families()
    result = family_distances(minilm_table, family_map(minilm_table, families))
    vectors = {
        name: [np.asarray(minilm_table.rows[[t.id for t in minilm_table.encode(w)]], dtype=np.float64).mean(axis=0)
               for w in words]
        for name, words in families.items()
    }  # fmt: skip
    expected = loop_means(vectors)
    order = sorted(expected, key=lambda n: expected[n][0])
    assert [e.family for e in result.ranking] == order
    for entry in result.ranking:
        assert entry.to_others == pytest.approx(expected[entry.family][0], abs=1e-9)
        assert entry.within == pytest.approx(expected[entry.family][1], abs=1e-9)
        assert entry.within > entry.to_others  # every family is tighter inside than to the rest
    assert result.place_of(order[0]) == 1
    assert result.judge(order[0]).startswith(f"Right: {order[0]} sits furthest away")
    assert result.judge(order[-1]).startswith(f"{order[-1]} is #8 of 8")
    with pytest.raises(QueryError, match="no family"):
        result.place_of("planets")


def test_hidden_families_are_left_out(minilm_table) -> None:
    shown = family_map(minilm_table, load_families())
    result = family_distances(minilm_table, shown, hidden={"days", "cities"})
    assert {e.family for e in result.ranking} == set(load_families()) - {"days", "cities"}
    smaller = {k: v for k, v in load_families().items() if k not in {"days", "cities"}}
    direct = family_distances(minilm_table, family_map(minilm_table, smaller))
    assert [e.family for e in result.ranking] == [e.family for e in direct.ranking]
    assert [e.to_others for e in result.ranking] == pytest.approx([e.to_others for e in direct.ranking], abs=1e-12)
    with pytest.raises(FamiliesError, match="hidden"):
        family_distances(minilm_table, shown, hidden=set(load_families()))
    with pytest.raises(FamiliesError, match="two families"):
        family_distances(minilm_table, shown, hidden=set(load_families()) - {"days"})


def test_map_json_includes_the_ranking(minilm_table) -> None:
    out = run_json("map", "--model", "bundled")
    direct = family_distances(minilm_table, family_map(minilm_table, load_families()))
    assert [row["family"] for row in out["family_distances"]] == [e.family for e in direct.ranking]
    assert out["family_distances"][0]["mean_cosine_to_others"] == pytest.approx(direct.furthest.to_others)
    assert set(out["family_distances"][0]) == {"family", "words", "mean_cosine_to_others", "mean_cosine_within"}


def test_one_family_has_a_map_but_no_ranking(tmp_path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"families": {"days": ["monday", "tuesday", "friday"]}}), encoding="utf-8")
    out = run_json("map", "--model", "bundled", "--families", str(path))
    assert len(out["points"]) == 3 and out["family_distances"] is None
    text = run_cli("map", "--model", "bundled", "--families", str(path))
    assert text.returncode == 0 and "no ranking of families" in text.stdout
