"""The Directions pane through real widgets: alone with a real answer, then in the window with its worker."""

from __future__ import annotations

from html import unescape

from PySide6.QtCore import Qt

from embedexplorer.core.directions.direction import DEFAULT_PAIRS, DirectionSpec
from embedexplorer.core.directions.report import direction_report
from embedexplorer.jobs.direction_jobs import DIRECTION, DirectionRequest
from embedexplorer.jobs.map_jobs import WORD_MAP
from embedexplorer.ui.panes.directions_pane import DirectionsPane
from embedexplorer.ui.style import fonts

from ..images import png_facts
from .conftest import ANSWER_TIMEOUT_MS, answers, open_model


def click_cell(qtbot, table, row: int) -> None:  # type: ignore[no-untyped-def]
    rect = table.visualItemRect(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_pane_asks_for_what_is_typed(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = DirectionsPane()
    qtbot.addWidget(pane)
    with qtbot.waitSignal(pane.requested) as asked:
        qtbot.mouseClick(pane.go, Qt.MouseButton.LeftButton)
    request = asked.args[0]
    assert isinstance(request, DirectionRequest)
    assert request.spec == DirectionSpec(pairs=DEFAULT_PAIRS)
    assert request.words == ("nurse", "doctor", "actress", "actor")

    pane.groups_button.click()
    pane.from_box.setText("monday, tuesday")
    pane.to_box.setText("january")
    with qtbot.waitSignal(pane.requested) as asked:
        qtbot.keyClick(pane.to_box, Qt.Key.Key_Return)
    assert asked.args[0].spec == DirectionSpec(groups=(("monday", "tuesday"), ("january",)))

    pane.pairs_button.click()
    pane.pairs_box.setText("he->she, king")
    with qtbot.assertNotEmitted(pane.requested):
        qtbot.mouseClick(pane.go, Qt.MouseButton.LeftButton)
    assert "'king' is not a pair" in unescape(pane.heading.text())


def test_pane_shows_a_real_answer(qtbot, minilm_table) -> None:  # type: ignore[no-untyped-def]
    pane = DirectionsPane()
    qtbot.addWidget(pane)
    pane.show()
    report = direction_report(minilm_table, DirectionSpec(pairs=DEFAULT_PAIRS), ("nurse", "unbelievably"), 12)
    pane.show_report(report)
    # Each token as the window draws text: a character no font on this machine has is U+XXXX
    # (MiniLM's end holds 女; whether it is drawn depends on the machine's fonts, not the pane).
    assert pane.end_tokens(highest=True) == [fonts.for_window(t.token) for t in report.top]
    assert pane.end_tokens(highest=False) == [fonts.for_window(t.token) for t in report.bottom]
    assert pane.words_table.rowCount() == 2 + 6  # the learner's words, then the six examples
    assert pane.words_table.item(0, 3).text() == f"{report.words[0].percentile:.1f}%"
    # A word of several tokens says which piece answered, in its tooltip and in the heading.
    assert "answers for it" in pane.words_table.item(1, 0).toolTip()
    assert "answers for it" in pane.heading.text()
    summary = report.baseline_summary()
    assert pane.baseline_table.item(0, 0).text().startswith("spread")
    assert pane.baseline_table.item(0, 1).text().startswith(f"{report.spread.std:.3f}")
    assert pane.baseline_table.item(0, 2).text() == f"{summary['std']['random_mean']:.3f}"  # type: ignore[index]
    assert f"#{report.best.index}" in pane.best_line.text()  # type: ignore[union-attr]
    # A click at an end looks the token up: its text as a person would type it (no "##").
    with qtbot.waitSignal(pane.token_activated) as clicked:
        click_cell(qtbot, pane.high_table, 0)
    assert clicked.args[0] == minilm_table.vocabulary.text_of(report.top[0].id).removeprefix("##")


def test_the_words_scores_read_as_the_ends_and_the_command_line_print_them(qtbot, minilm_table) -> None:  # type: ignore[no-untyped-def]
    """The words table printed "0.407" where the ends beside it and ``direction`` print "+0.407"."""
    pane = DirectionsPane()
    qtbot.addWidget(pane)
    report = direction_report(minilm_table, DirectionSpec(pairs=DEFAULT_PAIRS), ("nurse", "actress"), 12)
    pane.show_report(report)
    places = report.words + report.examples
    assert any(place.score > 0 for place in places)  # a score the sign tells apart
    lines = report.text_lines()
    start = lines.index("your words:") + 1
    printed = [line.split()[2] for line in lines[start : start + len(report.words)]]
    shown = [pane.words_table.item(row, 2).text() for row in range(len(places))]
    assert shown == [f"{place.score:+.3f}" for place in places]
    assert shown[: len(printed)] == printed  # the learner's words exactly as the command line prints them


def test_in_the_window(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    pane = window.panes.directions_pane
    # Showing the tab scores the default pairs in the long lane.
    with qtbot.waitSignal(answers(window, DIRECTION).ready, timeout=ANSWER_TIMEOUT_MS * 3) as answered:
        window.right.setCurrentWidget(pane)
    report = answered.args[0]
    assert report.label == "he\u2192she, king\u2192queen, man\u2192woman"
    assert "she" in pane.end_tokens(highest=True)
    assert "he" in pane.end_tokens(highest=False)

    # Bad input in the window: one sentence in the pane.
    pane.pairs_box.setText("king->king")
    with qtbot.waitSignal(answers(window, DIRECTION).failed, timeout=ANSWER_TIMEOUT_MS):
        qtbot.mouseClick(pane.go, Qt.MouseButton.LeftButton)
    assert "pair of the same word" in unescape(pane.heading.text())

    # Clicking a token at an end looks it up in the text box.
    pane.show_report(report)
    click_cell(qtbot, pane.high_table, 0)
    assert window.panes.token_pane.input.text() == report.top[0].text

    # Map > Axes from directions: the family words on two directions, the axes named by their pairs.
    x, y = DirectionSpec(pairs=(("he", "she"),)), DirectionSpec(pairs=(("man", "king"),))
    with qtbot.waitSignal(answers(window, WORD_MAP).ready, timeout=ANSWER_TIMEOUT_MS * 3) as drawn:
        window.panes.map.view.request_axes(x, y)
    assert drawn.args[0].method == "directions"
    canvas = window.panes.map.view.canvas
    qtbot.waitUntil(lambda: canvas.plot.getAxis("bottom").labelText.startswith("cosine with he"))
    assert canvas.plot.getAxis("left").labelText.startswith("cosine with man")
    assert window.panes.map.view.axes == (x, y)
    assert "y: man\u2192king" in window.panes.map.view.canvas.caption_html

    # Exported pictures name the axes' pairs too.
    svg, png = tmp_path / "axes.svg", tmp_path / "axes.png"
    assert window.panes.map.exports.export_to(str(svg)) and window.panes.map.exports.export_to(str(png), 800)
    drawing = svg.read_text(encoding="utf-8")
    assert ">cosine with he\u2192she</text>" in drawing and ">cosine with man\u2192king</text>" in drawing
    width, _height, colours = png_facts(png)
    assert width == 800 and colours > 10
