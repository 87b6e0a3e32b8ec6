"""The Vocabulary health tab, used as a person uses it, on the bundled MiniLM."""

from __future__ import annotations

import csv

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog

from embedexplorer.jobs.health_jobs import HEALTH
from embedexplorer.jobs.table_jobs import NEIGHBOURS
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, type_text

HEALTH_TIMEOUT_MS = ANSWER_TIMEOUT_MS * 6


def _click_row(qtbot, pane, row: int) -> None:  # type: ignore[no-untyped-def]
    rect = pane.table.visualRect(pane.model.index(row, 2))
    qtbot.mouseClick(pane.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _map_action(window, text: str):  # type: ignore[no-untyped-def]
    for action in window.menuBar().actions():
        if action.text().replace("&", "") == "Map":
            return next(a for a in action.menu().actions() if a.text().replace("&", "") == text)
    raise AssertionError("no Map menu")


def test_health_tab_ranks_selects_filters_colours_and_exports(qtbot, window, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    pane = window.panes.health_pane
    # Turning to the tab checks the vocabulary, on the long lane, with progress.
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(pane)
    first = pane.model.index(0, 2).data()
    assert first.startswith("[unused"), first
    assert "unreachable" in pane.model.index(0, 4).data(Qt.ItemDataRole.UserRole + 1)
    # A click on the first token makes it the selection: the neighbours follow.
    token_id = int(pane.model.index(0, 1).data())
    with qtbot.waitSignal(
        answers(window, NEIGHBOURS).ready,
        timeout=ANSWER_TIMEOUT_MS,
        check_params_cb=lambda answer: answer.result.query is not None and answer.result.query.id == token_id,
    ):
        _click_row(qtbot, pane, 0)
    assert window.state.selection.token_id == token_id
    # Ticking a reason shows only the tokens that carry it.
    total = pane.model.rowCount()
    menu = pane.filter_button.menu()

    def pick() -> None:  # in the open menu, a person picks "unreachable"; the menu closes
        menu.setActiveAction(pane.filters["unreachable"])
        qtbot.keyClick(menu, Qt.Key.Key_Return)
        if menu.isVisible():
            menu.close()

    QTimer.singleShot(300, pick)
    qtbot.mouseClick(pane.filter_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not menu.isVisible(), timeout=ANSWER_TIMEOUT_MS)
    shown = pane.model.rowCount()
    assert pane.shown_count.text() == f"{shown:,} of {total:,} tokens shown"
    assert 994 <= shown < total
    assert all("unreachable" in pane.model.index(r, 4).data(Qt.ItemDataRole.UserRole + 1) for r in range(0, shown, 97))
    # Map > Colour by health colours the map by the score; the caption says so.
    _map_action(window, "Colour by health").trigger()
    qtbot.waitUntil(lambda: window.state.map_change is not None, timeout=ANSWER_TIMEOUT_MS)
    assert "health score" in window.state.map_change.sentence()
    assert window.panes.map.view.canvas.change is window.state.map_change
    # Export: the person names a CSV file in the save dialog.
    target = tmp_path / "health.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "CSV (*.csv)"))
    qtbot.mouseClick(pane.export_button, Qt.MouseButton.LeftButton)
    lines = target.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# EmbedExplorer vocabulary health"
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert len(rows) == 30522 and rows[0]["token"].startswith("[unused")
    # Unticking the map entry gives the map its families back.
    _map_action(window, "Colour by health").trigger()
    assert window.state.map_change is None


def test_stop_keeps_what_was_there(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    pane = window.panes.health_pane
    window.right.setCurrentWidget(pane)
    qtbot.waitUntil(lambda: pane.stop_button.isEnabled(), timeout=ANSWER_TIMEOUT_MS)
    qtbot.mouseClick(pane.stop_button, Qt.MouseButton.LeftButton)
    assert "Stopped" in pane.message.text() and pane.check_button.isEnabled()
    # Checking again answers in full.
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        qtbot.mouseClick(pane.check_button, Qt.MouseButton.LeftButton)
    assert pane.model.rowCount() == 30522


def test_health_needs_a_model_first(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    pane = window.panes.health_pane
    window.right.setCurrentWidget(pane)
    qtbot.mouseClick(pane.check_button, Qt.MouseButton.LeftButton)
    assert pane.message.isVisible() and "Open a model first" in pane.message.text()


def test_the_reasons_filter_is_remembered(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from embedexplorer.app import create_window

    settings = str(tmp_path / "settings.ini")
    first = create_window(settings)
    qtbot.addWidget(first)
    first.show()
    pane = first.panes.health_pane
    first.right.setCurrentWidget(pane)
    pane.filters["short"].trigger()
    qtbot.mouseClick(pane.flagged_only, Qt.MouseButton.LeftButton)
    first.close()
    second = create_window(settings)
    qtbot.addWidget(second)
    again = second.panes.health_pane
    assert again._reasons() == {"short"} and again.flagged_only.isChecked()
    assert again.filter_button.text() == "Reas&ons: short"
    second.close()


def test_the_histogram_says_its_whole_title_on_a_small_screen(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    # At 1024x640 the histogram is narrow: its title and its axis titles are drawn whole, never cut.
    window.resize(1024, 640)
    open_model(qtbot, window, "bundled")
    pane = window.panes.health_pane
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(pane)
    qtbot.wait(50)  # the layout settles
    plot = pane.histogram.getPlotItem()
    drawn_width = plot.sceneBoundingRect().width()
    title = plot.titleLabel.item
    assert title.toPlainText() == "every token's score"
    assert title.boundingRect().width() <= drawn_width
    bottom = plot.getAxis("bottom")
    assert "drawn at" in bottom.labelString()
    assert bottom.label.boundingRect().width() <= drawn_width


def test_the_tab_and_the_command_line_rank_the_same_tokens_alike(qtbot, window, capsys) -> None:  # type: ignore[no-untyped-def]
    """Both front doors: the tab's first twenty rows are ``embedexplorer health --top 20``'s tokens, in its
    order, with its scores (as the tab rounds them) and its reasons."""
    import json

    from embedexplorer.cli import main
    from embedexplorer.ui.panes.health_table import REASONS_ROLE

    open_model(qtbot, window, "bundled")
    pane = window.panes.health_pane
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(pane)
    assert main(["health", "--model", "bundled", "--top", "20", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["tokens"]
    assert len(listed) == 20 and pane.model.rowCount() >= 20
    cell = pane.model.index
    shown = [(int(cell(row, 1).data()), cell(row, 3).data(), cell(row, 4).data(REASONS_ROLE)) for row in range(20)]
    assert shown == [(t["id"], f"{t['score']:.2f}", list(t["reasons"])) for t in listed]


def test_a_token_chosen_in_the_list_is_not_taken_for_a_token_of_the_text(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Text "the river bank", then a click on the tab's first token ([unusedN], which no text produces):
    the Layers tab said "[unusedN] at place 1 of 'the river bank'" and Run would have run the text's
    first token under that name; the chip of the text's first token stayed lit, so a click on it did nothing."""
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "the river bank")
    chips = window.panes.token_pane
    first_chip = chips.chip_tokens[0]
    assert chips.selected_index() == 0
    pane = window.panes.health_pane
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(pane)
    token = pane.model.index(0, 2).data()
    assert token.startswith("[unused"), token
    _click_row(qtbot, pane, 0)
    assert window.state.selection.token == token
    layers = window.panes.layers_pane
    assert layers.request() is None and not layers.run_button.isEnabled()  # nothing of the text to run for it
    # A lesson saved now names no place of the text (it named place 1, the text's "the").
    assert window.panes.teaching.current_lesson().first_place is None
    heading = layers.heading.text()
    assert token in heading and "not a token of the text" in heading and "place 1" not in heading
    # The text's chips light none of theirs: a click on the first chip looks it up again.
    assert chips.selected_index() is None
    rect = chips.chip_list.visualItemRect(chips.chip_list.item(0))
    qtbot.mouseClick(chips.chip_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.state.selection.token_id == first_chip.id and window.state.selection.place == 0
    assert layers.request() is not None and "place 1" in layers.heading.text()
    assert window.panes.teaching.current_lesson().first_place == 1
