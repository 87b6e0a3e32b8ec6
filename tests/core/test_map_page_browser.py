"""The map's web page in a real browser: headless Chromium, driven with real mouse and key events.

The page is opened from a file with every request watched: it must ask for nothing but
itself. Hover, find, family toggles, zoom and pan are driven through the DevTools
protocol's input events, and what the page shows is read back from its DOM and pixels.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from embedexplorer.core.maps.colours import family_colour_hex
from embedexplorer.core.maps.family_map import family_map, load_families
from embedexplorer.core.maps.map_origin import with_provenance
from embedexplorer.core.maps.web_page import write_map_page
from embedexplorer.core.maps.word_maps import from_family_map, word_map
from embedexplorer.core.maps.word_sets import whole_vocabulary
from tests.browser import Chromium


@pytest.fixture(scope="module")
def families():  # type: ignore[no-untyped-def]
    return load_families()


@pytest.fixture(scope="module")
def small_page(minilm_table, families, tmp_path_factory):  # type: ignore[no-untyped-def]
    drawn = with_provenance(family_map(minilm_table, families), minilm_table)
    path = tmp_path_factory.mktemp("page") / "map.html"
    write_map_page(path, drawn, minilm_table.name)
    return path, from_family_map(drawn, minilm_table.name)


@pytest.fixture
def browser():  # type: ignore[no-untyped-def]
    with Chromium(width=1280, height=800) as chromium:
        yield chromium


def tip(browser: Chromium) -> dict[str, object]:
    return browser.evaluate(
        "(() => { const t = document.getElementById('tip'); return {hidden: t.hidden,"
        " token: t.querySelector('.tip-token').textContent, id: t.querySelector('.tip-id').textContent,"
        " family: t.querySelector('.tip-family').textContent}; })()"
    )


def where(browser: Chromium, label: str) -> tuple[float, float]:
    index = browser.evaluate(f"window.mapPage.indexOf({label!r})")
    assert index >= 0, label
    point = browser.evaluate(f"window.mapPage.screenOf({index})")
    return point["x"], point["y"]


def box_of(browser: Chromium, selector: str) -> tuple[float, float]:
    """The centre of an element, in page coordinates."""
    box = browser.evaluate(
        f"(() => {{ const b = document.querySelector({selector!r}).getBoundingClientRect();"
        " return [b.left + b.width / 2, b.top + b.height / 2]; })()"
    )
    return box[0], box[1]


def pixel(screenshot: Path, x: float, y: float) -> str:
    from PySide6.QtGui import QImage

    image = QImage(str(screenshot))
    return image.pixelColor(round(x), round(y)).name().upper()


def test_the_page_opens_offline_and_draws_every_point(browser, small_page, tmp_path) -> None:
    path, shown = small_page
    browser.open(path)
    assert browser.requests() == [path.resolve().as_uri()]  # nothing but the file itself
    assert browser.evaluate("window.mapPage.drawn()") == len(shown) == 63
    shot = tmp_path / "page.png"
    data = browser.screenshot(shot)
    assert len(data) > 20_000
    from tests.images import png_facts

    width, height, colours = png_facts(shot)
    assert (width, height) == (1280, 800) and colours > 30
    # Each family's dot is drawn in its colour where the page says the point is.
    for word in ("monday", "paris", "cat"):
        family = shown.families[shown.family_of[shown.labels.index(word)]]
        x, y = where(browser, word)
        assert pixel(shot, x, y) == family_colour_hex(shown.families.index(family)).upper(), word
    caption = browser.evaluate("document.getElementById('caption').innerText")
    assert caption.startswith("all-MiniLM-L6-v2 (bundled): 63 words in 8 families")
    facts = browser.evaluate("document.getElementById('provenance').innerText")
    assert "table_sha256" in facts and "model.safetensors" in facts


def test_pointing_at_a_dot_shows_its_token_id_and_family(browser, small_page, minilm_table, families) -> None:
    path, _shown = small_page
    browser.open(path)
    assert tip(browser)["hidden"]
    for word, family in (("monday", "days"), ("paris", "cities"), ("doctor", "jobs")):
        x, y = where(browser, word)
        browser.mouse("mouseMoved", x + 2, y - 1)
        shown_tip = tip(browser)
        assert not shown_tip["hidden"], word
        assert shown_tip["token"] == word
        assert shown_tip["id"] == f"id {minilm_table.encode(word)[0].id}"  # the tokenizer's id
        # The families file's word ("Monday"), as the uncased tokenizer reads it.
        assert word in [w.strip().lower() for w in families[family]] and shown_tip["family"] == f"family: {family}"
    browser.mouse("mouseMoved", 5, 5)  # off the plot
    assert tip(browser)["hidden"]


def test_the_find_box_finds_words_and_enter_goes_to_each(browser, small_page) -> None:
    path, shown = small_page
    browser.open(path)
    browser.click(*box_of(browser, "#find"))
    browser.type_text("day")
    expected = [label for label in shown.labels if "day" in label.casefold()]
    assert len(expected) == 7
    assert browser.evaluate("document.getElementById('found').textContent") == "7 found"
    browser.press("Enter", 13)
    assert browser.evaluate("document.getElementById('found').textContent") == f"1 of 7: {expected[0]}"
    # The view is centred on the match, and its tip is shown.
    centre = browser.evaluate(
        "(() => { const b = document.getElementById('map').getBoundingClientRect();"
        " return [b.left + 58 + (b.width - 70) / 2, b.top + 10 + (b.height - 54) / 2]; })()"
    )
    x, y = where(browser, expected[0])
    assert math.dist((x, y), centre) < 1.5
    assert tip(browser)["token"] == expected[0]
    browser.press("Enter", 13)
    assert browser.evaluate("document.getElementById('found').textContent") == f"2 of 7: {expected[1]}"
    browser.call("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "a", "modifiers": 2, "code": "KeyA",
                                            "windowsVirtualKeyCode": 65})
    browser.type_text("zzzz")
    assert browser.evaluate("document.getElementById('found').textContent") == "none found"


def test_a_family_toggle_hides_its_points(browser, small_page, tmp_path) -> None:
    path, shown = small_page
    browser.open(path)
    x, y = where(browser, "monday")
    before = tmp_path / "before.png"
    browser.screenshot(before)
    days = family_colour_hex(shown.families.index("days")).upper()
    assert pixel(before, x, y) == days
    browser.click(*box_of(browser, "input[data-family='days']"))
    assert browser.evaluate("document.querySelector(\"input[data-family='days']\").checked") is False
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert browser.evaluate("window.mapPage.drawn()") == 63 - 7
    after = tmp_path / "after.png"
    browser.screenshot(after)
    assert pixel(after, x, y) != days
    browser.mouse("mouseMoved", x, y)
    assert tip(browser)["hidden"] or tip(browser)["token"] != "monday"
    # Found words leave the hidden family out, and ticking it again brings the points back.
    browser.click(*box_of(browser, "#find"))
    browser.type_text("day")
    assert browser.evaluate("document.getElementById('found').textContent") == "none found"
    browser.click(*box_of(browser, "input[data-family='days']"))
    assert browser.evaluate("document.getElementById('found').textContent") == "7 found"
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # the redraw
    assert browser.evaluate("window.mapPage.drawn()") == 63


def test_the_wheel_zooms_about_the_pointer_and_dragging_pans(browser, small_page) -> None:
    path, _shown = small_page
    browser.open(path)
    a, b = where(browser, "monday"), where(browser, "paris")
    browser.mouse("mouseWheel", a[0], a[1], deltaX=0, deltaY=-400)
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    a2, b2 = where(browser, "monday"), where(browser, "paris")
    assert math.dist(a, a2) < 1.5  # the point under the pointer stays put
    assert math.dist(a2, b2) > 1.5 * math.dist(a, b)  # and the rest spreads out
    start = ((a2[0] + 400) / 2, (a2[1] + 400) / 2)
    browser.mouse("mouseMoved", *start)
    browser.mouse("mousePressed", *start, button="left", buttons=1, clickCount=1)
    for step in range(1, 6):
        browser.mouse("mouseMoved", start[0] - 10 * step, start[1] + 6 * step, button="left", buttons=1)
    browser.mouse("mouseReleased", start[0] - 50, start[1] + 30, button="left", buttons=0, clickCount=1)
    a3 = where(browser, "monday")
    assert math.dist((a3[0] - a2[0], a3[1] - a2[1]), (-50, 30)) < 1.5


@pytest.mark.slow
def test_the_whole_gpt2_vocabulary_page_draws_and_answers(browser, gpt2_table, families, tmp_path) -> None:
    drawn = with_provenance(word_map(gpt2_table, whole_vocabulary(gpt2_table), families), gpt2_table)
    path = tmp_path / "whole.html"
    write_map_page(path, drawn, gpt2_table.name)
    browser.open(path)
    assert browser.requests() == [path.resolve().as_uri()]
    assert browser.evaluate("window.mapPage.drawn()") == 50_257
    x, y = where(browser, "_Monday")
    browser.mouse("mouseMoved", x, y)
    assert tip(browser) == {"hidden": False, "token": "_Monday", "id": "id 3321", "family": "family: days"}
    # A grey row of the vocabulary: its own id, no family.
    index = next(i for i in range(20_000, 50_257) if drawn.family_of[i] < 0)
    point = browser.evaluate(f"window.mapPage.screenOf({index})")
    browser.mouse("mouseMoved", point["x"], point["y"])
    shown_tip = tip(browser)
    assert not shown_tip["hidden"]
    # The dot under the pointer (that one, or a neighbour drawn on it): its token, id and family agree.
    token_id = int(str(shown_tip["id"]).removeprefix("id "))
    assert shown_tip["token"] == gpt2_table.tokens[token_id] == drawn.labels[token_id]
    family = drawn.family_of[token_id]
    assert shown_tip["family"] == ("no family" if family < 0 else f"family: {drawn.families[family]}")
    browser.click(*box_of(browser, "#find"))
    browser.type_text("Monday")
    expected = sum("monday" in t.casefold() or "monday" in s.casefold() for t, s in zip(drawn.labels, drawn.texts,
                                                                                      strict=True))
    assert browser.evaluate("document.getElementById('found').textContent") == f"{expected} found"


def test_a_selected_token_that_looks_like_markup_stays_text(browser, minilm_table, families, tmp_path) -> None:
    from embedexplorer.core.maps.web_page import Selected

    drawn = with_provenance(family_map(minilm_table, families), minilm_table)
    shown = from_family_map(drawn, minilm_table.name)
    # The star where no dot is (a typed token off the map's words), a ring on tuesday named as markup.
    high = shown.coords.max(axis=0)
    tuesday = shown.coords[shown.labels.index("tuesday")]
    ring_name = '<img src=x onerror="document.title=1">'
    ring = ((float(tuesday[0]), float(tuesday[1])), ring_name)
    selected = Selected("<b>x</b>", (float(high[0]), float(high[1])), (ring,))
    path = tmp_path / "markup.html"
    write_map_page(path, drawn, minilm_table.name, selected=selected)
    browser.open(path)
    title = browser.evaluate("document.title")
    key = browser.evaluate(
        "Array.from(document.querySelectorAll('#marks .mark')).map(r => r.textContent)"
    )
    assert key == ["<b>x</b>: the selected token", "rings: its nearest rows"]
    assert browser.evaluate("document.querySelectorAll('img, #marks b').length") == 0
    marks = browser.evaluate("window.mapPage.marks()")
    assert marks["star"]["label"] == "<b>x</b>" and [r["label"] for r in marks["rings"]] == [ring_name]
    # The star has no dot beneath: its tip names the selected token, as text.
    browser.mouse("mouseMoved", marks["star"]["x"], marks["star"]["y"])
    assert tip(browser)["token"] == "<b>x</b>"
    assert browser.evaluate("document.querySelector('#tip .tip-role').textContent") == "the selected token"
    assert browser.evaluate("document.title") == title != "1"  # no handler of the ring's name ran
