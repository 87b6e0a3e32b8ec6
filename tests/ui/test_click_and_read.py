"""Issue 26: the window as a learner clicks it and a class reads it (pointer moved first, then a click)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtTest import QTest

from embedexplorer.jobs.table_jobs import COSINE
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle, type_text
from tests.ui.dialogs import answer_next_dialog, focus_on


def dot_position(canvas, word: str) -> QPoint:  # type: ignore[no-untyped-def]
    """Where the dot of ``word`` is drawn, in the canvas viewport's pixels."""
    index = canvas.map.labels.index(word)
    view = canvas.plot.getViewBox()
    at = canvas.mapFromScene(view.mapViewToScene(pg.Point(*map(float, canvas.map.coords[index]))))
    return QPoint(at.x(), at.y())


def tip_text(widget) -> str:  # type: ignore[no-untyped-def]
    """A tooltip as read: its text without the paragraph that makes Qt wrap it to the screen."""
    from PySide6.QtGui import QTextDocumentFragment

    return QTextDocumentFragment.fromHtml(widget.toolTip()).toPlainText()


def typing_target(widget):  # type: ignore[no-untyped-def]
    """Where a key goes as a person types: an open popup (a completion list) takes the keyboard."""
    from PySide6.QtWidgets import QApplication

    return QApplication.activePopupWidget() or widget


def tick_box(check) -> QPoint:  # type: ignore[no-untyped-def]
    """The middle of a check box's square, where a hand clicks it."""
    from PySide6.QtWidgets import QStyle, QStyleOptionButton

    option = QStyleOptionButton()
    check.initStyleOption(option)
    return check.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, check).center()


def hover_then_click(qtbot, widget, at: QPoint) -> None:  # type: ignore[no-untyped-def]
    """As a hand does: move onto the point, let the window react (the dot grows), then click."""
    QTest.mouseMove(widget, at)
    qtbot.wait(300)
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=at)


def test_a_dot_the_pointer_rests_on_looks_its_word_up_when_clicked(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    settle()
    for word, spelled in (("tokyo", " Tokyo"), ("monday", " Monday")):
        at = dot_position(canvas, word)
        QTest.mouseMove(canvas.viewport(), QPoint(2, 2))  # the hand comes from elsewhere
        qtbot.wait(50)
        QTest.mouseMove(canvas.viewport(), at)
        qtbot.waitUntil(lambda: canvas.hovered is not None, timeout=ANSWER_TIMEOUT_MS)  # the dot grew
        with qtbot.waitSignal(window.panes.map.view.word_clicked, timeout=ANSWER_TIMEOUT_MS) as clicked:
            qtbot.wait(300)
            qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=at)
        assert clicked.args == [spelled]
        qtbot.waitUntil(lambda s=spelled: window.panes.token_pane.input.text() == s, timeout=ANSWER_TIMEOUT_MS)


