"""The map's exports mark the selected token alike through both doors: the window's and ``map --select``.

A teacher types a word in the Text box and exports the map as a web page; a script asks
``embedexplorer map --select WORD --html`` of the same model. Both pages must star the same
token at the same place and ring the same nearest rows, named alike: the window's page is
written by File > Export map as web page after the word is typed into the real Text box, the
command line's by the real command in its own process; their embedded data are compared.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from embedexplorer.jobs.map_jobs import WORD_MAP
from embedexplorer.jobs.table_jobs import MAP
from embedexplorer.ui.style import theme
from tests.core.test_front_doors import same  # the two doors' answers, compared entry by entry
from tests.core.test_sources import run_cli

from .conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model, settle, type_text

CLOSE = 1e-9


def page_selection(page: Path) -> Any:
    """The star and rings a page's script draws: its embedded data's ``selected``."""
    text = page.read_text(encoding="utf-8")
    found = re.search(r'id="map-data">(.*?)</script>', text, re.S)
    assert found is not None
    return json.loads(found.group(1))["selected"]


@pytest.mark.parametrize(
    ("typed", "mode", "token"),
    [
        ("Paris", "average", "Paris"),  # alone, GPT-2 reads the token that starts a text
        (" Paris", "average", "_Paris"),  # with its space, the word inside a sentence
        (" Parisian", "skip", "_Paris"),  # two tokens: the first chip is selected; the map skips such words
    ],
)
def test_the_windows_page_and_the_command_lines_mark_the_same_star_and_rings(  # type: ignore[no-untyped-def]
    qtbot, window, tmp_path, gpt2_folder, typed: str, mode: str, token: str
) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    window.right.setCurrentWidget(window.panes.map)
    pane = window.panes.map
    canvas = pane.view.canvas
    if mode != "average":  # Map > Words of several tokens > Leave them off the map
        with qtbot.waitSignal(answers(window, MAP).ready, timeout=ANSWER_TIMEOUT_MS):
            pane.multi_token_actions[mode].trigger()
    type_text(qtbot, window, typed)
    qtbot.waitUntil(lambda: canvas.selection[0] == token and bool(canvas.ring_names), timeout=ANSWER_TIMEOUT_MS)
    settle()
    from_window = tmp_path / "window.html"
    assert pane.exports.export_page_to(str(from_window))

    from_cli = tmp_path / "cli.html"
    result = run_cli(
        "map", "--model", str(gpt2_folder), "--select", typed, "--multi-token", mode, "--html", str(from_cli), "--json"
    )
    assert result.returncode == 0, result.stderr
    marked, cli_marked = page_selection(from_window), page_selection(from_cli)
    assert marked is not None and marked["token"] == token and len(marked["rings"]) == window.state.k == 8
    same(marked, cli_marked)
    # The JSON says the same: the token's id, its star's place, each ring's token and place.
    chosen = json.loads(result.stdout)["selected"]
    assert chosen["id"] == window.state.selection.token_id and chosen["token"] == token
    assert chosen["star"] == pytest.approx(marked["at"][:2], abs=CLOSE)
    assert [r["token"] for r in chosen["rings"]] == marked["names"]
    same([r[:2] for r in marked["rings"]], [[r["x"], r["y"]] for r in chosen["rings"]])


def test_the_command_lines_svg_and_png_carry_the_star_and_ring_names(tmp_path, gpt2_folder) -> None:  # type: ignore[no-untyped-def]
    svg, png, plain = tmp_path / "paris.svg", tmp_path / "paris.png", tmp_path / "plain.png"
    result = run_cli(
        "map", "--model", str(gpt2_folder), "--select", " Paris", "-k", "5", "--svg", str(svg), "--png", str(png),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    rings = [r["token"] for r in json.loads(result.stdout)["selected"]["rings"]]
    assert len(rings) == 5
    drawing = svg.read_text(encoding="utf-8")
    accent = theme.accent().name()
    # The star: a five-pointed polygon in the accent, with the token's name beside it in the accent too.
    assert re.search(rf'<polygon points="[^"]+" fill="{accent}"', drawing)
    named = re.findall(rf'fill="{accent}"[^>]*>([^<]*)</text>', drawing)
    assert "_Paris" in named
    # A ring (an accent outline, the key's smaller one aside) about each nearest row, and each row's name
    # among the labels.
    assert len(re.findall(rf'<circle [^>]*r="7.5" fill="none" stroke="{accent}"', drawing)) == 5
    texts = re.findall(r">([^<]*)</text>", drawing)
    assert all(name in texts for name in rings), (rings, texts)
    # The PNG: drawn in the accent where the same map without --select has none of it.
    assert run_cli("map", "--model", str(gpt2_folder), "--png", str(plain)).returncode == 0
    assert accent_share(png) > 0 and accent_share(plain) == 0


def accent_share(path: Path) -> int:
    from PySide6.QtGui import QImage

    from .test_map_page_selection import near

    image = QImage(str(path))
    accent = theme.accent().name()
    return sum(
        near(image.pixelColor(x, y).name(), accent, 24)
        for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)
    )


TSNE_WORDS = r"^(mon|tues|wednes|thurs|fri|satur|sun)day$|^[a-c][a-z]{5}s$"


def test_a_token_off_a_tsne_map_is_said_in_one_sentence_by_both_doors(qtbot, window, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """t-SNE places only its own rows: a word not among them gets no star in the window, and the window
    says why in the status bar; the command line refuses with the same sentence and writes nothing."""
    monkeypatch.setenv("EMBEDEXPLORER_CACHE_DIR", str(tmp_path))
    open_model(qtbot, window, "bundled")
    pane = window.panes.map
    with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=LOAD_TIMEOUT_MS):
        pane.view.request_word_map("regex", TSNE_WORDS, method="tsne")
    type_text(qtbot, window, "monday")  # on the map: starred
    qtbot.waitUntil(lambda: pane.view.canvas.selection[1] is not None, timeout=ANSWER_TIMEOUT_MS)
    type_text(qtbot, window, "paris")  # not on it
    qtbot.waitUntil(lambda: "paris" in window.statusBar().currentMessage(), timeout=ANSWER_TIMEOUT_MS)
    said = window.statusBar().currentMessage()
    assert pane.view.canvas.selection[1] is None
    assert said == (
        "paris (id 3,000) is not on this t-SNE map, which places only the rows it was made from: "
        "select one of them, or draw a PCA map, to see its star."
    )

    page = tmp_path / "paris.html"
    result = run_cli(
        "map", "--model", "bundled", "--words", TSNE_WORDS, "--projection", "tsne", "--select", "paris",
        "--html", str(page), env={"EMBEDEXPLORER_CACHE_DIR": str(tmp_path)},
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == f"embedexplorer: {said}"
    assert not page.exists()
