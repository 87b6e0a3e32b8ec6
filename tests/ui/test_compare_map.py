"""The map coloured by change: MiniLM against its own Q4_0 GGUF, every point's colour checked against plain numpy."""

from __future__ import annotations

import re
from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from embedexplorer.jobs.compare_jobs import COMPARE, CompareRequest
from embedexplorer.ui.map.change_colours import NOT_COMPARED, change_colour
from embedexplorer.ui.style import theme

from ..minilm_gguf import write_minilm_gguf
from .conftest import answers, open_model, settle
from .test_compare_pane import COMPARE_TIMEOUT_MS, open_compare

K = 10
TIE = 1e-5  # float32 scores this close to the k-th may swap places with it: such tokens are not checked


@pytest.fixture(scope="module")
def quantised(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return write_minilm_gguf(tmp_path_factory.mktemp("q4") / "minilm-q4_0.gguf", Q.Q4_0)


def unit_rows(rows: np.ndarray) -> np.ndarray:
    rows = rows.astype(np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def numpy_overlaps(rows_a: np.ndarray, rows_b: np.ndarray, ids: list[int]) -> dict[int, float | None]:
    """Each token's k nearest by cosine over every row (itself left out) in A and in B, float64; how many are
    shared. None where the k-th and the next are too close to tell in either table."""
    unit_a, unit_b = unit_rows(rows_a), unit_rows(rows_b)
    found: dict[int, float | None] = {}
    for token in ids:
        near = []
        clear = True
        for unit in (unit_a, unit_b):
            scores = unit @ unit[token]
            scores[token] = -np.inf
            order = np.argsort(-scores, kind="stable")
            near.append(set(order[:K].tolist()))
            clear &= bool(scores[order[K - 1]] - scores[order[K]] > TIE)
        found[token] = float(len(near[0] & near[1])) if clear else None
    return found


def point_brushes(canvas) -> dict[int, object]:  # type: ignore[no-untyped-def]
    """Each drawn point's own brush (None when it has none and its item's brush is used)."""
    brushes = {}
    for item in list(canvas._family_items.values()) + [canvas._rest_item]:
        if item is not None:
            for point, brush in zip(item.data["data"].tolist(), item.data["brush"].tolist(), strict=True):
                brushes[int(point)] = brush
    return brushes


def compare_all_but_one_word(qtbot, window, quantised):  # type: ignore[no-untyped-def]
    """The bundled map compared with ``quantised`` on the tokens of every word but one, a one-token family
    word (its point must stay grey and the caption say why): (the map, that word's index, the tokens)."""
    open_model(qtbot, window, "bundled")
    shown = window.panes.map.view.canvas.map
    assert shown is not None
    left_out = next(i for i, p in enumerate(shown.pieces) if len(p) == 1 and shown.family_of[i] >= 0)
    words = sorted({t for i, p in enumerate(shown.pieces) if i != left_out for t in p} - set(shown.pieces[left_out]))
    open_compare(window)
    assert not window.panes.compare.pane.colour_map.isEnabled()  # nothing compared yet
    with qtbot.waitSignal(answers(window, COMPARE).ready, timeout=COMPARE_TIMEOUT_MS):
        window.client.ask(COMPARE, CompareRequest(str(quantised), K, words=tuple(words)), window.panes.compare)
    return shown, left_out, words


def test_the_map_coloured_by_neighbours_kept_matches_numpy_and_turns_off(  # type: ignore[no-untyped-def]
    qtbot, window, minilm_table, quantised, tmp_path
) -> None:
    shown, left_out, words = compare_all_but_one_word(qtbot, window, quantised)
    canvas, pane = window.panes.map.view.canvas, window.panes.compare.pane
    assert pane.colour_map.isEnabled() and not pane.colour_map.isChecked()
    qtbot.mouseClick(pane.colour_map, Qt.MouseButton.LeftButton)
    settle()
    change = window.state.map_change
    assert change is not None and change.measure == "overlap" and change.k == K

    # The oracle: MiniLM's rows, and B's as llama.cpp's Python dequantiser reads the file.
    rows_a = np.asarray(minilm_table.rows, dtype=np.float32)
    tensor = next(t for t in gguf.GGUFReader(str(quantised)).tensors if t.name == "token_embd.weight")
    rows_b = dequantize(tensor.data, tensor.tensor_type).reshape(rows_a.shape)
    expected = numpy_overlaps(rows_a, rows_b, words)
    brushes = point_brushes(canvas)
    checked = 0
    for point, pieces in enumerate(shown.pieces):
        if point == left_out:
            continue
        values = [expected[t] for t in pieces]
        if any(v is None for v in values):
            continue
        mean = sum(v for v in values if v is not None) / len(values)
        assert brushes[point].color() == change_colour(mean / K), shown.labels[point]  # type: ignore[attr-defined]
        checked += 1
    assert checked > 0.8 * (len(shown) - 1)
    colours = {brushes[p].color().name() for p in range(len(shown)) if p != left_out}  # type: ignore[attr-defined]
    assert len(colours) > 2  # 4 bits a number loses some neighbours: not one colour for all
    assert brushes[left_out].color() == NOT_COMPARED  # type: ignore[attr-defined]
    caption = canvas.caption_html
    assert "neighbours kept of k = 10" in caption and "grey: not compared" in caption
    assert "minilm-q4_0.gguf" in caption and window.state.model_name in caption

    # The pictures show the same colours, the caption line and the scale's legend.
    picture = tmp_path / "map.svg"
    assert window.panes.map.exports.export_to(str(picture))
    drawing = picture.read_text(encoding="utf-8")
    fills = re.findall(r'<circle [^>]*fill="(#[0-9a-f]{6})" fill-opacity="1"', drawing)
    assert sorted(fills) == sorted(brush.color().name() for brush in brushes.values())  # type: ignore[attr-defined]
    assert "neighbours kept of k = 10" in drawing and "most changed" in drawing and "not in B" in drawing
    png = tmp_path / "map.png"
    assert window.panes.map.exports.export_to(str(png))
    image = QImage(str(png)).convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), dtype=np.uint32).reshape(image.height(), -1)[:, : image.width()]
    legend_shares = (0.0, 0.5, 1.0)  # the legend draws these: a point's own colour must be another
    own = next(
        brushes[p].color()  # type: ignore[attr-defined]
        for p, pieces in enumerate(shown.pieces)
        if p != left_out and all(expected[t] is not None for t in pieces)
        and all(brushes[p].color() != change_colour(s) for s in legend_shares)  # type: ignore[attr-defined]
    )
    assert np.count_nonzero(pixels == np.uint32(own.rgb() & 0xFFFFFFFF)) > 20

    # The row cosine instead: one of the compared points, against numpy in float64.
    pane.measure.setCurrentIndex(1)
    settle()
    change = window.state.map_change
    assert change is not None and change.measure == "row cosine"
    unit_a, unit_b = unit_rows(rows_a[words]), unit_rows(rows_b[words])
    cosines = np.einsum("ij,ij->i", unit_a, unit_b)
    low = min(float(cosines.min()), 0.999)
    point = next(i for i, p in enumerate(shown.pieces) if len(p) == 1 and i != left_out)
    cosine = float(cosines[words.index(shown.pieces[point][0])])
    brushes = point_brushes(canvas)
    assert brushes[point].color() == change_colour((cosine - low) / (1 - low))  # type: ignore[attr-defined]
    assert "cosine of a token's two rows" in canvas.caption_html

    # Off: the family colours again, one brush an item, and the caption without the line.
    qtbot.mouseClick(pane.colour_map, Qt.MouseButton.LeftButton)
    settle()
    assert window.state.map_change is None
    assert all(brush is None for brush in point_brushes(canvas).values())
    for index, family in enumerate(shown.families):
        assert canvas._family_items[family].opts["brush"].color() == theme.family_colour(index)
    assert "Colour:" not in canvas.caption_html