def test_a_dot_under_a_ring_is_looked_up_too(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    type_text(qtbot, window, "monday")
    assert "tuesday" in canvas.ring_names  # a ring is drawn over tuesday's dot
    settle()
    with qtbot.waitSignal(window.panes.map.view.word_clicked, timeout=ANSWER_TIMEOUT_MS) as clicked:
        hover_then_click(qtbot, canvas.viewport(), dot_position(canvas, "tuesday"))
    assert clicked.args == [" Tuesday"]


# ----- the "Cosine with" answer: whole, or shortened with the whole text one hover away ----------
SIZES = [(1600, 1000), (1366, 768), (1024, 640)]


def lines_fit(label) -> list[str]:  # type: ignore[no-untyped-def]
    """The label's drawn lines, each checked against its width with the font's own metrics."""
    lines = label.shown_lines()
    metrics = QFontMetricsF(label.font())
    for line in lines:
        assert metrics.horizontalAdvance(line) <= label.contentsRect().width() + 0.5, line
    height = metrics.lineSpacing() * len(lines)
    assert height <= label.contentsRect().height() + 1, (height, label.contentsRect())
    return lines


def inside_window(widget, window) -> bool:  # type: ignore[no-untyped-def]
    top_left = widget.mapTo(window, QPoint(0, 0))
    return QRect(QPoint(0, 0), window.size()).contains(QRect(top_left, widget.size()))


def resize_to(qtbot, window, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    window.move(0, 0)
    window.resize(width, height)
    placement = window.row_placement
    qtbot.waitUntil(lambda: placement.compact == placement.wants_compact())
    settle()


@pytest.mark.parametrize("presentation", [False, True])
@pytest.mark.usefixtures("bundled_type")
def test_the_cosine_answer_is_whole_or_one_hover_away_at_every_size(qtbot, window, minilm_table, presentation) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "france")
    pane = window.panes.neighbours_pane
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClicks(pane.compare_input, "paris")
    rows = np.asarray(minilm_table.rows, dtype=np.float64)
    a, b = rows[minilm_table.query("france").id], rows[minilm_table.query("paris").id]
    number = f"{a @ b / np.linalg.norm(a) / np.linalg.norm(b):.3f}"  # plain numpy's cosine
    window.panes.teaching.presentation_action.setChecked(presentation)
    try:
        for width, height in SIZES:
            resize_to(qtbot, window, width, height)
            label = pane.compare_result
            assert label.isVisible() and inside_window(label, window), (width, height)
            shown = " ".join(lines_fit(label))
            assert number in shown, (width, height, shown)  # the answer itself is always in sight
            if label.is_shortened():
                assert shown.endswith("…") and tip_text(label) == label.text(), (width, height)
            else:
                assert shown.replace(" ", "") == label.text().replace(" ", ""), (width, height)
    finally:
        window.panes.teaching.presentation_action.setChecked(False)


@pytest.mark.usefixtures("bundled_type")
def test_gpt2_words_mean_the_same_token_in_every_box_and_each_box_names_it(qtbot, window, gpt2_folder, gpt2_table):
    from embedexplorer.core.directions.direction import side_token
    from embedexplorer.core.exercises.analogies import solve_analogy
    from embedexplorer.core.exercises.guess import guess_outcome
    from embedexplorer.core.tables.spelling import word_or_first_token, word_token
    from tests.core.test_guess import gpt2_id

    paris, france = gpt2_id("ĠParis"), gpt2_id("ĠFrance")
    # The engine's boxes: Guess first, Analogies, Cosine with, Directions read "France" as " France".
    assert word_token(gpt2_table, "France").id == word_or_first_token(gpt2_table, "France").id == france
    assert guess_outcome(gpt2_table, paris, "France").guess.id == france
    analogy = solve_analogy(gpt2_table, "Paris", "France", "Italy", words=True)
    assert (analogy.a.id, analogy.b.id, analogy.c.id) == (paris, france, gpt2_id("ĠItaly"))
    assert side_token(gpt2_table, "France").id == france  # Directions' example words
    # A word of several tokens: the same token and the same sentence in Cosine with and Directions.
    several = word_or_first_token(gpt2_table, "embeddings")
    assert (side_token(gpt2_table, "embeddings").id, side_token(gpt2_table, "embeddings").note) == (
        several.id, several.note)

    open_model(qtbot, window, str(gpt2_folder))
    type_text(qtbot, window, " Paris")
    pane = window.panes.neighbours_pane
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS) as answered:
        qtbot.keyClicks(pane.compare_input, "France")
    assert answered.args[0].b_id == france  # not "France" (Fra nce at a text's start)
    from safetensors.numpy import load_file

    wte = load_file(str(gpt2_folder / "model.safetensors"))["transformer.wte.weight"].astype(np.float64)
    cosine = wte[paris] @ wte[france] / np.linalg.norm(wte[paris]) / np.linalg.norm(wte[france])
    resize_to(qtbot, window, 1024, 640)  # the smallest laptop screen
    shown = " ".join(lines_fit(pane.compare_result))
    assert shown.startswith(f"{cosine:.3f} = cosine(_Paris") and "_France" in shown  # the number and both tokens
    assert f"_France (id {france:,})" in pane.compare_result.text()

    # A word of several tokens: the visible line says which token answered for it.
    from tests.gpt2_fixture import build_gpt2_tokenizer

    hf = build_gpt2_tokenizer()  # Hugging Face's own reading of the word inside a sentence
    pieces = hf.encode(" embeddings")
    spelled = " ".join(t.replace("Ġ", "_") for t in hf.tokenize(" embeddings"))
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS) as answered:
        pane.compare_input.setText("embeddings")
    assert answered.args[0].b_id == pieces[0]
    resize_to(qtbot, window, 1600, 1000)
    shown = " ".join(lines_fit(pane.compare_result))
    first = spelled.split()[0]
    assert f"{first} (id {pieces[0]:,}, first of {len(pieces)} tokens)" in shown, shown  # on the visible line
    note = f"'embeddings' is {len(pieces)} tokens here ({spelled}); the first, {first}, answers for it."
    assert note in pane.compare_result.text() and (note in shown or tip_text(pane.compare_result).endswith(note))


