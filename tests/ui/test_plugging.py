"""A pane plugs in with its own module and one entry in the list: the window needs no other change."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from embedexplorer.jobs.table_jobs import ROW, RowAnswer, RowRequest
from embedexplorer.settings import Settings
from embedexplorer.state import AppState, Selection
from embedexplorer.ui.window.main_window import MainWindow
from embedexplorer.ui.window.pane_list import PANES
from embedexplorer.ui.window.plugging import PaneContext, PaneEntry, Place, menu_order
from embedexplorer.worker import WorkerClient

from .conftest import ANSWER_TIMEOUT_MS, open_model, settle, type_text


class RowLengthPane(QLabel):
    """A pane written as the recipe in docs/architecture.md says: the selected row's length, and a menu of its own."""

    TITLE = "Row &length"
    PLACE = Place.RIGHT_TAB
    MENUS = ("&Map", "&Lengths")  # a menu no other pane has, after the Map menu
    ctx: PaneContext

    def __init__(self) -> None:
        super().__init__("Select a token.")

    def bind(self, ctx: PaneContext) -> None:
        self.ctx = ctx
        ctx.state.watch("selection", self._on_selection_changed)
        ctx.client.channel(ROW, self).ready.connect(self.show_row)
        self.copy_action = ctx.shell.menu("&Lengths").addAction("&Copy the length")

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is not None:
            self.ctx.client.ask(ROW, RowRequest(selection.token_id, selection.place), self)

    def show_row(self, answer: RowAnswer) -> None:
        self.setText(f"{answer.token.token}: length {float((answer.row.astype(float) ** 2).sum() ** 0.5):.4f}")


class NotesPane(QLabel):
    """A second pane in the left column, stacked above the neighbours (where a Health pane would go)."""

    TITLE = "Notes"
    PLACE = Place.LEFT_LOWER
    MENUS = ()

    def __init__(self) -> None:
        super().__init__("Notes about the token.")

    def bind(self, ctx: PaneContext) -> None:
        ctx.state.watch("selection", self._on_selection_changed)

    def _on_selection_changed(self, selection: Selection | None) -> None:
        self.setText("" if selection is None else f"Notes about {selection.token}.")


class RulerPane(QLabel):
    """A second upper pane of the left column: it joins the stack under the row pane."""

    TITLE = "Ruler"
    PLACE = Place.LEFT_UPPER
    MENUS = ()

    def __init__(self) -> None:
        super().__init__("a ruler")

    def bind(self, ctx: PaneContext) -> None:
        del ctx


def test_a_new_pane_with_a_new_menu_is_its_module_and_one_entry(qtbot, tmp_path, minilm_table) -> None:
    entry = PaneEntry("row_length", RowLengthPane)
    window = MainWindow(WorkerClient(), Settings(str(tmp_path / "s.ini")), panes=(*PANES, entry))
    qtbot.addWidget(window)
    window.show()
    pane = window.panes.row_length
    assert window.right.indexOf(pane) >= 0 and window.right.tabText(window.right.indexOf(pane)) == "Row &length"
    # Its menu joins the menu bar: after Map as the pane says, after the menus declared before it, before Help.
    titles = [action.text() for action in window.menuBar().actions()]
    assert titles == ["&File", "&Map", "&View", "E&xercises", "&Lengths", "&Help"]
    assert pane.copy_action in window.menu("&Lengths").actions()
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    token_id = minilm_table.query("monday").id
    expected = float(((minilm_table.row(token_id).astype(float)) ** 2).sum() ** 0.5)
    qtbot.waitUntil(lambda: pane.text() == f"monday: length {expected:.4f}", timeout=ANSWER_TIMEOUT_MS)
    window.close()


def test_the_window_without_the_extra_pane_has_the_menus_it_had(qtbot, window) -> None:
    assert [action.text() for action in window.menuBar().actions()] == ["&File", "&Map", "&View", "E&xercises", "&Help"]


def test_menus_keep_each_panes_order_file_first_help_last() -> None:
    assert menu_order([("&View",), ("&File", "&Map", "&View"), ("&Map", "E&xercises"), ("&Help", "&Tools")]) == [
        "&File", "&Map", "&View", "E&xercises", "&Tools", "&Help"
    ]  # fmt: skip


def test_more_left_column_panes_keep_the_row_placement_working(qtbot, tmp_path) -> None:
    panes = (*PANES, PaneEntry("notes", NotesPane), PaneEntry("ruler", RulerPane))
    window = MainWindow(WorkerClient(), Settings(str(tmp_path / "s.ini")), panes=panes)
    qtbot.addWidget(window)
    window.show()
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    assert window.panes.notes.text() == "Notes about monday."
    placement = window.row_placement
    states = []
    for width, height in ((1366, 1000), (1024, 640), (1366, 1000)):
        window.move(0, 0)
        window.resize(width, height)
        qtbot.waitUntil(lambda: placement.compact == placement.wants_compact())
        settle()
        compact = placement.compact
        assert compact or height > 640  # too short for both at 1024x640: the row pane goes beside the map
        assert (window.right.indexOf(window.panes.row_view) == 1) is compact
        assert window.left.count() == (1 if compact else 2)  # the row pane (when it fits), then one stack
        # The stack holds the second upper pane, then the lower ones; while the row pane stays above
        # them, the neighbours keep their eight rows (on a window too short, it leaves for a tab).
        assert window.left.widget(window.left.count() - 1).isAncestorOf(window.panes.ruler)
        assert compact or window.panes.neighbours_pane.visible_rows() >= 8
        states.append(compact)
    assert states == [False, True, False]  # above the neighbours, beside the map, and back
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
