"""Map > Projection > t-SNE on the family map: the family words (not the vocabulary), in both doors alike."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from embedexplorer.core.maps.family_map import FamilyMap
from embedexplorer.core.maps.word_maps import WordMap
from embedexplorer.jobs.map_jobs import WORD_MAP
from embedexplorer.jobs.table_jobs import MAP
from tests.core.test_sources import run_cli
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model

# A reader's own families: 14 words, so t-SNE's perplexity 30 (which wants more than 90 rows) is lowered.
OWN_FAMILIES = {
    "fruit": ["apple", "banana", "cherry", "grape", "lemon"],
    "tools": ["hammer", "saw", "drill", "wrench", "knife"],
    "metals": ["iron", "copper", "gold", "silver"],
}


def projection_action(window, method: str):  # type: ignore[no-untyped-def]
    """Map > Projection > ``method``, as the menu holds it."""
    projection = next(a.menu() for a in window.menu("&Map").actions() if a.text() == "&Projection")
    return next(a for a in projection.actions() if a.text().replace("&", "").lower().startswith(method))


def tsne_from_the_menu(qtbot, window) -> WordMap:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=LOAD_TIMEOUT_MS) as drawn:
        projection_action(window, "t-sne").trigger()
        # While it is computed, the status bar says which words, and the map can be stopped.
        assert window.statusBar().currentMessage().startswith("Computing the t-SNE map of the ")
        assert "family words" in window.statusBar().currentMessage()
        assert window.panes.map.view.stop_button.isVisibleTo(window.panes.map)
    return drawn.args[0]


def command_line_points(tmp_path: Path, *extra: str) -> tuple[dict, list[list[object]]]:  # type: ignore[type-arg]
    """``map --projection tsne`` without ``--words``, computed afresh (a cache of its own): its JSON and CSV rows."""
    target = tmp_path / "points.csv"
    result = run_cli(
        "map", "--projection", "tsne", "--model", "bundled", "--csv", str(target), "--json", *extra,
        env={"EMBEDEXPLORER_CACHE_DIR": str(tmp_path / "cli-cache")},
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in target.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    rows = list(csv.reader(lines, quoting=csv.QUOTE_NONNUMERIC))
    assert rows[0] == ["token", "id", "family", "x", "y"]
    return json.loads(result.stdout), rows[1:]


def window_points(drawn: WordMap) -> list[list[object]]:
    """The window's map as the CSV writes it: token, id (or ids joined by spaces), family, x, y."""
    return [
        [label, float(ids[0]) if len(ids) == 1 else " ".join(map(str, ids)), drawn.families[f], x, y]
        for label, ids, f, (x, y) in zip(drawn.labels, drawn.pieces, drawn.family_of.tolist(), drawn.coords.tolist(),
                                         strict=True)
    ]


def assert_the_family_words(drawn: WordMap, family_map: FamilyMap) -> None:
    """Exactly the family map's points, each in its family, and no row of the vocabulary besides."""
    assert drawn.method == "tsne" and len(drawn) == len(family_map.points)
    assert sorted(drawn.pieces) == sorted(p.ids for p in family_map.points)
    assert drawn.families == tuple(family_map.families)
    assert drawn.family_counts() == dict(Counter(p.family for p in family_map.points))


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache of these tests' own: the finished t-SNE maps they write would answer later tests' requests at once
    (a test that stops a family map's t-SNE under way would find it done)."""
    monkeypatch.setenv("EMBEDEXPLORER_CACHE_DIR", str(tmp_path / "window-cache"))


def test_tsne_of_the_family_map_maps_its_words_in_the_window_and_the_command_line_alike(
    qtbot, window, tmp_path
) -> None:
    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    family_map = view.family_map
    assert isinstance(family_map, FamilyMap) and len(family_map.points) == 63
    drawn = tsne_from_the_menu(qtbot, window)
    assert_the_family_words(drawn, family_map)
    assert view.canvas.map is drawn and window.panes.map.projection_actions["tsne"].isChecked()
    # 63 rows cannot give perplexity 30 (openTSNE wants 3 x 30 neighbours a row): lowered, and the caption says so.
    assert "perplexity 20.7" in drawn.layout.keeps and "63 rows" in drawn.layout.keeps
    assert "perplexity 20.7" in view.canvas.caption_html  # whole: a short canvas shows its first line
    assert drawn.provenance is not None and drawn.provenance.projection_settings["perplexity"] == 62 / 3

    # The command line asked the same question: the same points, to the last digit, for the same seed.
    out, rows = command_line_points(tmp_path)
    assert not out["from_cache"] and out["projection"] == "tsne" and len(out["points"]) == 63
    assert rows == window_points(drawn)

    # PCA brings the family map back.
    with qtbot.waitSignal(answers(window, MAP).ready, timeout=ANSWER_TIMEOUT_MS):
        projection_action(window, "pca").trigger()
    assert isinstance(view.family_map, FamilyMap) and len(view.family_map.points) == 63
    assert view.canvas.map.method == "pca" and len(view.canvas.map) == 63
    assert window.panes.map.projection_actions["pca"].isChecked() and not view.big_map


def test_tsne_of_a_readers_own_families_maps_their_words_in_both_doors(qtbot, window, tmp_path) -> None:
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"families": OWN_FAMILIES}), encoding="utf-8")
    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    with qtbot.waitSignal(answers(window, MAP).ready, timeout=ANSWER_TIMEOUT_MS):
        view.use_families(str(own))
    family_map = view.family_map
    assert isinstance(family_map, FamilyMap) and len(family_map.points) == 14
    drawn = tsne_from_the_menu(qtbot, window)
    assert_the_family_words(drawn, family_map)
    assert "perplexity 4.3" in view.canvas.caption_html  # whole: a short canvas shows its first line
    out, rows = command_line_points(tmp_path, "--families", str(own))
    assert not out["from_cache"] and rows == window_points(drawn)
