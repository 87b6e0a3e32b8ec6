"""Issue 35, item 8: at 1366x768 the result tables show at least seven rows (Through the layers showed 2-3,
Directions 4-5 of its 20 ends)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect

from embedexplorer.jobs.direction_jobs import DIRECTION
from embedexplorer.jobs.layer_jobs import LAYERS
from embedexplorer.jobs.table_jobs import ROW
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model, settle, type_text
from tests.ui.test_click_and_read import hover_then_click
from tests.ui.test_every_size import at_size


def rows_in_sight(table, area) -> int:  # type: ignore[no-untyped-def]
    """Rows whose whole height a person sees: inside the table's viewport and inside the pane's scrolled view."""
    seen = area.viewport().rect()
    count = 0
    for row in range(table.rowCount()):
        cell = table.visualRect(table.model().index(row, 0))
        where = QRect(table.viewport().mapTo(area.viewport(), cell.topLeft()), cell.size())
        left_edge = QRect(where.topLeft(), QPoint(where.left(), where.bottom()))
        if table.viewport().rect().contains(cell) and seen.contains(left_edge):
            count += 1
    return count


def test_directions_and_layers_tables_show_seven_rows_at_1366x768(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    at_size(qtbot, window, 1366, 768)
    open_model(qtbot, window, "bundled")
    directions = window.panes.directions_pane
    window.right.setCurrentWidget(directions)
    settle()
    with qtbot.waitSignal(answers(window, DIRECTION).ready, timeout=LOAD_TIMEOUT_MS):
        hover_then_click(qtbot, directions.go, directions.go.rect().center())
    settle()
    for table in (directions.low_table, directions.high_table):
        assert table.rowCount() >= 7
        assert rows_in_sight(table, directions.scroll_area) >= 7, (
            table.accessibleName(), table.viewport().height(), table.rowHeight(0), table.horizontalHeader().height()
        )

    type_text(qtbot, window, "the river bank")
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.select(2)
    layers = window.panes.layers_pane
    window.right.setCurrentWidget(layers)
    with qtbot.waitSignal(answers(window, LAYERS).ready, timeout=LOAD_TIMEOUT_MS):
        hover_then_click(qtbot, layers.run_button, layers.run_button.rect().center())
    settle()
    assert layers.nearest.rowCount() >= 7
    # The pane scrolls on a short screen: scrolled to the table, as a person does, seven rows are in sight.
    layers.scroll_area.ensureWidgetVisible(layers.nearest)
    settle()
    assert rows_in_sight(layers.nearest, layers.scroll_area) >= 7
