"""The Vocabulary health tab read whole at every size the window claims, presentation mode too.

Seen in a real window (Xvfb and openbox, the GPT-2-shaped folder) with presentation on at 1024x640:
the list beside the histogram ended at "scor" with no reason chips in sight, the histogram's red line
said "thresho", and the reasons column's header showed only its "r" (centred in a column wider than
the list's view).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt

from embedexplorer.jobs.health_jobs import HEALTH
from embedexplorer.ui.panes.health_table import REASONS_COLUMN
from tests.ui.conftest import answers, open_model, settle
from tests.ui.test_every_size import SIZES, at_size
from tests.ui.test_health_pane import HEALTH_TIMEOUT_MS

SCORE_COLUMN = 3
HEADER_PADDING = 8  # what a header section keeps around its text, at most


def _cut_parts(pane) -> list[str]:  # type: ignore[no-untyped-def]
    """What of the list and the histogram a person cannot read without scrolling the list sideways."""
    cut = []
    table, header = pane.table, pane.table.horizontalHeader()
    view_width = table.viewport().width()
    score_end = table.columnViewportPosition(SCORE_COLUMN) + table.columnWidth(SCORE_COLUMN)
    if score_end > view_width:
        cut.append(f"the score column ends at {score_end}, the list's view at {view_width}")
    # Each of those columns as wide as its cells need (the token's has a cap: GPT-2 has a run of 64 dashes).
    for column in (0, 1, SCORE_COLUMN):
        needs, has = table.sizeHintForColumn(column), table.columnWidth(column)
        if needs > has:
            cut.append(f"column {column} is {has} wide, its cells need {needs}")
    # The reasons header: where its section draws the word, by the alignment the model gives it.
    start, width = table.columnViewportPosition(REASONS_COLUMN), table.columnWidth(REASONS_COLUMN)
    title = str(pane.model.headerData(REASONS_COLUMN, Qt.Orientation.Horizontal))
    text_width = header.fontMetrics().horizontalAdvance(title)
    alignment = pane.model.headerData(REASONS_COLUMN, Qt.Orientation.Horizontal, Qt.ItemDataRole.TextAlignmentRole)
    left = alignment is not None and Qt.AlignmentFlag(int(alignment)) & Qt.AlignmentFlag.AlignLeft
    text_end = start + (HEADER_PADDING + text_width if left else (width + text_width) // 2)
    if text_end > view_width:
        cut.append(f"the {title!r} header ends at {text_end}, the list's view at {view_width}")
    # The histogram's red line says what it is, inside the plot.
    plot = pane.histogram.getPlotItem()
    lines = [item for item in plot.items if isinstance(item, pg.InfiniteLine)]
    assert len(lines) == 1, plot.items
    drawn = plot.getViewBox().sceneBoundingRect().adjusted(-1, -1, 1, 1)
    label = lines[0].label
    if not drawn.contains(label.sceneBoundingRect()):
        cut.append(f"{label.toPlainText()!r} at {label.sceneBoundingRect()}, the plot at {drawn}")
    return cut


def test_the_list_and_the_threshold_read_whole_at_every_size(qtbot, window, gpt2_folder) -> None:  # type: ignore[no-untyped-def]
    # GPT-2's list, as seen: its suspicious tokens are long ("-+-+-+-+", runs of dashes), its reasons many.
    open_model(qtbot, window, str(gpt2_folder))
    pane = window.panes.health_pane
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(pane)
    assert pane.model.rowCount() > 0
    found = {}
    try:
        for presentation in (False, True):
            window.panes.teaching.set_presentation(presentation)
            for width, height in SIZES:
                at_size(qtbot, window, width, height)
                qtbot.wait(50)  # the plot lays its items out after the resize
                settle()
                cut = _cut_parts(pane)
                if cut:
                    found[(width, height, presentation)] = cut
    finally:
        window.panes.teaching.set_presentation(False)
    assert found == {}