# ----- Analogies: a command line to paste, and no line left from an older answer ---------------------
def test_the_analogy_command_line_pastes_as_typed_and_a_failure_or_another_model_leaves_no_stale_line(
    qtbot, window, gpt2_folder
) -> None:
    import shlex

    from embedexplorer.jobs.exercise_jobs import ANALOGY

    open_model(qtbot, window, str(gpt2_folder))
    pane = window.panes.exercises.analogy.pane
    with qtbot.waitSignal(answers(window, ANALOGY).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.exercises.show_analogies()
    command = pane.command_line.text()  # what a learner selects and pastes into a terminal
    assert "&#" not in command and "&amp;" not in command
    assert shlex.split(command)[2:5] == [" king", " man", " woman"]  # GPT-2's words inside a sentence
    assert pane.inputs_line.text() and pane.expected_line.text()
    # A question that fails: its message alone, nothing of the answer before it.
    with qtbot.waitSignal(answers(window, ANALOGY).failed, timeout=ANSWER_TIMEOUT_MS):
        pane.inputs[0].setText("embeddings")  # several tokens: refused
        qtbot.keyClick(pane.inputs[0], Qt.Key.Key_Return)
    assert "one token is needed" in pane.heading.text()
    assert (pane.command_line.text(), pane.inputs_line.text(), pane.expected_line.text()) == ("", "", "")
    assert pane.tokens() == []
    # Another model: the old answer's lines go at once.
    pane.inputs[0].setText("king")
    with qtbot.waitSignal(answers(window, ANALOGY).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClick(pane.inputs[0], Qt.Key.Key_Return)
    assert pane.command_line.text()
    window.panes.exercises.analogy.close()
    open_model(qtbot, window, "bundled")
    assert (pane.command_line.text(), pane.tokens()) == ("", [])


# ----- Guess first: the completion list never covers the result, whose sentence is whole -------------
@pytest.mark.usefixtures("bundled_type")
def test_the_completion_list_closes_over_the_guess_result_and_the_sentence_is_whole(qtbot, window) -> None:
    from embedexplorer.jobs.exercise_jobs import COMPLETE, GUESS

    open_model(qtbot, window, "bundled")
    desk = window.panes.exercises
    desk.guess_action.setChecked(True)
    type_text(qtbot, window, "paris")
    bar = window.panes.guess_bar
    bar.input.setFocus()
    with qtbot.waitSignal(answers(window, COMPLETE).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClicks(bar.input, "fran")
    qtbot.waitUntil(bar.completions_open, timeout=ANSWER_TIMEOUT_MS)  # the list opens under the box, as it should
    # Typed on to the whole word and Enter at once, as a quick hand does: the list's answer for
    # the last letters is still to come when the guess is made.
    with qtbot.waitSignal(answers(window, GUESS).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClicks(typing_target(bar.input), "ce")
        qtbot.keyClick(typing_target(bar.input), Qt.Key.Key_Return)
    qtbot.wait(400)  # longer than the pause after which completions are asked for
    assert not bar.completions_open()
    resize_to(qtbot, window, 1024, 640)
    label = bar.result
    assert label.isVisible() and inside_window(label, window)
    shown = " ".join(lines_fit(label))
    assert "france is" in shown and ("cosine" in shown or tip_text(label) == label.text()), shown


# ----- the caption's figures are those of the families shown -------------------------------------------
def caption_figures(canvas) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    import re

    found = re.search(r"within a family (-?[\d.]+), between families (-?[\d.]+)", canvas.caption_html)
    assert found, canvas.caption_html
    return found.group(1), found.group(2)


def test_hiding_a_family_gives_the_caption_the_shown_families_figures(qtbot, window, minilm_table) -> None:
    import itertools

    open_model(qtbot, window, "bundled")
    canvas, panel = window.panes.map.view.canvas, window.panes.map.view.panel
    shown_map = canvas.map
    rows = np.asarray(minilm_table.rows, dtype=np.float64)
    points = [rows[list(ids)].mean(axis=0) for ids in shown_map.pieces]

    def by_hand(hidden: set[str]) -> tuple[str, str]:
        within, between = [], []
        keep = [i for i, f in enumerate(shown_map.family_of) if shown_map.families[f] not in hidden]
        for i, j in itertools.combinations(keep, 2):
            cosine = points[i] @ points[j] / np.linalg.norm(points[i]) / np.linalg.norm(points[j])
            (within if shown_map.family_of[i] == shown_map.family_of[j] else between).append(cosine)
        return f"{np.mean(within):.2f}", f"{np.mean(between):.2f}"

    assert caption_figures(canvas) == by_hand(set())
    hidden = {"days", "numbers"}
    for family in hidden:
        qtbot.mouseClick(panel.visibility[family], Qt.MouseButton.LeftButton, pos=tick_box(panel.visibility[family]))
    assert canvas.hidden == hidden
    assert by_hand(hidden) != by_hand(set())  # hiding them changes the figures at two decimals
    assert caption_figures(canvas) == by_hand(hidden)


# ----- the star's name is read over its rings, not under them -------------------------------------------
def rings_under(box, centres, radius: float) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    """The ring centres whose circle reaches into ``box``."""
    grown = box.adjusted(-radius, -radius, radius, radius)
    return [(x, y) for x, y in centres if grown.contains(QPointF(x, y))]


@pytest.mark.parametrize("word", ["tokyo", "paris", "monday", "cat"])
@pytest.mark.usefixtures("bundled_type")
def test_the_stars_name_lies_clear_of_its_rings_on_screen_and_in_the_svg(qtbot, window, tmp_path, word) -> None:
    import re

    from embedexplorer.ui.map.sizes import RING_SIZE

    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    type_text(qtbot, window, word)
    resize_to(qtbot, window, 1366, 768)
    view = canvas.plot.getViewBox()
    name = canvas._query_label
    box = name.mapRectToScene(name.boundingRect())
    rings = [view.mapViewToScene(QPointF(x, y)) for x, y in canvas.selection[2]]
    assert rings_under(box, [(p.x(), p.y()) for p in rings], RING_SIZE / 2) == [], word
    # The picture places it by the same rule, over its own pixels.
    target = tmp_path / "map.svg"
    assert window.panes.map.exports.export_to(str(target))
    drawing = target.read_text(encoding="utf-8")
    text = re.search(rf'<text x="([-0-9.]+)" y="([-0-9.]+)" fill="[^"]+" font-size="14">{re.escape(word)}</text>',
                     drawing)
    assert text, word
    circles = re.findall(r'<circle cx="([-0-9.]+)" cy="([-0-9.]+)" r="7.5" fill="none"', drawing)
    assert len(circles) == len(rings)
    metrics = QFontMetricsF(canvas.labels.font)
    left, baseline = float(text[1]), float(text[2])
    svg_box = QRectF(left, baseline - 14 * 0.8, metrics.horizontalAdvance(word) * 14 / metrics.height(), 14)
    assert rings_under(svg_box, [(float(x), float(y)) for x, y in circles], 7.5) == [], word


# ----- Tab reaches the family legend, and focus shows on chips, map and legend ---------------------------
def tab_until(qtbot, start, wanted, presses: int = 80) -> list:  # type: ignore[no-untyped-def]
    """Press Tab from ``start`` as a person does until ``wanted`` has the focus; the widgets passed on the way."""
    from PySide6.QtWidgets import QApplication

    start.setFocus()
    passed = []
    for _ in range(presses):
        focused = QApplication.focusWidget()
        passed.append(focused)
        if focused is wanted:
            return passed
        qtbot.keyClick(focused, Qt.Key.Key_Tab)
    raise AssertionError(f"{wanted!r} not reached with Tab")


def shows_focus(qtbot, widget, elsewhere) -> bool:  # type: ignore[no-untyped-def]
    """True when the widget looks different with the focus than without it."""
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(widget.hasFocus)
    focused = widget.grab().toImage()
    elsewhere.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: not widget.hasFocus())
    return focused != widget.grab().toImage()


def test_tab_reaches_every_family_in_order_and_focus_is_visible(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    panel, view = window.panes.map.view.panel, window.panes.map.view
    text = window.panes.token_pane.input
    passed = tab_until(qtbot, view.isolate_button, list(panel.highlight_buttons.values())[-1])
    rows = [w for family in panel.visibility for w in (panel.visibility[family], panel.highlight_buttons[family])]
    assert passed[1:] == rows  # each family's box, then its name, in the legend's order
    # Space on a focused name highlights that family, as a click does.
    qtbot.keyClick(panel.highlight_buttons["days"], Qt.Key.Key_Space)
    assert window.panes.map.view.canvas.highlighted == "days"
    # From the text, Tab reaches the map and the legend too.
    tab_until(qtbot, text, panel.visibility["countries"])
    for widget in (window.panes.token_pane.chip_list, window.panes.map.view.canvas, panel.highlight_buttons["cities"],
                   panel.visibility["cities"]):
        assert shows_focus(qtbot, widget, text), widget


# ----- MiniLM's token row is read at its own scale, not flattened under the LayerNorm line --------------
def test_the_token_row_keeps_its_scale_beside_the_layernorm_line(qtbot, window, minilm_table) -> None:
    from embedexplorer.jobs.table_jobs import ROW

    open_model(qtbot, window, "bundled")
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS) as shown:
        type_text(qtbot, window, "monday")
    resize_to(qtbot, window, 1600, 1000)
    row_view = window.panes.row_view
    if window.row_placement.compact:  # on its tab beside the map: looked at there
        window.right.setCurrentWidget(row_view)
    settle()
    answer = shown.args[0]
    assert answer.normalised and answer.combined is not None
    token_row = np.asarray(minilm_table.rows[minilm_table.query("monday").id], dtype=np.float64)
    layer_norm = np.asarray(answer.combined, dtype=np.float64)
    assert np.ptp(layer_norm) > 5 * np.ptp(token_row)  # why one scale would flatten the token row
    assert row_view.sum_on_right_axis and row_view.plot_widget.getPlotItem().getAxis("right").isVisible()
    low, high = row_view.plot_widget.getPlotItem().vb.viewRange()[1]
    assert np.ptp(token_row) >= 0.6 * (high - low)  # the token row fills its axis
    right_low, right_high = row_view._normalised_view.viewRange()[1]
    assert right_low <= layer_norm.min() and layer_norm.max() <= right_high
    drawn = row_view._curves["token"]
    assert drawn.zValue() > row_view._curves["sum"].zValue() and np.allclose(drawn.getData()[1], token_row)


def test_a_plain_sum_shares_the_rows_axis(qtbot, window, gpt2_folder) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    type_text(qtbot, window, " Paris")
    settle()
    assert not window.panes.row_view.sum_on_right_axis
    assert not window.panes.row_view.plot_widget.getPlotItem().getAxis("right").isVisible()


# ----- Guess first turned on after typing keeps the map's star and rings -----------------------------------
def test_guess_first_turned_on_after_typing_brings_back_star_and_rings(qtbot, window) -> None:
    from embedexplorer.jobs.exercise_jobs import GUESS

    open_model(qtbot, window, "bundled")
    answer = type_text(qtbot, window, "monday")  # a word first, as a learner does
    canvas = window.panes.map.view.canvas
    names = [n.token for n in answer.result.neighbours]
    assert canvas.selection[0] == "monday" and canvas.ring_names == names
    window.panes.exercises.guess_action.trigger()  # then Guess first
    assert canvas.selection[1] is None and canvas.ring_names == []  # nothing given away
    bar = window.panes.guess_bar
    bar.input.setText("tuesday")
    with qtbot.waitSignal(answers(window, GUESS).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClick(bar.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: canvas.selection[1] is not None, timeout=ANSWER_TIMEOUT_MS)
    assert canvas.selection[0] == "monday" and canvas.ring_names == names  # the reveal shows both
    window.panes.exercises.guess_action.trigger()  # and turned off again they stay
    settle()
    assert canvas.selection[0] == "monday" and canvas.ring_names == names
    # Turned on and off with no guess: the star and rings come back too.
    window.panes.exercises.guess_action.trigger()
    assert canvas.ring_names == []
    window.panes.exercises.guess_action.trigger()
    qtbot.waitUntil(lambda: canvas.ring_names == names, timeout=ANSWER_TIMEOUT_MS)


# ----- Words matching: typed at once, its error gone with the next map; the status bar says what is done -----
def menu_action(window, menu: str, text: str):  # type: ignore[no-untyped-def]
    return next(a for a in window.menu(menu).actions() if a.text() == text)


def answer_words_dialog(typed: str) -> None:
    """When the dialog opens: type where the focus is, as a person does, and press Enter."""
    from PySide6.QtWidgets import QApplication, QLineEdit

    from embedexplorer.ui.map.view import WordsDialog

    def answer(dialog: WordsDialog) -> None:
        field = QApplication.focusWidget()
        assert isinstance(field, QLineEdit) and dialog.isAncestorOf(field), "the pattern's field must have the focus"
        QTest.keyClicks(field, typed)
        QTest.keyClick(field, Qt.Key.Key_Return)

    answer_next_dialog(WordsDialog, answer)


def test_words_matching_is_typed_at_once_and_its_error_leaves_with_the_next_map(qtbot, window) -> None:
    from embedexplorer.jobs.map_jobs import WORD_MAP

    open_model(qtbot, window, "bundled")
    facts = window.facts_label.text()
    words = menu_action(window, "&Map", "Words &matching...")
    with qtbot.waitSignal(answers(window, WORD_MAP).failed, timeout=ANSWER_TIMEOUT_MS):
        answer_words_dialog("(unclosed")
        words.trigger()
    assert "could not be drawn" in window.message_bar.text()
    with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=ANSWER_TIMEOUT_MS) as drawn:
        answer_words_dialog("^day")
        words.trigger()
        # While it is computed, the status bar says what, and the model's facts stay as they were.
        assert window.statusBar().currentMessage() == "Computing the PCA map of rows matching /^day/..."
        assert window.facts_label.text() == facts
    assert all(label.startswith("day") for label in drawn.args[0].labels)
    settle()
    assert window.message_bar.text() == ""  # the error was about a map that is no longer the question
    assert window.statusBar().currentMessage() == "" and not window.progress.isVisible()
    assert window.facts_label.text() == facts


# ----- the lesson's note: written when saving, shown when opening; shortcuts for the lesson and furthest -------
def test_a_lessons_note_is_written_with_it_and_shown_when_it_opens(qtbot, window, tmp_path) -> None:
    import json

    from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QPlainTextEdit

    from embedexplorer.app import create_window
    from embedexplorer.jobs.table_jobs import LOAD

    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "bank")
    lesson = tmp_path / "river-bank.lesson.json"
    note = "Which bank is which? Guess before you look."

    def save_as(dialog: QFileDialog) -> None:
        name = dialog.findChild(QLineEdit, "fileNameEdit")  # where a person types the file's name
        focus_on(qtbot, name)
        name.selectAll()
        qtbot.keyClicks(name, str(lesson))
        answer_next_dialog(QInputDialog, write_note)
        qtbot.keyClick(name, Qt.Key.Key_Return)

    def write_note(dialog: QInputDialog) -> None:
        field = dialog.findChild(QPlainTextEdit)
        focus_on(qtbot, field)
        qtbot.keyClicks(field, note)
        dialog.accept()  # the OK button: Enter in a text of several lines starts a new line

    window.activateWindow()  # the keys go to the window in front, as on a desk
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    answer_next_dialog(QFileDialog, save_as)
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lesson.exists, timeout=ANSWER_TIMEOUT_MS)
    assert json.loads(lesson.read_text(encoding="utf-8"))["note"] == note

    other = create_window(str(tmp_path / "other.ini"))
    qtbot.addWidget(other)
    other.show()
    with qtbot.waitSignal(answers(other, LOAD).ready, timeout=ANSWER_TIMEOUT_MS * 3):
        assert other.panes.teaching.open_from(str(lesson))
    qtbot.waitUntil(lambda: other.message_bar.text() == f"Lesson: {note}", timeout=ANSWER_TIMEOUT_MS)
    assert other.message_bar.level == "info"
    other.close()


def test_furthest_family_and_the_lesson_have_shortcuts_of_their_own(qtbot, window) -> None:
    from PySide6.QtGui import QAction

    open_model(qtbot, window, "bundled")
    desk, teaching = window.panes.exercises, window.panes.teaching
    wanted = {desk.furthest_action: "Ctrl+Shift+F", teaching.save_action: "Ctrl+Shift+S",
              teaching.open_action: "Ctrl+Shift+L"}
    for action, keys in wanted.items():
        assert action.shortcut().toString() == keys, action.text()
    every = [a.shortcut().toString() for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    assert len(every) == len(set(every)), every  # no two actions share keys
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=ANSWER_TIMEOUT_MS)
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(desk.family_distances.isVisible, timeout=ANSWER_TIMEOUT_MS)
    desk.family_distances.close()


def controls(window) -> list:  # type: ignore[no-untyped-def]
    """Every control of the window a person can use now: buttons, boxes, lists, tables, tabs, the map."""
    from PySide6.QtWidgets import (
        QAbstractButton,
        QAbstractItemView,
        QAbstractSpinBox,
        QComboBox,
        QLineEdit,
        QTabBar,
        QWidget,
    )

    from embedexplorer.ui.map.canvas import MapCanvas

    kinds = (QAbstractButton, QAbstractItemView, QAbstractSpinBox, QComboBox, QLineEdit, QTabBar, MapCanvas)
    found = []
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, kinds) or not widget.isVisible() or not widget.isEnabled():
            continue
        if widget.window() is not window or isinstance(widget.parentWidget(), (QComboBox, QAbstractSpinBox)):
            continue  # a combo box's or spin box's own parts are reached with it
        if isinstance(widget, QLineEdit) and isinstance(widget.parentWidget(), QComboBox):
            continue
        if isinstance(widget.parentWidget(), (QLineEdit, QTabBar, QAbstractItemView)):
            continue  # a box's clear button (Escape clears), a tab bar's arrows, a table's corner
        if type(widget).__name__ in ("QScrollBar", "QHeaderView", "QToolBarExtension") or widget.objectName() == (
            "qt_toolbar_ext_button"
        ):
            continue
        found.append(widget)
    return found


def test_every_control_is_reached_with_tab_and_shows_its_focus(qtbot, window) -> None:
    from PySide6.QtWidgets import QApplication

    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    resize_to(qtbot, window, 1366, 768)
    wanted = controls(window)
    start = window.panes.token_pane.input
    start.setFocus()
    reached = []
    for _ in range(3 * len(wanted) + 20):
        focused = QApplication.focusWidget()
        reached.append(focused)
        qtbot.keyClick(focused, Qt.Key.Key_Tab)
    missing = [f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}" for w in wanted if w not in reached]
    assert missing == [], "\n".join(missing)
    elsewhere = window.panes.token_pane.input
    hidden_focus = [
        f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}" for w in wanted
        if w is not elsewhere and not shows_focus(qtbot, w, elsewhere)
    ]
    assert hidden_focus == [], "\n".join(hidden_focus)
