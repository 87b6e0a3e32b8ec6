"""The window on a laptop's screen (1024x640, 1366x768) and presentation mode's larger map, on real models.

The offscreen platform's one screen is 800x800, so a laptop's screen is stood in for by a
window of its size at (0, 0): what must lie "inside the screen" must lie inside that rectangle.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtWidgets import QApplication, QToolBar, QWidget

from embedexplorer.jobs.map_jobs import WORD_MAP
from embedexplorer.jobs.table_jobs import MAP
from embedexplorer.ui.exercises.teaching import SCALED_PROPERTY
from embedexplorer.ui.map.sizes import BIG_FAMILY_SIZE, REST_SIZE
from embedexplorer.ui.panes.row_view import MIN_ROW_PLOT_HEIGHT
from embedexplorer.ui.style.theme import PRESENTATION_SCALE
from embedexplorer.ui.window.fitting import FRAME_WAIT_MS, MIN_NEIGHBOUR_ROWS
from tests.ui.conftest import LOAD_TIMEOUT_MS, answers, open_model, settle, type_text


def rect_in(widget: QWidget, window: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def at_size(qtbot, window, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    window.move(0, 0)
    window.resize(width, height)
    # The row pane's place is decided once the resize has been handled.
    placement = window.row_placement
    qtbot.waitUntil(lambda: placement.compact == placement.wants_compact())
    settle()


def check_fits(qtbot, window, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    """Nothing outside the screen or cut off at its edge, no pane over another, no hidden exercise button."""
    screen = QRect(0, 0, width, height)
    assert (window.width(), window.height()) == (width, height)  # its smallest size fits the screen
    central = rect_in(window.centralWidget(), window)
    canvas = window.panes.map.view.canvas
    window.right.setCurrentWidget(window.panes.map)
    settle()
    on_screen = rect_in(canvas, window)
    assert central.contains(on_screen) and screen.contains(on_screen), (on_screen, central)
    # The map's own picture (plot, axes, caption) fits the canvas: nothing drawn past its right edge.
    view = QRectF(canvas.viewport().rect())
    for item in (canvas.plot, canvas.caption):
        assert view.contains(QRectF(canvas.mapFromScene(item.sceneBoundingRect()).boundingRect())), item
    assert not on_screen.intersects(rect_in(window.panes.map.view.panel, window))
    assert not rect_in(window.panes.neighbours_pane, window).intersects(rect_in(window.right, window))
    if not window.row_placement.compact:
        assert not rect_in(window.panes.row_view, window).intersects(rect_in(window.panes.neighbours_pane, window))
    # Every exercise button on its bar, none behind the "»" of a bar too narrow for it; or, where the
    # bars do not fit side by side, the exercises' bar folded into one button holding every exercise.
    for bar in window.findChildren(QToolBar):
        if bar.isHidden():
            fold = window.model_bar.bar_fit.fold_button
            assert fold is not None and fold.isVisible() and screen.contains(rect_in(fold, window)), bar.windowTitle()
            assert fold.menu().actions() == bar.actions()
            continue
        for action in bar.actions():
            widget = bar.widgetForAction(action)
            if action.isVisible() and widget is not None:
                assert widget.isVisible() and screen.contains(rect_in(widget, window)), action.text()
    # The row plot is a plot, not a strip: on its tab when the row pane sits beside the map. Its drawing
    # area, not the widget: the legend and the bottom axis took 77 of a 118-pixel widget at 1366x768.
    if window.row_placement.compact:
        window.right.setCurrentWidget(window.panes.row_view)
        settle()
    row_plot = window.panes.row_view.plot_widget
    settle()
    view = row_plot.getPlotItem().vb.sceneBoundingRect()
    assert view.height() >= MIN_ROW_PLOT_HEIGHT, (view, window.size(), window.row_placement.compact)
    # Its axis titles whole or not at all: "after LayerNorm" was cut at both ends in presentation's type.
    for side in ("left", "right"):
        axis = row_plot.getAxis(side)
        if axis.isVisible() and axis.label.isVisible():
            title = axis.label.sceneBoundingRect()
            assert view.top() - 1 <= title.top() and title.bottom() <= view.bottom() + 1, (
                side, axis.labelText, view, window.size()
            )
    window.right.setCurrentWidget(window.panes.map)


@pytest.mark.parametrize("model", ["bundled", "gpt2"])
def test_the_window_fits_1366x768_and_1024x640(qtbot, window, gpt2_folder, model: str) -> None:
    open_model(qtbot, window, "bundled" if model == "bundled" else str(gpt2_folder))
    type_text(qtbot, window, "monday" if model == "bundled" else " Monday")
    at_size(qtbot, window, 1600, 1000)
    # Room for both: the row pane above the neighbours, and eight neighbour rows visible.
    assert not window.row_placement.compact
    assert window.panes.neighbours_pane.visible_rows() >= MIN_NEIGHBOUR_ROWS
    assert window.panes.neighbours_pane.table.rowCount() == 8
    check_fits(qtbot, window, 1600, 1000)
    at_size(qtbot, window, 1366, 768)
    # The row's plot readable where it is (check_fits measures its drawing area): above the neighbours
    # it would draw in about 40 pixels beside eight rows, so it is a tab beside the map; the list keeps its rows.
    assert window.panes.neighbours_pane.visible_rows() >= MIN_NEIGHBOUR_ROWS
    check_fits(qtbot, window, 1366, 768)
    at_size(qtbot, window, 1024, 640)
    # Too short for both: the row pane is a tab beside the map; the list keeps its rows.
    assert window.row_placement.compact and window.right.indexOf(window.panes.row_view) == 1
    assert window.panes.neighbours_pane.visible_rows() >= MIN_NEIGHBOUR_ROWS
    check_fits(qtbot, window, 1024, 640)
    at_size(qtbot, window, 1600, 1000)  # and back, above the neighbours again
    assert not window.row_placement.compact and window.left.indexOf(window.panes.row_view) == 0
    assert window.right.indexOf(window.panes.row_view) == -1
    check_fits(qtbot, window, 1600, 1000)


def test_presentation_fits_1024x640_and_the_layers_pane_scrolls_instead(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    at_size(qtbot, window, 1024, 640)  # the row pane goes to its tab first, as on a laptop's screen
    window.panes.teaching.presentation_action.setChecked(True)
    try:
        at_size(qtbot, window, 1024, 640)
        check_fits(qtbot, window, 1024, 640)  # the Layers pane's height no longer sets the window's floor
        # The map keeps a plot, not a strip: its caption shows its first line, the rest in the tooltip,
        # and a picture still carries the whole caption.
        canvas = window.panes.map.view.canvas
        whole = canvas.caption_html
        first = whole.split("<br>")[0]
        # Where even that line would wrap, without the model's name (it is in the title and status bars).
        assert canvas.caption.text in (first, first.split("</b>: ", 1)[1]) and first != whole
        assert "between families" in canvas.caption.toolTip() and "between families" in whole
        assert canvas.plot.vb.sceneBoundingRect().height() >= 100
        # The left axis's title is whole where the plot is tall enough, else "direction 2"; either lies
        # within the plot's height, never cut at its ends.
        left_axis = canvas.plot.getAxis("left")
        on_screen_title = left_axis.labelText
        assert on_screen_title in ("direction 2", "direction 2 of the PCA map")
        title = left_axis.label.sceneBoundingRect()
        assert canvas.plot.vb.sceneBoundingRect().top() - 1 <= title.top() and title.bottom() <= (
            canvas.plot.vb.sceneBoundingRect().bottom() + 1
        )
        # A picture is laid out large: its titles are whole, and the screen's short one comes back after it.
        screen = canvas.ci.geometry()
        canvas.render_image(1600)
        assert canvas.export_text_areas["left axis title"].height() > 1.5 * title.height()
        settle()
        assert left_axis.labelText == on_screen_title
        assert canvas.ci.geometry() == screen  # the map on screen as before, not the picture's size cut by the canvas
        # The model's facts in the status bar end in "…" where the screen ends, not cut mid-letter.
        facts = window.facts_label
        assert facts.shown_text().endswith("…") and facts.text().startswith(facts.shown_text()[:-1])
        assert facts.fontMetrics().horizontalAdvance(facts.shown_text()) <= facts.contentsRect().width()
        # The Row tab keeps a plot (it was about 60 pixels tall): its lines of numbers and its note
        # fold into the title's tooltip.
        row = window.panes.row_view
        window.right.setCurrentWidget(row)
        settle()
        assert row.plot_widget.getPlotItem().vb.height() >= MIN_ROW_PLOT_HEIGHT
        assert not row.numbers.isVisible() and not row.note.isVisible()
        assert row.numbers.toolTip() != "" and row.numbers.toolTip() in row.title.toolTip()
        assert row.note.toolTip() in row.title.toolTip()
        pane = window.panes.layers_pane
        window.right.setCurrentWidget(pane)
        settle()
        # Its plots keep a readable height; what does not fit is a scroll away, not cut off.
        assert pane.cosine_plot.height() >= 130 and pane.length_plot.height() >= 70
        bar = pane.scroll_area.verticalScrollBar()
        assert bar.maximum() > 0
        bar.setValue(bar.maximum())
        settle()
        note = rect_in(pane.note, pane.scroll_area.viewport())
        assert pane.scroll_area.viewport().rect().contains(note)
    finally:
        window.panes.teaching.presentation_action.setChecked(False)
    settle()
    assert window.panes.row_view.numbers.isVisibleTo(window.panes.row_view)  # back in normal mode's type
    at_size(qtbot, window, 1366, 768)  # room again: the whole caption and titles on screen
    assert window.panes.map.view.canvas.caption.text == window.panes.map.view.canvas.caption_html
    window.right.setCurrentWidget(window.panes.map)
    settle()
    assert window.panes.map.view.canvas.plot.getAxis("left").labelText == "direction 2 of the PCA map"
    assert window.facts_label.shown_text() == window.facts_label.text()
    assert window.panes.map.view.canvas.caption.toolTip() == ""


def test_the_left_column_sizes_are_remembered_through_a_small_window(qtbot, tmp_path) -> None:
    from embedexplorer.app import create_window

    settings = str(tmp_path / "settings.ini")
    first = create_window(settings)
    qtbot.addWidget(first)
    first.show()
    # Sized once the window manager's frame would have come (the window is fitted to the screen till then).
    qtbot.waitUntil(lambda: not first.screen_fit._frame_pending, timeout=FRAME_WAIT_MS * 5)
    at_size(qtbot, first, 1600, 1000)
    total = sum(first.left.sizes())
    row = first.panes.row_view.least_height() + 6  # a split of the user's own, within what each pane needs
    first.left.setSizes([row, total - row])
    wanted = first.left.sizes()
    at_size(qtbot, first, 1024, 640)  # the row pane goes beside the map...
    assert first.row_placement.compact
    first.close()  # ...and is remembered where it was in the left column
    second = create_window(settings)
    qtbot.addWidget(second)
    second.show()
    qtbot.waitUntil(lambda: not second.screen_fit._frame_pending, timeout=FRAME_WAIT_MS * 5)
    at_size(qtbot, second, 1600, 1000)
    assert not second.row_placement.compact
    assert all(abs(a - b) <= 4 for a, b in zip(second.left.sizes(), wanted, strict=True)), (second.left.sizes(), wanted)
    second.close()


def drawn_sizes(window) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """The size pyqtgraph draws the first point of each scatter item at (families, rest, star, rings)."""
    canvas = window.panes.map.view.canvas
    items = dict(canvas._family_items)
    items.update({"rest": canvas._rest_item, "star": canvas._query_item, "rings": canvas._neighbour_item})
    return {name: item.points()[0].size() for name, item in items.items() if item is not None and len(item.data)}


def test_presentation_draws_the_map_larger_and_is_remembered(qtbot, tmp_path) -> None:
    from embedexplorer.app import create_window

    base_font = QApplication.font().pointSizeF()
    settings = str(tmp_path / "settings.ini")
    window = create_window(settings)
    qtbot.addWidget(window)
    window.show()
    try:
        open_model(qtbot, window, "bundled")
        type_text(qtbot, window, "monday")
        canvas, row_view = window.panes.map.view.canvas, window.panes.row_view
        normal = drawn_sizes(window)
        assert {"star", "rings", "days"} <= set(normal)
        normal_text = (canvas.labels.font.pointSizeF(), canvas.caption.item.font().pointSizeF())
        normal_legend = [entry[3] for entry in canvas.legend_entries()]
        normal_tick = row_view.plot_widget.getAxis("bottom").style["tickFont"].pointSizeF()
        layers = window.panes.layers_pane
        normal_layers = (
            layers.cosine_plot.getAxis("left").style["tickFont"].pointSizeF(),
            layers._row_curve.opts["pen"].widthF(),
        )

        window.panes.teaching.presentation_action.trigger()
        large = drawn_sizes(window)
        assert large.keys() == normal.keys()
        for name, size in normal.items():
            assert large[name] == pytest.approx(size * PRESENTATION_SCALE), name
        assert canvas.labels.font.pointSizeF() == pytest.approx(normal_text[0] * PRESENTATION_SCALE)
        assert canvas.caption.item.font().pointSizeF() == pytest.approx(normal_text[1] * PRESENTATION_SCALE)
        assert "12.6pt" in canvas.caption.item.toHtml()  # the caption's own size, 9pt, scaled
        assert all(b > a for a, b in zip(normal_legend, (e[3] for e in canvas.legend_entries()), strict=True))
        tick = row_view.plot_widget.getAxis("bottom").style["tickFont"].pointSizeF()
        assert tick == pytest.approx(normal_tick * PRESENTATION_SCALE)
        # The Layers pane's plots too: tick numbers and lines.
        large_layers = (
            layers.cosine_plot.getAxis("left").style["tickFont"].pointSizeF(),
            layers._row_curve.opts["pen"].widthF(),
        )
        assert large_layers == pytest.approx(tuple(v * PRESENTATION_SCALE for v in normal_layers))
        # Labels still never overlap at the larger size.
        rects = [rect for _i, rect in canvas.labels.placed]
        assert rects and not any(a.intersects(b) for n, a in enumerate(rects) for b in rects[n + 1 :])

        # A new map while presentation is on is drawn large too: the whole vocabulary...
        with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=LOAD_TIMEOUT_MS):
            window.panes.map.view.request_word_map("all")
        qtbot.waitUntil(lambda: canvas._rest_item is not None)
        big = drawn_sizes(window)
        assert big["rest"] == pytest.approx(REST_SIZE * PRESENTATION_SCALE)
        assert big["days"] == pytest.approx(BIG_FAMILY_SIZE * PRESENTATION_SCALE)
        window.panes.teaching.presentation_action.trigger()
        assert drawn_sizes(window)["rest"] == REST_SIZE and drawn_sizes(window)["days"] == BIG_FAMILY_SIZE
        window.panes.teaching.presentation_action.trigger()
        # ...and the family map again.
        with qtbot.waitSignal(answers(window, MAP).ready, timeout=LOAD_TIMEOUT_MS):
            window.panes.map.view.show_family_map()
        qtbot.waitUntil(lambda: canvas._rest_item is None and "star" in drawn_sizes(window))
        assert drawn_sizes(window) == pytest.approx(large)

        # Off: exactly the normal sizes again.
        window.panes.teaching.presentation_action.trigger()
        assert drawn_sizes(window) == normal
        assert (canvas.labels.font.pointSizeF(), canvas.caption.item.font().pointSizeF()) == normal_text
        assert [entry[3] for entry in canvas.legend_entries()] == normal_legend
        assert row_view.plot_widget.getAxis("bottom").style["tickFont"].pointSizeF() == normal_tick
        assert layers.cosine_plot.getAxis("left").style["tickFont"].pointSizeF() == normal_layers[0]
        assert layers._row_curve.opts["pen"].widthF() == normal_layers[1]
        window.panes.teaching.presentation_action.trigger()
        window.close()

        # Remembered: a new window with the same settings draws its first map large.
        again = create_window(settings)
        qtbot.addWidget(again)
        again.show()
        assert again.panes.teaching.presentation_action.isChecked()
        open_model(qtbot, again, "bundled")
        type_text(qtbot, again, "monday")
        assert drawn_sizes(again) == pytest.approx(large)
        again.panes.teaching.presentation_action.trigger()
        assert drawn_sizes(again) == normal
        again.close()
    finally:
        font = QApplication.font()
        font.setPointSizeF(base_font)
        QApplication.setFont(font)
        QApplication.instance().setProperty(SCALED_PROPERTY, False)


def test_exports_follow_presentation(qtbot, window, tmp_path) -> None:
    """PNG and SVG show the map as the screen does: in presentation mode, larger markers and text."""
    from tests.ui.test_window import png_facts

    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    drawings = {}
    try:
        for on in (False, True):
            window.panes.teaching.presentation_action.setChecked(on)
            svg = tmp_path / f"map-{on}.svg"
            png = tmp_path / f"map-{on}.png"
            assert window.panes.map.exports.export_to(str(svg)) and window.panes.map.exports.export_to(str(png), 1200)
            assert png_facts(png)[0] == 1200
            drawings[on] = svg.read_text(encoding="utf-8")
            canvas = window.panes.map.view.canvas
            areas = canvas.export_text_areas
            # Each of the legend's lines at least as tall as the axis title: as readable in the picture.
            line = areas["legend names"].height() / len(canvas.legend_entries())
            assert line >= areas["bottom axis title"].height(), (line, areas)
    finally:
        window.panes.teaching.presentation_action.setChecked(False)
    # The rings' radius in the drawing: 7.5 pixels, or 7.5 x 1.4.
    assert 'r="7.5" fill="none"' in drawings[False]
    assert f'r="{7.5 * PRESENTATION_SCALE:g}" fill="none"' in drawings[True]
