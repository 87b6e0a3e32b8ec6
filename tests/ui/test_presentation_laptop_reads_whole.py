"""Presentation mode (Ctrl+Shift+P) on a 1024x640 laptop: what the left column and the panes say is read whole.

Seen in a real window (Xvfb and openbox) with "monday" typed and "tuesday" to compare with:
the cosine answer broke a word in the middle ("cosine(monda" / "y (id 6,928), ...").
"""

from __future__ import annotations

import pytest

from embedexplorer.jobs.table_jobs import COSINE
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle, type_text
from tests.ui.test_click_and_read import tip_text
from tests.ui.test_every_size import at_size

MORE = "…"


@pytest.fixture
def presenting_monday(qtbot, window):  # type: ignore[no-untyped-def]
    """The bundled model, "monday" typed, "tuesday" to compare with, presentation on at 1024x640."""
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClicks(window.panes.neighbours_pane.compare_input, "tuesday")
    at_size(qtbot, window, 1024, 640)
    window.panes.teaching.presentation_action.trigger()  # Ctrl+Shift+P
    try:
        at_size(qtbot, window, 1024, 640)
        settle()
        yield window
    finally:
        window.panes.teaching.presentation_action.trigger()


def broken_words(text: str, lines: list[str]) -> list[str]:
    """The drawn lines that end inside a word of ``text`` with no "…" to say the rest is elsewhere."""
    broken, at = [], 0
    for line in lines:
        if line.endswith(MORE):
            break  # the rest is in the tooltip
        at = text.index(line, at) + len(line)
        if at < len(text) and not text[at].isspace():
            broken.append(line)
    return broken


@pytest.mark.usefixtures("bundled_type")
def test_the_cosine_answer_breaks_between_words(presenting_monday) -> None:  # type: ignore[no-untyped-def]
    label = presenting_monday.panes.neighbours_pane.compare_result
    text, lines = label.text(), label.shown_lines()
    assert "cosine(monday (id 6,928)" in text
    assert broken_words(text, lines) == [], lines
    if label.is_shortened():
        assert lines[-1].endswith(MORE) and tip_text(label) == text, lines
    assert lines[0].startswith("0.750 ="), lines  # the answer itself stays in sight


@pytest.mark.usefixtures("bundled_type")
def test_the_neighbours_title_stays_whole_when_presentation_starts_on_a_larger_window(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    # As the app starts with presentation remembered: turned on at its first, larger size, then fitted to
    # the laptop's screen. The splitter took the loss from both sides and left the title "Nearest to monday (id …".
    open_model(qtbot, window, "bundled")
    at_size(qtbot, window, 1366, 768)
    window.panes.teaching.presentation_action.trigger()
    try:
        at_size(qtbot, window, 1024, 640)
        type_text(qtbot, window, "monday")  # the title comes after the window's last resize
        window.right.setCurrentWidget(window.panes.row_view)
        qtbot.wait(100)
        settle()
        heading = window.panes.neighbours_pane.heading
        assert heading.shown_text() == "Nearest to monday (id 6,928)"
        assert not heading.is_shortened(), (window.splitter.sizes(), heading.width())
        # The map keeps at least its least width: the title's room came from what it could spare.
        assert window.right.width() >= window.right.minimumSizeHint().width()
    finally:
        window.panes.teaching.presentation_action.trigger()


@pytest.mark.usefixtures("bundled_type")
def test_the_status_bar_shortens_its_facts_between_them_and_holds_them_whole_in_its_tooltip(presenting_monday) -> None:  # type: ignore[no-untyped-def]
    # It ended "...; 512 positi…": a fact cut in the middle of a word, and the tooltip without it.
    label = presenting_monday.facts_label
    text, shown = label.text(), label.shown_text()
    assert "512 position rows" in text
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    if shown != text:
        kept = shown.removesuffix(MORE).rstrip()
        assert shown.endswith(MORE) and text.startswith(kept), shown
        assert text[len(kept)] in ";,", shown  # the facts it shows are whole: it stops between two
    assert "512 position rows" in label.toolTip()  # what is left out is one hover away