def test_the_web_page_of_a_map_coloured_by_change_shows_the_windows_colours(  # type: ignore[no-untyped-def]
    qtbot, window, quantised, tmp_path
) -> None:
    from tests.browser import Chromium
    from tests.core.test_map_page_browser import pixel, tip

    shown, left_out, _ = compare_all_but_one_word(qtbot, window, quantised)
    canvas, pane = window.panes.map.view.canvas, window.panes.compare.pane
    qtbot.mouseClick(pane.colour_map, Qt.MouseButton.LeftButton)
    settle()
    change = window.state.map_change
    assert change is not None
    brushes = point_brushes(canvas)
    page = tmp_path / "coloured.html"
    assert window.panes.map.exports.export_page_to(str(page))

    with Chromium(width=1280, height=800) as browser:
        browser.open(page)
        assert browser.requests() == [page.resolve().as_uri()]  # still nothing but the file itself
        assert browser.evaluate("window.mapPage.drawn()") == len(shown)
        shot = tmp_path / "coloured.png"
        browser.screenshot(shot)
        places = [browser.evaluate(f"window.mapPage.screenOf({i})") for i in range(len(shown))]
        xy = np.array([[p["x"], p["y"]] for p in places])
        gaps = np.linalg.norm(xy[:, None] - xy[None], axis=2) + np.eye(len(shown)) * 1e9
        # The window's restored text is selected: its star and rings are drawn over dots too.
        marks = browser.evaluate("window.mapPage.marks()")
        over = np.array([[m["x"], m["y"]] for m in ([marks["star"]] if marks["star"] else []) + marks["rings"]])
        if len(over):
            gaps = np.hstack([gaps, np.linalg.norm(xy[:, None] - over[None], axis=2)])
        alone = [i for i in range(len(shown)) if gaps[i].min() > 14]  # no other dot or its outline, no mark over it
        assert len(alone) > 20
        for i in alone:
            expected = brushes[i].color().name().upper()  # type: ignore[attr-defined]
            assert pixel(shot, *xy[i]) == expected, shown.labels[i]
        assert len({brushes[i].color().name() for i in alone}) > 2  # type: ignore[attr-defined]
        # What the colours mean: the caption's line and the scale beside the map.
        caption = browser.evaluate("document.getElementById('caption').innerText")
        assert change.sentence() in caption and "neighbours kept of k = 10" in caption
        legend = browser.evaluate(
            "(() => { const f = document.getElementById('change'); return {hidden: f.hidden, rows: Array.from("
            "f.querySelectorAll('.scale')).map(r => [getComputedStyle(r.firstChild).backgroundColor,"
            " r.innerText])}; })()"
        )
        assert not legend["hidden"]
        assert [text for _, text in legend["rows"]] == [
            "0 of 10 neighbours kept", "5", "10 of 10 (unchanged)", "not compared (not in B)"
        ]
        for (colour, _), share in zip(legend["rows"], (0.0, 0.5, 1.0, None), strict=True):
            expected = change_colour(share)
            assert colour == f"rgb({expected.red()}, {expected.green()}, {expected.blue()})"
        # A dot's tip says its value, as the comparison has it; the one left out says it was not compared.
        for i in (alone[0], left_out):
            browser.mouse("mouseMoved", *places[i].values())
            value = change.value_of(tuple(shown.pieces[i]))
            said = "not compared" if value is None else f"neighbours kept: {value:g} of {K}"
            assert tip(browser)["token"] == shown.labels[i]
            assert browser.evaluate("document.querySelector('#tip .tip-change').textContent") == said
        assert change.value_of(tuple(shown.pieces[left_out])) is None

    # Unticked: the page has the family colours again and no scale.
    qtbot.mouseClick(pane.colour_map, Qt.MouseButton.LeftButton)
    settle()
    plain = tmp_path / "plain.html"
    assert window.panes.map.exports.export_page_to(str(plain))
    with Chromium(width=1280, height=800) as browser:
        browser.open(plain)
        assert browser.evaluate("document.getElementById('change').hidden") is True
        assert "Colour:" not in browser.evaluate("document.getElementById('caption').innerText")
        shot = tmp_path / "plain.png"
        browser.screenshot(shot)
        i = alone[0]  # the caption is a line shorter: the point is drawn elsewhere
        place = browser.evaluate(f"window.mapPage.screenOf({i})")
        assert pixel(shot, place["x"], place["y"]) == theme.family_colour(int(shown.family_of[i])).name().upper()
