"""The map beyond the 63 words, in the real window: edited families, bigger maps, search, rings, export."""

from __future__ import annotations

import re

import numpy as np
from PySide6.QtCore import QPoint, Qt

from embedexplorer.core.maps.family_map import load_families
from embedexplorer.core.maps.word_maps import WordMap
from embedexplorer.jobs.map_jobs import WORD_MAP
from embedexplorer.jobs.table_jobs import MAP
from embedexplorer.ui.map.family_editor import FamilyEditor
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model, settle, type_text
from tests.ui.pointer import rest_on
from tests.ui.test_family_map_projections import projection_action

DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def whole_vocabulary(qtbot, window) -> WordMap:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=LOAD_TIMEOUT_MS) as ready:
        window.panes.map.view.request_word_map("all")
    return ready.args[0]


def test_families_edited_in_the_dialog_round_trip_through_the_saved_file(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    editor = FamilyEditor(window.panes.map.view.current_families())
    qtbot.addWidget(editor)
    days = editor.tree.topLevelItem(editor.families_in_order().index("days"))
    editor.tree.setCurrentItem(days)
    editor.add_word("holiday")  # a word added to a family
    editor.rename("days", "weekdays")  # a family renamed
    editor.tree.setCurrentItem(editor.tree.topLevelItem(editor.families_in_order().index("jobs")))
    editor.remove_selected()  # a family removed
    editor.add_family("colours", ["red", "green", "blue"])  # a new family
    editor.tree.setCurrentItem(editor.tree.topLevelItem(0))
    editor.move_selected(1)  # countries and cities swap colours
    assert editor.problem() == ""
    edited = editor.families()
    assert list(edited)[:2] == ["cities", "countries"] and "jobs" not in edited
    assert edited["weekdays"][-1] == "holiday" and edited["colours"] == ["red", "green", "blue"]

    saved = tmp_path / "mine.json"
    with qtbot.waitSignal(answers(window, MAP).ready, timeout=ANSWER_TIMEOUT_MS) as drawn:
        assert window.panes.map.view.apply_edited_families(edited, saved)
    assert load_families(saved) == edited  # the format that loads today, in the same order
    assert drawn.args[0].families == list(edited)
    assert window.panes.map.view.canvas.families == list(edited)
    assert window.settings.families_file == str(saved)  # remembered for the next start
    # A family left empty or two with one name cannot be saved.
    editor.add_family("weekdays")
    assert "same name" in editor.problem() or "no words" in editor.problem()


def test_whole_vocabulary_search_counts_and_centres_on_each_match(qtbot, window, minilm_table) -> None:
    open_model(qtbot, window, "bundled")
    drawn = whole_vocabulary(qtbot, window)
    view, canvas = window.panes.map.view, window.panes.map.view.canvas
    assert len(drawn) == 30_522 and canvas.map is drawn
    assert sum(drawn.family_counts().values()) == 63  # the chapter's words, coloured among the grey rows
    qtbot.keyClicks(view.search_box, "tuesday")
    expected = [i for i, t in enumerate(drawn.texts) if "tuesday" in t.casefold()]
    assert len(canvas.matches) == len(expected) >= 1 and view.search_count.text() == f"{len(expected):,} found"
    qtbot.keyClick(view.search_box, Qt.Key.Key_Return)
    (x0, x1), (y0, y1) = canvas.plot.getViewBox().viewRange()
    assert np.allclose(((x0 + x1) / 2, (y0 + y1) / 2), drawn.coords[expected[0]], atol=1e-6 * (x1 - x0) + 1e-9)
    assert view.search_count.text().startswith("1 of ")
    view.search_box.clear()
    assert canvas.matches == [] and view.search_count.text() == ""


def test_hovering_a_grey_row_of_the_whole_vocabulary_names_it_and_draws_it_larger(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    drawn = whole_vocabulary(qtbot, window)
    canvas = window.panes.map.view.canvas
    settle()
    box = canvas.plot.getViewBox()
    (x0, x1), (y0, y1) = box.viewRange()
    # A grey row near the middle of the view, alone within a few pixels so the tip names only it.
    centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    grey = np.flatnonzero(drawn.family_of < 0)
    order = grey[np.argsort(np.linalg.norm(drawn.coords[grey] - centre, axis=1))]
    index = int(order[0])
    at = canvas.mapFromScene(box.mapViewToScene(pg_point(*drawn.coords[index])))
    rest_on(qtbot, canvas.viewport(), QPoint(at.x(), at.y()))
    qtbot.waitUntil(lambda: canvas.hovered is not None, timeout=ANSWER_TIMEOUT_MS)
    hovered = canvas.hovered
    assert hovered is not None
    # Several rows may share the pixel; the one drawn larger is one of those under the pointer.
    pixel = (x1 - x0) / max(1, canvas.plot.getViewBox().width())
    assert np.linalg.norm(np.array(hovered) - drawn.coords[index]) <= 8 * pixel
    tip = canvas.tip_text.splitlines()[0]  # the dot drawn larger is the one the tip names first
    assert "(no family)" in tip and "id " in tip
    qtbot.mouseMove(canvas.viewport(), QPoint(2, 2))  # off the plot: nothing is drawn larger
    qtbot.waitUntil(lambda: canvas.hovered is None, timeout=ANSWER_TIMEOUT_MS)


def test_a_regex_that_matches_nothing_or_is_invalid_is_one_clear_message(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    before = window.panes.map.view.canvas.map
    for pattern, words in ((r"^zzqqxx$", "matches"), ("(unclosed", "not a valid regular expression")):
        with qtbot.waitSignal(answers(window, WORD_MAP).failed, timeout=ANSWER_TIMEOUT_MS):
            window.panes.map.view.request_word_map("regex", pattern)
        assert words in window.message_bar.text() and "The map on screen stays" in window.message_bar.text()
        assert window.panes.map.view.canvas.map is before


def test_cancelling_a_tsne_map_leaves_the_previous_map(qtbot, window, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EMBEDEXPLORER_CACHE_DIR", str(tmp_path / "cache"))  # no finished map from another test
    open_model(qtbot, window, "bundled")
    before = window.panes.map.view.canvas.map
    messages: list[str] = []
    answers(window, WORD_MAP).progress.connect(lambda _share, message: messages.append(message))
    window.panes.map.view.set_projection("tsne")
    assert window.panes.map.view.computing and window.panes.map.view.stop_button.isVisibleTo(window.panes.map)
    qtbot.waitUntil(lambda: len(messages) > 0, timeout=LOAD_TIMEOUT_MS)  # under way, with progress
    qtbot.mouseClick(window.panes.map.view.stop_button, Qt.MouseButton.LeftButton)
    assert not window.panes.map.view.computing and not window.progress.isVisibleTo(window)
    # The long lane runs one job at a time: a family map arriving proves the t-SNE job has stopped.
    with qtbot.waitSignal(answers(window, MAP).ready, timeout=LOAD_TIMEOUT_MS):
        window.panes.map.view.show_family_map()
    assert window.panes.map.view.canvas.map.method == "pca" and len(window.panes.map.view.canvas.map) == len(before)
    assert window.panes.map.view.projection == "pca" and window.panes.map.projection_actions["pca"].isChecked()


def test_pca_chosen_while_the_family_maps_tsne_is_computed_keeps_the_family_map(
    qtbot, window, tmp_path, monkeypatch
) -> None:
    """A person asks for t-SNE, then thinks better of it and picks PCA from the same menu: the family map stays,
    and the t-SNE map never arrives to replace it."""
    monkeypatch.setenv("EMBEDEXPLORER_CACHE_DIR", str(tmp_path / "cache"))  # no finished map from another test
    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    before = view.canvas.map
    messages: list[str] = []
    drawn: list[object] = []
    answers(window, WORD_MAP).progress.connect(lambda _share, message: messages.append(message))
    answers(window, WORD_MAP).ready.connect(drawn.append)
    projection_action(window, "t-sne").trigger()
    qtbot.waitUntil(lambda: len(messages) > 0, timeout=LOAD_TIMEOUT_MS)  # under way, with progress
    projection_action(window, "pca").trigger()
    assert not view.computing and not window.progress.isVisibleTo(window)
    assert view.canvas.map is before and window.panes.map.projection_actions["pca"].isChecked()
    # The long lane runs one job at a time: a family map arriving comes after whatever the t-SNE job would send.
    with qtbot.waitSignal(answers(window, MAP).ready, timeout=LOAD_TIMEOUT_MS):
        view.show_family_map()
    assert drawn == [] and view.canvas.map.method == "pca" and len(view.canvas.map) == len(before)
    assert view.projection == "pca" and window.panes.map.projection_actions["pca"].isChecked()


def test_rings_are_named_hidden_families_leave_nothing_and_the_caption_counts_what_is_shown(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    answer = type_text(qtbot, window, "monday")
    canvas, panel = window.panes.map.view.canvas, window.panes.map.view.panel
    names = [n.token for n in answer.result.neighbours]
    assert canvas.ring_names == names  # each ring's hover tip names it
    labelled = set(canvas.labels.shown)
    assert all(name in labelled or name in canvas.ring_names for name in names)
    assert "63 words in 8 families" in canvas.caption.text
    panel.visibility["days"].click()
    assert not set(DAYS) & set(canvas.ring_names)  # the rings on hidden days are gone too
    assert set(canvas.ring_names) == {n for n in names if n not in DAYS}
    assert "56 words in 7 families" in canvas.caption.text
    # Show the k nearest: the star and its rings alone, zoomed to them; Reset view shows everything.
    qtbot.mouseClick(window.panes.map.view.isolate_button, Qt.MouseButton.LeftButton)
    assert canvas.isolated
    window.panes.map.view.reset_view()
    qtbot.mouseClick(window.panes.map.view.isolate_button, Qt.MouseButton.LeftButton)
    assert not canvas.isolated


def test_clicking_a_dot_looks_its_word_up(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    settle()
    index = canvas.map.labels.index("tokyo")
    view = canvas.plot.getViewBox()
    at = canvas.mapFromScene(view.mapViewToScene(pg_point(*canvas.map.coords[index])))
    with qtbot.waitSignal(window.panes.map.view.word_clicked, timeout=ANSWER_TIMEOUT_MS) as clicked:
        qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(at.x(), at.y()))
    assert clicked.args == [" Tokyo"]  # the word as the families file spells it
    qtbot.waitUntil(lambda: window.panes.token_pane.input.text() == " Tokyo", timeout=ANSWER_TIMEOUT_MS)


def pg_point(x: float, y: float):  # type: ignore[no-untyped-def]
    import pyqtgraph as pg

    return pg.Point(float(x), float(y))


def test_svg_export_draws_markers_as_shapes_and_the_legend_explains_star_and_rings(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    target = tmp_path / "map.svg"
    assert window.panes.map.exports.export_to(str(target))
    drawing = target.read_text(encoding="utf-8")
    assert "<image" not in drawing  # no marker squeezed into a bitmap
    assert len(re.findall(r"<circle", drawing)) >= 63 + len(window.panes.map.view.canvas.ring_names)
    assert len(re.findall(r"<polygon", drawing)) == 2  # the star, on the map and in the legend
    # One grid: each major tick of each axis is one line, none drawn twice.
    lines = re.findall(r"<line [^>]*/>", drawing)
    assert len(lines) == len(set(lines)) >= 4
    assert "the selected token" in drawing and "rings: its nearest rows" in drawing


def test_the_one_style_scatter_draws_exactly_what_pyqtgraph_draws(qtbot) -> None:
    import pyqtgraph as pg

    from embedexplorer.ui.map.scatter import UniformScatter

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=2_000), rng.normal(size=2_000)
    per_point = [pg.mkBrush("r") if i % 3 else pg.mkBrush("b") for i in range(x.size)]
    for style in ({"brush": pg.mkBrush(0, 114, 178), "size": 7}, {"brush": per_point, "size": 5}):
        pictures = []
        for kind in (pg.ScatterPlotItem, UniformScatter):
            widget = pg.PlotWidget()
            qtbot.addWidget(widget)
            widget.resize(400, 300)
            widget.addItem(kind(x=x, y=y, pen=None, pxMode=True, **style))
            widget.getPlotItem().setRange(xRange=(-3, 3), yRange=(-3, 3), padding=0)
            pictures.append(widget.grab().toImage())
        assert pictures[0] == pictures[1]
