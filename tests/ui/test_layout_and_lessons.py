"""A layout that fits a laptop, the fixes of issue 12, and the teacher's tools (presentation, lessons)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from embedexplorer.jobs.table_jobs import COSINE, LOAD, NEIGHBOURS, TOKENS, NeighboursRequest
from embedexplorer.ui.window.help_menu import READING_HELP
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, lesson_opened_elsewhere, open_model, settle, type_text


def test_eight_neighbour_rows_at_1366x768_and_everything_fits_1024x640(qtbot, window) -> None:
    window.resize(1366, 768)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    settle()
    assert window.panes.neighbours_pane.visible_rows() >= 8
    # The smallest the layout can be, guess mode and its strip included, fits a 1024x640 screen.
    window.panes.exercises.guess_action.setChecked(True)
    settle()
    smallest = window.minimumSizeHint()
    assert smallest.width() <= 1024 and smallest.height() <= 640, smallest
    window.panes.exercises.guess_action.setChecked(False)


def test_window_never_opens_larger_than_the_screen(qtbot, window) -> None:
    free = (window.screen() or QGuiApplication.primaryScreen()).availableGeometry()
    window.resize(free.width() + 500, free.height() + 400)
    window.move(free.left() + 300, free.top() + 200)
    window.fit_to_screen()
    assert window.width() <= free.width() and window.height() <= free.height()
    assert free.contains(window.geometry().topLeft())


def test_splitters_are_remembered(qtbot, tmp_path) -> None:
    from embedexplorer.app import create_window

    settings = str(tmp_path / "settings.ini")
    first = create_window(settings)
    qtbot.addWidget(first)
    free = (first.screen() or QGuiApplication.primaryScreen()).availableGeometry()
    first.resize(min(1300, free.width()), min(800, free.height()))
    first.show()
    settle()
    total = sum(first.splitter.sizes())
    first.splitter.setSizes([total // 2, total - total // 2])
    settle()
    wanted = first.splitter.sizes()
    first.close()
    second = create_window(settings)
    qtbot.addWidget(second)
    second.show()
    settle()
    restored = second.splitter.sizes()
    assert all(abs(a - b) <= 4 for a, b in zip(restored, wanted, strict=True)), (restored, wanted)
    second.close()


def test_new_query_scrolls_to_the_top_and_clears_the_selection(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    window.panes.neighbours_pane.set_k(60)
    table = window.panes.neighbours_pane.table
    with qtbot.waitSignal(answers(window, NEIGHBOURS).ready, timeout=ANSWER_TIMEOUT_MS):
        type_text(qtbot, window, "monday")
    qtbot.waitUntil(lambda: table.rowCount() == 60, timeout=ANSWER_TIMEOUT_MS)
    table.selectRow(40)
    table.scrollToBottom()
    assert table.verticalScrollBar().value() > 0
    type_text(qtbot, window, "paris")
    assert table.verticalScrollBar().value() == 0
    assert table.selectedItems() == []


def test_row_lines_keep_their_end_at_any_width(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    view = window.panes.row_view
    window.resize(1400, 800)
    for width in (1000, 520, 250):
        window.splitter.setSizes([width, 1400 - width])
        settle()
        lines = view.numbers.text().split("<br>")
        assert len(lines) == 3
        assert all(line.endswith("more]") for line in lines), (width, lines)
        for line in lines:  # the whole line, its end included, is inside the label
            assert view.numbers.fontMetrics().horizontalAdvance(line.replace("&nbsp;", " ")) <= view.numbers.width()
    assert "[" in view.numbers.toolTip() and view.numbers.toolTip().count("more]") == 3


def test_tab_leaves_the_neighbour_table(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    table = window.panes.neighbours_pane.table
    window.activateWindow()
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is window.panes.neighbours_pane.compare_input
    window.panes.token_pane.input.setFocus()
    qtbot.keyClick(window.panes.token_pane.input, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is window.panes.token_pane.chip_list


def test_clearing_the_text_clears_row_neighbours_cosine_and_star(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.neighbours_pane.compare_input.setText("tuesday")
    assert "= cosine(monday (id 6,928), tuesday (id 9,857))" in window.panes.neighbours_pane.compare_result.text()
    assert window.panes.map.view.canvas._query_item.data.size == 1
    with qtbot.waitSignal(answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.input.clear()
    assert window.panes.row_view.title.text() == "Select a token to see its row."
    assert window.panes.row_view.numbers.text() == ""
    assert window.panes.neighbours_pane.table.rowCount() == 0
    assert window.panes.neighbours_pane.compare_result.text() == ""
    assert window.panes.map.view.canvas._query_item.data.size == 0
    # An answer still on its way for the old token is dropped, not shown.
    window.client.ask(NEIGHBOURS, NeighboursRequest(6928, 8), window.panes.neighbours_pane)
    window.client.cancel(NEIGHBOURS, window.panes.neighbours_pane)
    settle()
    assert window.panes.neighbours_pane.table.rowCount() == 0


def test_a_failed_load_leaves_the_model_in_use_in_the_box(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    with qtbot.waitSignal(answers(window, LOAD).failed, timeout=ANSWER_TIMEOUT_MS):
        window.open_model(str(tmp_path / "no-such-model"))
    assert window.model_bar.box.currentText() == "bundled"
    assert "No such folder" in window.message_bar.text()


def test_loading_text_sits_beside_the_bar_not_in_it(qtbot, window) -> None:
    window.model_bar.pending = "openai-community/gpt2"
    window.model_bar._on_progress(0.4, "Mapping the embedding table")
    assert window.progress.format() == "%p%"
    assert window.facts_label.text() == "Opening openai-community/gpt2: Mapping the embedding table"


def test_help_explains_every_mark(qtbot) -> None:
    for word in ("<b>_</b>", "<b>##</b>", "<b>star</b>", "<b>rings</b>", "<b>k</b>", "<b>baseline tick</b>",
                 "<b>Zoom</b>", "<b>reset</b>"):  # fmt: skip
        assert word in READING_HELP, word


# ----- for teachers ---------------------------------------------------------------------------------
def test_presentation_mode_is_larger_and_remembered(qtbot, tmp_path) -> None:
    from embedexplorer.app import create_window

    settings = str(tmp_path / "settings.ini")
    base = QApplication.font().pointSizeF()
    window = create_window(settings)
    qtbot.addWidget(window)
    try:
        window.panes.teaching.presentation_action.trigger()
        settle()
        assert QApplication.font().pointSizeF() == base * 1.4
        assert window.panes.row_view.title.font().pointSizeF() == base * 1.4  # panes follow the application
        window.close()
        again = create_window(settings)
        qtbot.addWidget(again)
        assert again.panes.teaching.presentation_action.isChecked()
        assert QApplication.font().pointSizeF() == base * 1.4
        again.panes.teaching.presentation_action.trigger()
        assert QApplication.font().pointSizeF() == base
        again.close()
    finally:
        font = QApplication.font()
        font.setPointSizeF(base)
        QApplication.setFont(font)
        QApplication.instance().setProperty("embedexplorerPresentation", False)


def test_save_and_open_a_lesson(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "the river bank")
    window.panes.token_pane.select(2)
    window.panes.neighbours_pane.set_k(12)
    window.panes.map.view.set_hidden_families({"days"})
    window.panes.exercises.two_texts.pane.inputs[1].setText("my bank account")
    window.panes.exercises.two_texts.pane.request_tokens()
    qtbot.waitUntil(lambda: window.panes.exercises.two_texts.pane.places()[1] == 1, timeout=ANSWER_TIMEOUT_MS)
    lesson = tmp_path / "bank.lesson.json"
    assert window.panes.teaching.save_to(str(lesson))
    data = json.loads(lesson.read_text(encoding="utf-8"))
    assert data["model"] == "bundled" and data["k"] == 12 and data["hidden_families"] == ["days"]
    assert data["texts"] == {"first": "the river bank", "second": "my bank account"}
    assert data["selected_places"] == {"first": 3, "second": 2}
    assert len(data["map_view"]["x"]) == 2

    other = lesson_opened_elsewhere(qtbot, tmp_path, lesson)
    qtbot.waitUntil(lambda: other.panes.token_pane.selected_index() == 2, timeout=ANSWER_TIMEOUT_MS)
    assert other.panes.token_pane.text() == "the river bank"
    assert other.panes.neighbours_pane.k() == 12
    assert other.settings.hidden_families == ["days"]
    assert other.panes.exercises.two_texts.pane.texts() == ("the river bank", "my bank account")
    qtbot.waitUntil(lambda: other.panes.teaching.pending is None, timeout=ANSWER_TIMEOUT_MS)
    x, y = other.panes.map.view_range()
    assert x == tuple(data["map_view"]["x"]) and y == tuple(data["map_view"]["y"])
    other.close()


def test_a_lesson_for_a_missing_model_offers_the_download(qtbot, window, tmp_path) -> None:
    lesson = tmp_path / "gpt2.json"
    lesson.write_text(json.dumps({"embedexplorer_lesson": 1, "model": "someone/not-on-this-machine"}))
    assert not window.panes.teaching.open_from(str(lesson))
    assert "not on this computer" in window.message_bar.text()
    button = window.message_bar.action_button
    assert button.isVisibleTo(window) and button.text() == "Download"


def test_a_broken_lesson_file_is_one_clear_message(qtbot, window, tmp_path) -> None:
    lesson = tmp_path / "broken.json"
    lesson.write_text("{oops", encoding="utf-8")
    assert not window.panes.teaching.open_from(str(lesson))
    text = window.message_bar.text()
    assert text.startswith("The lesson was not opened. broken.json is not a lesson file: it is not valid JSON")
    assert "Traceback" not in text
