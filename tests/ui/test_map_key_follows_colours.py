"""The key beside the map says what the dots' colours mean: the families', or the health scale's.

Map > Colour by health recolours every dot; the Families panel's swatches would then name colours
no dot has. Read from the real window (its scatter items' brushes, the swatches it paints), the
bundled MiniLM's map, coloured by health through the real menu entry and back.
"""

from __future__ import annotations

import html
import re

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon

from embedexplorer.jobs.health_jobs import HEALTH
from embedexplorer.ui.map.change_colours import change_colour
from embedexplorer.ui.style import theme

from .conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle
from .test_compare_map import point_brushes
from .test_health_pane import HEALTH_TIMEOUT_MS, _map_action


def icon_colour(icon: QIcon) -> QColor | None:
    """The colour a swatch icon paints at its middle; None when it paints none (empty or see-through)."""
    if icon.isNull():
        return None
    image = icon.pixmap(12, 12).toImage()
    colour = image.pixelColor(image.width() // 2, image.height() // 2)
    return None if colour.alpha() == 0 else QColor(colour.red(), colour.green(), colour.blue())


def family_swatches(view) -> dict[str, QColor | None]:  # type: ignore[no-untyped-def]
    return {family: icon_colour(button.icon()) for family, button in view.panel.highlight_buttons.items()}


def fills(item) -> list[str]:  # type: ignore[no-untyped-def]
    """Each point's fill as a scatter item draws it: the point's own brush, or the item's one brush."""
    return [(brush if brush is not None else item.opts["brush"]).color().name() for brush in item.data["brush"]]


def dot_colours(canvas) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    """Each family's dots' fill colours as drawn."""
    return {family: set(fills(item)) for family, item in canvas._family_items.items()}


def word_colours(canvas) -> set[str]:  # type: ignore[no-untyped-def]
    """The colours the map's word labels are drawn in."""
    return {colour.name() for colour in canvas.labels.entries()[3]}


def colour_by_health(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Map > Colour by health, as a person chooses it before any check: the check runs, then the map recolours."""
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        _map_action(window, "Colour by health").trigger()
    qtbot.waitUntil(lambda: window.state.map_change is not None, timeout=ANSWER_TIMEOUT_MS)
    settle()


def test_the_key_beside_the_map_shows_the_health_colours_and_then_the_families_again(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    canvas = view.canvas
    window.right.setCurrentWidget(window.panes.map)
    settle()
    # By family: each swatch is the one colour its family's dots have.
    before = family_swatches(view)
    assert before and all(colour is not None for colour in before.values())
    for family, colours in dot_colours(canvas).items():
        assert colours == {before[family].name()}, family  # type: ignore[union-attr]

    colour_by_health(qtbot, window)
    change = window.state.map_change
    assert change is not None and canvas.change is change
    # No family swatch names a colour: the dots' fill is the score now, and a family's dots have many colours.
    assert {family: colour for family, colour in family_swatches(view).items() if colour is not None} == {}
    assert any(len(colours) > 1 for colours in dot_colours(canvas).values())
    # The key says what the colours are: the health scale, its ends, its middle, and a dot with no score.
    key = view.colour_key
    assert key.isVisible() and "health" in key.title().lower()
    texts = [label.text() for label in key.text_labels]
    assert texts == list(change.legend) and re.match(r"score >= \d", texts[0])
    shown = [QColor(label.pixmap().toImage().pixelColor(6, 6)).name() for label in key.swatch_labels]
    assert shown == [change_colour(share).name() for share in (0.0, 0.5, 1.0, None)]
    # ... and those are the colours the dots are drawn with: every dot scoring 0 or less has the
    # key's "score <= 0" colour, every dot at twice the threshold or more its "score >= ..." colour.
    report = window.panes.health_pane.report
    the_map = canvas.map
    brushes = point_brushes(canvas)
    top = 2 * report.threshold
    scores = [float(np.mean([report.score[t] for t in pieces])) for pieces in the_map.pieces]
    low = [p for p, score in enumerate(scores) if score <= 0]
    high = [p for p, score in enumerate(scores) if score >= top]
    assert low, "no dot scores 0 or less on the family map"
    assert {brushes[p].color().name() for p in low} == {shown[2]}
    assert {brushes[p].color().name() for p in high} <= {shown[0]}
    # No family colour is left for the key to leave out: the words are in the plot's ink (the rings'
    # names in the selection's accent), and a highlighted family's larger dots keep their scale colours.
    assert word_colours(canvas) <= {theme.plot_foreground().name(), theme.accent().name()}
    family = next(iter(view.panel.highlight_buttons))
    qtbot.mouseClick(view.panel.highlight_buttons[family], Qt.MouseButton.LeftButton)
    assert canvas.highlighted == family and canvas.highlight_count > 0
    assert fills(canvas._highlight_item) == fills(canvas._family_items[family])
    qtbot.mouseClick(view.panel.highlight_buttons[family], Qt.MouseButton.LeftButton)
    assert canvas.highlighted is None

    # Off: the families' key exactly as it was, each swatch its dots' one colour again.
    _map_action(window, "Colour by health").trigger()
    settle()
    assert window.state.map_change is None
    assert not key.isVisible()
    after = family_swatches(view)
    assert {f: c.name() for f, c in after.items()} == {f: c.name() for f, c in before.items()}  # type: ignore[union-attr]
    for family, colours in dot_colours(canvas).items():
        assert colours == {after[family].name()}, family  # type: ignore[union-attr]
    assert len(word_colours(canvas)) > 2  # the words in their families' colours again


def svg_legend(drawing: str) -> list[tuple[str, str]]:
    """The SVG's legend as (fill, text): each legend marker is a circle followed by its words."""
    pairs = re.findall(r'<circle [^>]*fill="([^"]+)"[^>]*/>\n<text [^>]*>([^<]*)</text>', drawing)
    return [(fill, html.unescape(text)) for fill, text in pairs]


def test_pictures_and_the_web_page_coloured_by_health_say_what_their_colours_are(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from embedexplorer.jobs.map_jobs import WORD_MAP
    from tests.browser import Chromium

    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    canvas, exports = view.canvas, window.panes.map.exports
    window.right.setCurrentWidget(window.panes.map)
    # The whole vocabulary: its rows in no family are drawn too, and coloured by health with the rest.
    with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=HEALTH_TIMEOUT_MS):
        _map_action(window, "Whole vocabulary").trigger()
    settle()
    assert canvas._rest_item is not None
    families = list(canvas.map.families)
    colour_by_health(qtbot, window)
    change = window.state.map_change
    scale = [(colour.name(), text) for colour, text in zip(
        (change_colour(share) for share in (0.0, 0.5, 1.0, None)), change.legend, strict=True
    )]
    rest = point_brushes(canvas)
    assert any(rest[int(p)] is not None for p in canvas._rest_item.data["data"][:50])  # the rest is filled too

    # The SVG's legend is the scale alone: no family colour, no grey "other rows" (those dots have the scale's).
    picture = tmp_path / "health.svg"
    assert exports.export_to(str(picture))
    legend = svg_legend(picture.read_text(encoding="utf-8"))
    assert [pair for pair in legend if pair[1] in families or pair[1] == "other rows"] == []
    assert [pair for pair in legend if pair[1] in change.legend] == scale
    # The PNG draws the same entries.
    assert exports.export_to(str(tmp_path / "health.png"))
    assert [entry[4] for entry in canvas.legend_entries()][: len(scale)] == list(change.legend)
    assert not {entry[4] for entry in canvas.legend_entries()} & {*families, "other rows"}

    # The web page: the key is headed by what the colours are, and no family row shows a swatch.
    page = tmp_path / "health.html"
    assert exports.export_page_to(str(page))
    key_js = (
        "(() => { const f = document.getElementById('change'); return {hidden: f.hidden,"
        " heading: f.querySelector('legend').textContent, rows: Array.from(f.querySelectorAll('.scale'))"
        ".map(r => r.innerText), swatches: Array.from(document.querySelectorAll('#families .swatch'))"
        ".map(s => [getComputedStyle(s).visibility, getComputedStyle(s).backgroundColor])}; })()"
    )
    with Chromium(width=1280, height=800) as browser:
        browser.open(page)
        key = browser.evaluate(key_js)
    assert not key["hidden"] and key["heading"] == "Health score"
    assert key["rows"] == list(change.legend)
    assert {visibility for visibility, _ in key["swatches"]} == {"hidden"}

    # Off: the page's families show their colours again, and its scale goes.
    _map_action(window, "Colour by health").trigger()
    settle()
    plain = tmp_path / "plain.html"
    assert exports.export_page_to(str(plain))
    with Chromium(width=1280, height=800) as browser:
        browser.open(plain)
        key = browser.evaluate(key_js)
    assert key["hidden"]
    assert {visibility for visibility, _ in key["swatches"]} == {"visible"}
    family_fills = [colour for _, colour in key["swatches"]][: len(families)]
    expected = [QColor(canvas._family_items[f].opts["brush"].color()) for f in families]
    assert family_fills == [f"rgb({c.red()}, {c.green()}, {c.blue()})" for c in expected]
