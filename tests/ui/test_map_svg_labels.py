"""The exported SVG's labels, measured by a browser: none touches another or the selected token's name.

A token is typed into the real Text box so that its nearest rows are ringed close together on the
map, the map is exported through File > Export map's own path, and headless Chromium draws the
SVG and reports each text's box (``getBBox``): the sizes come from the browser's own text layout,
not from the program's measure of its labels.
"""

from __future__ import annotations

from pathlib import Path

from tests.browser import Chromium
from tests.ui.conftest import open_model, type_text

# Every text inside the plot (the clipped group): the word labels, the ring names and the star's name.
BOXES_JS = """
[...document.querySelectorAll('g[clip-path] text')].map(t => {
  const b = t.getBBox();
  return {text: t.textContent, x: b.x, y: b.y, width: b.width, height: b.height};
})
"""


def label_boxes(svg: Path, tmp_path: Path) -> list[dict[str, float | str]]:
    """The boxes Chromium gives the plot's texts, in the SVG's own units."""
    page = tmp_path / "labels.html"
    page.write_text("<!doctype html><html><body style='margin:0'>" + svg.read_text(encoding="utf-8")
                    + "</body></html>", encoding="utf-8")
    with Chromium(width=1300, height=1000) as browser:
        browser.open(page)
        boxes = browser.evaluate(BOXES_JS)
    return boxes


def touching(a: dict[str, float | str], b: dict[str, float | str]) -> bool:
    """Two boxes that overlap or share an edge (a label drawn right against another reads as one)."""
    ax, ay, aw, ah = (float(a[k]) for k in ("x", "y", "width", "height"))
    bx, by, bw, bh = (float(b[k]) for k in ("x", "y", "width", "height"))
    return ax <= bx + bw and bx <= ax + aw and ay <= by + bh and by <= ay + ah


def clashes_in_export(qtbot, window, tmp_path: Path, word: str) -> tuple[list[str], list[tuple[str, str]]]:  # type: ignore[no-untyped-def]
    """Select ``word`` (typed), export the map as SVG as File > Export map does, and measure it in Chromium:
    the ring names drawn, and every pair of the plot's texts that touch."""
    answer = type_text(qtbot, window, word)
    names = [n.token for n in answer.result.neighbours]
    assert window.panes.map.view.canvas.ring_names == names
    target = tmp_path / f"{word}.svg"
    assert window.panes.map.exports.export_to(str(target))
    boxes = label_boxes(target, tmp_path)
    texts = [str(b["text"]) for b in boxes]
    assert word in texts  # the star's name
    clashes = [(str(a["text"]), str(b["text"])) for n, a in enumerate(boxes) for b in boxes[n + 1:] if touching(a, b)]
    return [name for name in names if name in texts], clashes


def test_the_exported_svgs_ring_labels_touch_neither_each_other_nor_the_star_label(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    # The other days ring "monday", close together above the star.
    ringed, clashes = clashes_in_export(qtbot, window, tmp_path, "monday")
    assert len(ringed) >= 4 and clashes == []
    # In presentation mode (larger type) a crowd of rings: "king"'s queen and prince, "doctor"'s doctors by its name.
    window.panes.teaching.presentation_action.trigger()
    for word in ("king", "doctor"):
        ringed, clashes = clashes_in_export(qtbot, window, tmp_path, word)
        assert len(ringed) >= 3 and clashes == [], word
