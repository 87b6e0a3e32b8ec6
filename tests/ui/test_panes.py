"""Each pane on its own, fed answers made up in the test: full ones, and empty ones.

The answers are the worker's own types, built by hand, so a pane's handling of an
edge case (no tokens, no neighbours, no position table) is checked without a model.
"""

from __future__ import annotations

import numpy as np

from embedexplorer.core.maps.family_map import FamilyMap, MapPoint, Projection
from embedexplorer.core.tables.embedding_table import Neighbour, NeighbourResult, Query
from embedexplorer.core.text.texts import Token, TokenReport
from embedexplorer.jobs.table_jobs import CosineAnswer, NeighboursAnswer, RowAnswer, TokensAnswer
from embedexplorer.settings import Settings
from embedexplorer.ui.map.exports import MapExports
from embedexplorer.ui.map.view import MapView
from embedexplorer.ui.panes.neighbours_pane import NeighboursPane
from embedexplorer.ui.panes.row_view import RowView
from embedexplorer.ui.panes.token_pane import TokenPane

PARIS = Token(6342, "_Paris", " Paris")
BYTE = Token(127, "<0x8D>", "\udc8d")


def report(*tokens: Token, note: str = "") -> TokenReport:
    count = len(tokens)
    return TokenReport(tuple(tokens), count, 1024, count, 10, 10, 0, note)


def test_token_pane_shows_chips_and_selects_the_first(qtbot) -> None:
    pane = TokenPane()
    qtbot.addWidget(pane)
    with qtbot.waitSignal(pane.token_selected) as blocker:
        pane.show_tokens(TokensAnswer(" Paris<", report(PARIS, BYTE)))
    assert pane.chip_labels == ["_Paris\n6342", "<0x8D>\n127"]
    assert blocker.args == [6342, 0, "_Paris"]
    assert pane.summary.text().startswith("2 tokens.")


def test_token_pane_says_why_there_are_no_tokens(qtbot) -> None:
    pane = TokenPane()
    qtbot.addWidget(pane)
    pane.show_tokens(TokensAnswer("", report(note="The text is empty; type a word.")))
    assert pane.chip_tokens == []
    assert pane.selected_index() is None
    assert "No tokens. The text is empty" in pane.summary.text()


def test_row_view_with_and_without_a_position_row(qtbot) -> None:
    view = RowView()
    qtbot.addWidget(view)
    row = np.linspace(-1, 1, 768, dtype=np.float32)
    position = np.full(768, 0.5, dtype=np.float32)
    view.show_row(RowAnswer(PARIS, 0, row, position, row + position, position_index=0))
    assert "row 6,342" in view.title.text() and "... 762 more]" in view.numbers.text()
    # The chapter counts places from 1, and the position table's rows the same way.
    assert "place 1, position-table row 1" in view.title.text()
    assert "position row 1:" in view.numbers.text() and "sum, enters layer 1:" in view.numbers.text()
    # A byte token keeps its name in the header, and a model without positions shows no sum.
    view.show_row(RowAnswer(BYTE, 2, row[:4], None, None, "no position table: rotary"))
    assert "&lt;0x8D&gt;" in view.title.text()
    assert "position row" not in view.numbers.text()
    assert view.note.text() == "no position table: rotary"
    view.clear()
    assert view.copy_button.isEnabled() is False


def test_neighbours_pane_full_and_empty(qtbot) -> None:
    pane = NeighboursPane(k=3)
    qtbot.addWidget(pane)
    query = Query(6342, "_Paris", (PARIS,))
    neighbours = (Neighbour(4881, "_France", 0.61), Neighbour(23, "<0x17>", 0.2))
    pane.show_neighbours(NeighboursAnswer(NeighbourResult(query, neighbours), 0.12, (" France", "\x17")))
    assert pane.neighbour_tokens() == ["_France", "<0x17>"]
    assert "_Paris" in pane.heading.text() and "6,342" in pane.heading.text()
    assert "0.120" in pane.baseline_label.text()
    with qtbot.waitSignal(pane.neighbour_activated) as blocker:
        pane.table.cellDoubleClicked.emit(0, 0)
    assert blocker.args == [" France"]

    pane.show_neighbours(NeighboursAnswer(NeighbourResult(query, ()), 0.12, ()))
    assert pane.neighbour_tokens() == []
    assert "No neighbours" in pane.heading.text()
    pane.show_cosine(CosineAnswer("_Paris", "_France", 0.61, 0.12, ""))
    assert "0.610" in pane.compare_result.text()
    pane.show_compare_message("Select a token first.")
    assert pane.compare_result.text() == "Select a token first."
    assert pane.k() == 3


def made_up_map(families: dict[str, int]) -> FamilyMap:
    points = []
    for f, (family, count) in enumerate(families.items()):
        for i in range(count):
            points.append(MapPoint(f"{family}{i}", f"{family}{i}", family, float(f), float(i), (f * 10 + i,)))
    projection = Projection(np.zeros(4), np.eye(2, 4), (0.5, 0.25), 0.75)
    return FamilyMap(tuple(points), projection, 0.4, 0.1, ())


def test_map_view_draws_hides_and_exports(qtbot, tmp_path) -> None:
    view = MapView(Settings(str(tmp_path / "s.ini")))
    qtbot.addWidget(view)
    assert not view.can_export
    view.show_map(made_up_map({"days": 3, "fruit": 2}), "made-up model")
    assert view.canvas.families == ["days", "fruit"]
    view.panel.visibility["fruit"].click()
    assert view.canvas.visible_points("fruit") == 0
    assert view.settings.hidden_families == ["fruit"]
    statuses: list[str] = []
    view.status.connect(statuses.append)
    assert MapExports(view).export_to(str(tmp_path / "map.png"), 400)
    assert (tmp_path / "map.png").read_bytes().startswith(b"\x89PNG")
    assert statuses and "map.png" in statuses[0]


def test_map_view_keeps_its_map_when_a_new_one_fails(qtbot, tmp_path) -> None:
    view = MapView(Settings(str(tmp_path / "s.ini")))
    qtbot.addWidget(view)
    view.show_map(made_up_map({"days": 2}), "made-up model")
    messages: list[tuple[str, str]] = []
    view.message.connect(lambda text, level: messages.append((text, level)))
    with qtbot.waitSignal(view.families_requested):
        view.use_families(str(tmp_path / "missing.json"))
    view.map_failed("Cannot read the families file.")
    assert messages and "keeps the families it had" in messages[0][0]
    assert view.requested_families == ""  # back to the file in use
    assert view.canvas.families == ["days"]


def test_the_row_plots_legend_is_never_cut_on_a_narrow_pane(qtbot) -> None:
    view = RowView()
    qtbot.addWidget(view)
    row = np.linspace(-1, 1, 768, dtype=np.float32)
    position = np.full(768, 0.5, dtype=np.float32)
    columns = []
    for width in (700, 420, 300):
        view.resize(width, 320)
        view.show()
        view.show_row(RowAnswer(PARIS, 0, row, position, row + position, position_index=0))
        qtbot.waitUntil(lambda w=width: view.plot_widget.width() <= w)
        view.plot_widget.getPlotItem().layout.activate()
        right = view.plot_widget.width()
        for _sample, label in view.legend.items:
            text = label.item.mapRectToScene(label.item.boundingRect())
            assert text.right() <= right, (width, label.text, text.right(), right)
        columns.append(view.legend.columnCount)
    assert columns[0] == 3 and columns[-1] < 3  # side by side when there is room, stacked when not
