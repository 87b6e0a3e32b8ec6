"""Presentation mode on a 1024x640 laptop, the Directions tab: the tables' titles are read, not cut.

Seen in a real window: the ends' titles were cut at both edges ("est: toward the first",
":: toward the secon"), the header's centred text clipped with no mark and no way to read it whole.
A title wider than its column now ends in "..." with its start readable, and says itself whole in
its tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget

from embedexplorer.jobs.direction_jobs import DIRECTION

from .conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle
from .test_fit_and_presentation import at_size

HEADER_MARGIN = 8  # the style's room on either side of a header's text, at least


def readable(table: QTableWidget, column: int) -> bool:
    """The column's title is drawn whole, or elided on its right with the whole title in its tooltip."""
    header = table.horizontalHeader()
    item = table.horizontalHeaderItem(column)
    title = item.text()
    if header.fontMetrics().horizontalAdvance(title) + 2 * HEADER_MARGIN <= header.sectionSize(column):
        return True
    return header.textElideMode() == Qt.TextElideMode.ElideRight and item.toolTip() == title


def test_directions_titles_are_readable_at_1024x640_in_presentation(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    pane = window.panes.directions_pane
    with qtbot.waitSignal(answers(window, DIRECTION).ready, timeout=ANSWER_TIMEOUT_MS * 3):
        window.right.setCurrentWidget(pane)
    window.panes.teaching.presentation_action.trigger()  # Ctrl+Shift+P
    try:
        at_size(qtbot, window, 1024, 640)
        window.right.setCurrentWidget(pane)
        settle()
        narrow = []
        for table in (pane.low_table, pane.high_table, pane.words_table, pane.baseline_table):
            for column in range(table.columnCount()):
                if not readable(table, column):
                    narrow.append(
                        (table.horizontalHeaderItem(column).text(), table.horizontalHeader().sectionSize(column))
                    )
        assert not narrow, narrow
        # The case seen: the ends' titles are wider than their columns here (so the check above had work to do).
        header = pane.low_table.horizontalHeader()
        assert header.fontMetrics().horizontalAdvance("lowest: toward the first side") > header.sectionSize(0)
    finally:
        window.panes.teaching.presentation_action.trigger()
