"""Each pane asks the worker for itself: its answers reach it alone, and no pane needs another's channel."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

import numpy as np
import pytest

from embedexplorer.core.tables.embedding_table import EmbeddingTable
from embedexplorer.jobs.base import JobContext
from embedexplorer.jobs.table_jobs import NEIGHBOURS, NeighboursAnswer, NeighboursRequest
from embedexplorer.settings import Settings
from embedexplorer.ui.window.main_window import MainWindow
from embedexplorer.ui.window.pane_list import PANES
from embedexplorer.worker import WorkerClient

from .conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model, settle, type_text


class Runs:
    """Every real run of the NEIGHBOURS kind, as (token asked about, placed on a map or not)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.seen: list[tuple[int | str, bool]] = []

    def add(self, request: NeighboursRequest) -> None:
        with self._lock:
            self.seen.append((request.query, request.on_map is not None))

    def of(self, query: int, on_map: bool) -> int:
        with self._lock:
            return self.seen.count((query, on_map))


@pytest.fixture
def neighbour_runs() -> Iterator[Runs]:
    """Wraps the registry's NEIGHBOURS run (in the worker's thread) to count each run; the search itself is real."""
    runs = Runs()
    real = NEIGHBOURS.run

    def counted(ctx: JobContext, request: NeighboursRequest) -> NeighboursAnswer:
        runs.add(request)
        return real(ctx, request)

    object.__setattr__(NEIGHBOURS, "run", counted)  # the kind is frozen: every pane shares this one object
    try:
        yield runs
    finally:
        object.__setattr__(NEIGHBOURS, "run", real)


def test_without_the_neighbours_pane_the_map_still_stars_the_selection_and_rings_its_neighbours(
    qtbot, tmp_path, minilm_table, neighbour_runs
) -> None:
    panes = tuple(entry for entry in PANES if entry.name != "neighbours_pane")
    window = MainWindow(WorkerClient(), Settings(str(tmp_path / "s.ini")), panes=panes)
    qtbot.addWidget(window)
    window.show()
    assert not hasattr(window.panes, "neighbours_pane")
    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    with qtbot.waitSignal(window.client.channel(NEIGHBOURS, window.panes.map).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.input.setText("monday")
    monday = minilm_table.query("monday").id
    qtbot.waitUntil(lambda: canvas.selection[0] == "monday", timeout=ANSWER_TIMEOUT_MS)
    nearest = [n.token for n in minilm_table.neighbours(monday, k=window.state.k).neighbours]
    # The rings on the chapter's family words: the nearest rows that are family words are ringed.
    assert canvas.ring_names == nearest
    assert {"tuesday", "wednesday", "friday"} <= set(canvas.ring_names)
    assert canvas.selection[1] is not None and len(canvas.selection[2]) == len(nearest)
    assert neighbour_runs.of(monday, on_map=True) == 1 and neighbour_runs.of(monday, on_map=False) == 0
    window.close()


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """What each real search of a table left out (a token's own id): the search itself runs as always."""
    seen: list[tuple[int, ...]] = []
    real = EmbeddingTable._top_k

    def counted(
        self: EmbeddingTable, vector: np.ndarray, k: int, exclude: Iterable[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        seen.append(tuple(exclude))
        return real(self, vector, k, exclude)

    monkeypatch.setattr(EmbeddingTable, "_top_k", counted)
    return seen


def test_each_model_open_asks_each_pane_for_the_selections_neighbours_once(
    qtbot, window, neighbour_runs, searches
) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    monday = window.state.selection.token_id
    settle()
    # One question from the list, one from the map (placed on the map it shows): neither twice.
    assert (neighbour_runs.of(monday, on_map=False), neighbour_runs.of(monday, on_map=True)) == (1, 1)
    # Both answered from one search of the table.
    assert searches.count((monday,)) == 1
    for opened in (2, 3):
        map_answer = window.client.channel(NEIGHBOURS, window.panes.map).ready
        with qtbot.waitSignals([answers(window, NEIGHBOURS).ready, map_answer], timeout=LOAD_TIMEOUT_MS):
            window.open_model("bundled")  # the same text is asked about again on the new table
        qtbot.waitUntil(lambda: window.panes.map.view.canvas.selection[0] == "monday", timeout=ANSWER_TIMEOUT_MS)
        qtbot.wait(300)  # time for a second, unwanted question to run if one had been asked
        assert (neighbour_runs.of(monday, on_map=False), neighbour_runs.of(monday, on_map=True)) == (opened, opened)
        assert searches.count((monday,)) == opened  # one search per open, shared by the list and the map


def test_one_panes_question_never_makes_anothers_stale(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    heard: dict[str, list[str]] = {"list": [], "map": []}
    answers(window, NEIGHBOURS).ready.connect(lambda a: heard["list"].append(a.result.query.token))
    map_channel = window.client.channel(NEIGHBOURS, window.panes.map)
    map_channel.ready.connect(lambda a: heard["map"].append(a.result.query.token))
    with qtbot.waitSignal(answers(window, NEIGHBOURS).ready, timeout=ANSWER_TIMEOUT_MS):
        # The map asks about "paris", then the list about "tuesday": the map's question still gets its answer.
        window.client.ask(NEIGHBOURS, NeighboursRequest("paris", 5), window.panes.map)
        window.client.ask(NEIGHBOURS, NeighboursRequest("tuesday", 5), window.panes.neighbours_pane)
    qtbot.waitUntil(lambda: heard["map"] == ["paris"], timeout=ANSWER_TIMEOUT_MS)
    assert heard["list"] == ["tuesday"]  # and each answer reached its asker only
