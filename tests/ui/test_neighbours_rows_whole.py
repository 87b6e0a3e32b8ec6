"""The neighbours list shows its eight rows whole, with no scrolling, at every size the window claims, framed.

Seen in a real window (Xvfb and openbox) at 1024x640 in presentation mode: the list showed 6 of
its 8 rows (rows 7 and 8 a scroll away) above the baseline's note and the Cosine with field, with
empty room under that field. A teacher projecting the window must see every neighbour at once,
the note whole, and the cosine answer's number. GNOME's and KDE's taller title bars left the eighth row
a scroll away there too (the window 48 pixels shorter than the screen).
"""

from __future__ import annotations

import pytest

from embedexplorer.jobs.table_jobs import COSINE
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle, type_text
from tests.ui.test_every_size import SIZES, at_size, problems

# What openbox's frame takes of a screen (measured with xdotool on 1024x640: the window is 1022x615):
# the title bar and the borders. A maximised window keeps the title bar alone.
FRAME_WIDTH, FRAME_HEIGHT, MAXIMISED_TITLE = 2, 25, 23
# GNOME's and KDE's title bars are taller (37 to 45 pixels): on a 1024x640 screen without a taskbar the
# window may get 48 pixels less than the screen's height.
TALL_TITLE_BAR = 48


def framed(width: int, height: int) -> tuple[int, int]:
    """The window's own size on a screen of ``width`` x ``height`` under the window manager."""
    if width >= 1600:  # the tests maximise on the largest screen
        return width, height - MAXIMISED_TITLE
    return width - FRAME_WIDTH, height - FRAME_HEIGHT


def window_sizes(width: int, height: int) -> list[tuple[int, int]]:
    """The window's sizes on that screen: under openbox's frame, unframed, and (on the smallest screen
    the window claims) under a tall title bar."""
    sizes = [framed(width, height), (width, height)]
    if (width, height) == (1024, 640):
        sizes.append((width, height - TALL_TITLE_BAR))
    return sizes


def rows_cut(table) -> list[str]:  # type: ignore[no-untyped-def]
    """What keeps a person from seeing every row of the list whole without scrolling."""
    found = []
    if table.verticalScrollBar().maximum() > 0:
        found.append(f"it scrolls by {table.verticalScrollBar().maximum()}")
    room = table.viewport().height()
    for row in range(table.rowCount()):
        foot = table.rowViewportPosition(row) + table.rowHeight(row)
        if foot > room:
            found.append(f"row {row + 1} ends at {foot} px of {room}")
    return found


@pytest.mark.usefixtures("bundled_type")
@pytest.mark.parametrize("screen", [*SIZES, (1280, 800)])
def test_every_neighbour_in_sight_with_the_note_whole(qtbot, window, gpt2_folder, screen) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, str(gpt2_folder))
    pane = window.panes.neighbours_pane
    type_text(qtbot, window, " river")
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClicks(pane.compare_input, " France")
    number = pane.compare_result.text().split(" ", 1)[0]
    assert pane.k() == 8
    try:
        for presentation in (False, True):
            window.panes.teaching.set_presentation(presentation)
            settle()
            for size in window_sizes(*screen):
                at_size(qtbot, window, *size)
                view = (size, "presentation" if presentation else "normal")
                assert pane.table.rowCount() == 8, view
                assert rows_cut(pane.table) == [], view
                # The note about the tick is read whole, nothing of it left to a tooltip.
                note = pane.baseline_label
                assert note.isVisible() and not note.is_shortened(), (view, note.shown_lines())
                # The Cosine with box is whole and its answer starts with the number.
                box = pane.compare_input
                assert box.isVisible() and box.height() >= box.sizeHint().height(), view
                assert pane.compare_result.shown_lines()[0].startswith(number), view
                assert problems(window) == [], view
    finally:
        window.panes.teaching.set_presentation(False)
