"""A pane plugs in with its own module and one entry in the list: the window needs no other change."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from embedexplorer.jobs.table_jobs import ROW, RowAnswer, RowRequest
from embedexplorer.settings import Settings
from embedexplorer.state import AppState, Selection
from embedexplorer.ui.window.main_window import MainWindow
from embedexplorer.ui.window.pane_list import PANES
from embedexplorer.ui.window.plugging import PaneContext, PaneEntry, Place
from embedexplorer.worker import WorkerClient

from .conftest import ANSWER_TIMEOUT_MS, open_model, type_text


class RowLengthPane(QLabel):
    """A pane written the way the recipe in docs/architecture.md says: the selected row's length."""

    @classmethod
    def plug(cls, ctx: PaneContext) -> RowLengthPane:
        pane = cls("Select a token.")
        ctx.state.watch("selection", lambda s: s and ctx.client.ask(ROW, RowRequest(s.token_id, s.place), pane))
        ctx.client.channel(ROW, pane).ready.connect(pane.show_row)
        ctx.shell.menu("&View").addAction("Row &length")
        return pane

    def show_row(self, answer: RowAnswer) -> None:
        self.setText(f"{answer.token.token}: length {float((answer.row.astype(float) ** 2).sum() ** 0.5):.4f}")


def test_a_new_pane_is_one_entry(qtbot, tmp_path, minilm_table) -> None:
    entry = PaneEntry("row_length", Place.RIGHT_TAB, RowLengthPane, "Row &length")
    window = MainWindow(WorkerClient(), Settings(str(tmp_path / "s.ini")), panes=(*PANES, entry))
    qtbot.addWidget(window)
    window.show()
    pane = window.panes.row_length
    assert window.right.indexOf(pane) >= 0 and window.right.tabText(window.right.indexOf(pane)) == "Row &length"
    assert any(a.text() == "Row &length" for a in window.menu("&View").actions())
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    token_id = minilm_table.query("monday").id
    expected = float(((minilm_table.row(token_id).astype(float)) ** 2).sum() ** 0.5)
    qtbot.waitUntil(lambda: pane.text() == f"monday: length {expected:.4f}", timeout=ANSWER_TIMEOUT_MS)
    window.close()


def test_the_state_tells_each_watcher_once_per_real_change() -> None:
    state = AppState()
    heard: list[object] = []
    state.watch("k", heard.append)
    state.watch("selection", heard.append)
    state.update(k=8)  # the default: no change
    state.update(k=12, selection=Selection(3, 0, "x"))
    state.update(k=12)
    state.touch("k")
    assert heard == [12, Selection(3, 0, "x"), 12]
