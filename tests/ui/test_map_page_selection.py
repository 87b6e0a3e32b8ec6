"""The map's web page marks the selected token as the window does: its star and name, its nearest rows' rings, a key.

A teacher types a word, then exports the page for the class: the page must show what the window
shows. The page is written by the window's own export (File > Export map as web page) with the
word typed into the real Text box, and read back from headless Chromium: where the page says it
drew the star and rings, the pixels there, its key, and the tips a real pointer gets.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtGui import QImage

from embedexplorer.ui.style import theme
from tests.browser import Chromium
from tests.core.test_map_page_browser import where

from .conftest import ANSWER_TIMEOUT_MS, open_model, settle, type_text

MARKS_JS = "window.mapPage.marks()"
KEY_JS = (
    "(() => { const k = document.getElementById('marks');"
    " return k && {hidden: k.hidden, rows: Array.from(k.querySelectorAll('.mark')).map(r => r.textContent),"
    " html: k.innerHTML}; })()"
)
TIP_JS = (
    "(() => { const t = document.getElementById('tip'); return {hidden: t.hidden,"
    " token: t.querySelector('.tip-token').textContent, family: t.querySelector('.tip-family').textContent,"
    " role: (t.querySelector('.tip-role') || {}).textContent || ''}; })()"
)


def near(colour: str, wanted: str, slack: int = 40) -> bool:
    a, b = int(colour[1:], 16), int(wanted[1:], 16)
    return all(abs(((a >> s) & 255) - ((b >> s) & 255)) <= slack for s in (16, 8, 0))


def colours_around(image: QImage, x: float, y: float, radius: float, steps: int = 16) -> list[str]:
    """The screenshot's colours on a circle about (x, y)."""
    return [
        image.pixelColor(round(x + radius * math.cos(2 * math.pi * n / steps)),
                         round(y + radius * math.sin(2 * math.pi * n / steps))).name()
        for n in range(steps)
    ]


def accent_pixels(image: QImage) -> int:
    accent = theme.accent().name()
    return sum(
        near(image.pixelColor(x, y).name(), accent, 24)
        for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)
    )


def opened_and_shot(browser: Chromium, page: Path, shot: Path) -> QImage:
    """The page as the browser draws it: opened, then its screenshot read back."""
    browser.open(page)
    browser.screenshot(shot)
    return QImage(str(shot))


def test_a_page_exported_with_a_word_typed_shows_its_star_rings_and_key(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    window.right.setCurrentWidget(window.panes.map)
    canvas = window.panes.map.view.canvas
    type_text(qtbot, window, "paris")
    qtbot.waitUntil(lambda: canvas.selection[0] == "paris" and bool(canvas.ring_names), timeout=ANSWER_TIMEOUT_MS)
    settle()
    token, star_at, rings = canvas.selection
    names = canvas.ring_names
    accent = theme.accent().name()
    page = tmp_path / "paris.html"
    assert window.panes.map.exports.export_page_to(str(page))

    with Chromium(width=1280, height=800) as browser:
        image = opened_and_shot(browser, page, tmp_path / "paris.png")
        # The key says what the star and the rings are, the token's name as the window's legend gives it.
        key = browser.evaluate(KEY_JS)
        assert key is not None and not key["hidden"]
        assert key["rows"] == ["paris: the selected token", "rings: its nearest rows"]
        # The star sits on paris's own dot (the typed word is a family word), filled with the window's accent.
        marks = browser.evaluate(MARKS_JS)
        star = where(browser, "paris")
        assert marks["star"]["label"] == token == "paris"
        assert math.dist((marks["star"]["x"], marks["star"]["y"]), star) < 0.5
        assert near(image.pixelColor(round(star[0]), round(star[1])).name(), accent, 8)
        # Its name beside it, in the accent.
        left, top, width, height = marks["star"]["name"]
        assert width > 10 and any(
            near(image.pixelColor(x, y).name(), accent, 24)
            for x in range(round(left), round(left + width)) for y in range(round(top), round(top + height))
        )
        # A ring about every neighbour the window rings, at that word's dot, its outline in the accent.
        drawn = {ring["label"]: (ring["x"], ring["y"]) for ring in marks["rings"]}
        assert sorted(drawn) == sorted(names) and len(rings) == len(names)
        for name in names:
            if browser.evaluate(f"window.mapPage.indexOf({name!r})") < 0:
                continue  # a neighbour that is no word of the map: its ring stands alone
            x, y = where(browser, name)
            assert math.dist(drawn[name], (x, y)) < 0.5, name
            outline = colours_around(image, x, y, 7.5)
            assert sum(near(c, accent) for c in outline) >= 4, (name, outline)

        # Pointing at the star names the selected token; at a ringed dot, that word as one of its nearest rows.
        browser.mouse("mouseMoved", *star)
        shown = browser.evaluate(TIP_JS)
        assert not shown["hidden"] and shown["token"] == "paris" and shown["role"] == "the selected token"
        ringed = next(n for n in names if browser.evaluate(f"window.mapPage.indexOf({n!r})") >= 0)
        browser.mouse("mouseMoved", *where(browser, ringed))
        shown = browser.evaluate(TIP_JS)
        assert shown["token"] == ringed and shown["role"] == "a nearest row of paris"
        # Hiding the cities on the page takes their rings with them, as hiding a family does in the window.
        browser.click(*browser.evaluate(
            "(() => { const b = document.querySelector(\"input[data-family='cities']\").getBoundingClientRect();"
            " return [b.left + b.width / 2, b.top + b.height / 2]; })()"
        ))
        shown_map = canvas.map
        city = shown_map.families.index("cities")
        cities = {label for label, f in zip(shown_map.labels, shown_map.family_of.tolist(), strict=True) if f == city}
        left = {ring["label"] for ring in browser.evaluate(MARKS_JS)["rings"]}
        assert left == set(names) - cities and len(left) < len(names)
    assert star_at is not None

    # Nothing selected (the text cleared): the page marks nothing, and its key has no such line.
    window.panes.token_pane.input.clear()
    qtbot.waitUntil(lambda: canvas.selection[1] is None, timeout=ANSWER_TIMEOUT_MS)
    plain = tmp_path / "plain.html"
    assert window.panes.map.exports.export_page_to(str(plain))
    with Chromium(width=1280, height=800) as browser:
        image = opened_and_shot(browser, plain, tmp_path / "plain.png")
        key = browser.evaluate(KEY_JS)
        assert key is None or key["hidden"]
        marks = browser.evaluate("window.mapPage.marks ? window.mapPage.marks() : null")
        assert marks is None or (marks["star"] is None and marks["rings"] == [])
        assert accent_pixels(image) == 0
