"""Issue 35, item 1: in a crowded part of the map, the grown dot, the tip and the click name the same dot.

A person rests the pointer on a dot where several overlap, reads the tip, clicks. The oracle is the
picture on screen: the colour under the pointer (grabbed before the pointer came) says which
family's dot is drawn on top there, and the word the click looks up must be of that family; the
tip's first name must be the word the click looks up.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest

from embedexplorer.core.maps.word_maps import NO_FAMILY
from embedexplorer.ui.style import theme
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model, settle, type_text
from tests.ui.pointer import rest_on
from tests.ui.test_every_size import at_size


def scene_points(canvas) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Every dot's centre in the canvas viewport's pixels, as Qt maps it (point by point)."""
    view = canvas.plot.getViewBox()
    out = []
    for x, y in canvas.map.coords:
        at = canvas.mapFromScene(view.mapViewToScene(pg.Point(float(x), float(y))))
        out.append((at.x(), at.y()))
    return np.asarray(out, dtype=float)


def crowded_places(canvas, count: int) -> list[QPoint]:  # type: ignore[no-untyped-def]
    """Places between two dots drawn over one another (of different families where the map has them)."""
    places = scene_points(canvas)
    families = canvas.map.family_of
    chosen: list[QPoint] = []
    for i in np.argsort(places[:, 0] - places[:, 1]).tolist():  # lower left first
        if families[i] == NO_FAMILY:
            continue
        gaps = np.hypot(*(places - places[i]).T)
        near = (gaps < 8) & (gaps > 0)  # two 11-pixel dots, half or more of one under the other
        others = np.flatnonzero(near & (families != families[i]) & (families != NO_FAMILY))
        others = others if others.size else np.flatnonzero(near)
        if others.size:
            j = int(others[0])
            middle = (places[i] + places[j]) / 2  # between two dots: the one on top decides
            point = QPoint(round(middle[0]), round(middle[1]))
            if all((point - p).manhattanLength() > 3 for p in chosen):
                chosen.append(point)
        if len(chosen) == count:
            break
    return chosen


def family_by_colour(canvas) -> dict[int, int]:  # type: ignore[no-untyped-def]
    """Each family's fill and outline colours, as drawn, to the family."""
    colours = {}
    for index in range(len(canvas.map.families)):
        colour = theme.family_colour(index)
        colours[colour.rgb() & 0xFFFFFF] = index
        colours[colour.darker(150).rgb() & 0xFFFFFF] = index
    return colours


@pytest.mark.parametrize("width,height", [(1366, 768), (1024, 640)])
def test_the_click_looks_up_the_dot_the_tip_names_first_where_dots_crowd(qtbot, window, width, height) -> None:  # type: ignore[no-untyped-def]
    at_size(qtbot, window, width, height)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "cheese")
    canvas = window.panes.map.view.canvas
    canvas.set_labels_visible(False)  # the oracle reads dot colours; labels would cover them
    settle()
    places = crowded_places(canvas, 14)
    assert len(places) >= 4, f"the bundled map has {len(places)} crowded places at {width}x{height}"
    viewport = canvas.viewport()
    QTest.mouseMove(viewport, QPoint(2, 2))  # away from every dot: nothing grown
    qtbot.wait(100)
    picture = viewport.grab().toImage()
    colours = family_by_colour(canvas)
    checked = 0
    for place in places:
        QTest.mouseMove(viewport, QPoint(2, 2))
        qtbot.wait(50)
        rest_on(qtbot, viewport, place)
        tip = canvas.tip_text
        assert tip, f"no tip at {place}"
        first = tip.splitlines()[0].split("  (")[0]
        assert canvas.hovered is not None  # the dot grew
        grown = canvas.map.labels[canvas._hover_point]
        assert grown == first, f"the grown dot is {grown!r}, the tip names {first!r} first"
        with qtbot.waitSignal(window.panes.map.view.word_clicked, timeout=ANSWER_TIMEOUT_MS) as clicked:
            qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=place)
        looked_up = clicked.args[0]
        index = canvas.map.labels.index(first)
        assert looked_up == canvas.map.texts[index], f"the tip names {first!r} first, the click looked up {looked_up!r}"
        drawn = colours.get(QColor(picture.pixel(place)).rgb() & 0xFFFFFF)
        if drawn is not None:  # the pixel is one family's fill or outline, not a blend or the star
            assert canvas.map.family_of[index] == drawn, (
                f"{looked_up!r} is of {canvas.map.families[canvas.map.family_of[index]]}, the dot drawn on top at "
                f"{place} is of {canvas.map.families[drawn]}"
            )
            checked += 1
        qtbot.waitUntil(lambda text=looked_up: window.state.text == text, timeout=ANSWER_TIMEOUT_MS)
    assert checked >= len(places) // 3, f"only {checked} of {len(places)} places had a clear colour to check"


def test_the_grown_dot_follows_an_answer_that_comes_while_the_pointer_rests(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    # The pointer rests between two dots; then an answer draws the star over the one beneath (a
    # person clicked a word and waits). The tip and a click now take the starred dot: the grown
    # dot must follow at once, not at the next move of the pointer.
    at_size(qtbot, window, 1366, 768)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "cheese")
    canvas = window.panes.map.view.canvas
    canvas.set_labels_visible(False)
    settle()
    viewport = canvas.viewport()
    places = scene_points(canvas)
    checked = 0
    for place in crowded_places(canvas, 6):
        QTest.mouseMove(viewport, QPoint(2, 2))
        qtbot.wait(50)
        rest_on(qtbot, viewport, place)
        grown = canvas.hovered
        assert grown is not None
        beneath = [
            i for i in np.flatnonzero(np.hypot(*(places - (place.x(), place.y())).T) < 5).tolist()
            if i != canvas._hover_point
        ]
        if not beneath:
            continue
        other = beneath[0]
        x, y = canvas.map.coords[other]
        canvas.set_selection(canvas.map.labels[other], (float(x), float(y)), [])  # the answer arrives
        assert canvas.tip_at(canvas.mapToScene(place)).splitlines()[0].startswith(canvas.map.labels[other])
        named, grown_now = canvas.map.labels[other], canvas.map.labels[canvas._hover_point]
        assert canvas._hover_point == other, f"the tip names {named!r} first, the grown dot is {grown_now!r}"
        checked += 1
    assert checked >= 2, f"only {checked} crowded places had a dot beneath the grown one"
