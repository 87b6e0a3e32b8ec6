"""The map as a pane of the window: its requests, its answers, its menus, and the state it follows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ...core.common.constants import METHOD_NAMES, MULTI_TOKEN_ACTIONS
from ...jobs.map_jobs import WORD_MAP, WordMapRequest
from ...jobs.table_jobs import MAP, NEIGHBOURS, MapRequest, NeighboursAnswer, NeighboursRequest
from ...state import AppState, Range, Selection, ShownMap
from ...worker import Failure
from ..style import theme
from ..widgets.pause import K_PAUSE_MS, after_pause
from ..window.plugging import PaneContext, Place
from .exports import MapExports
from .view import MapView

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.map_change import MapChange
    from ...core.maps.family_map import FamilyMap
    from ...core.maps.word_maps import WordMap

MULTI_TOKEN_LABELS = {"average": "&Average their rows", "skip": "&Leave them off the map"}
PROJECTION_LABELS = {"pca": "&PCA (instant)", "tsne": "&t-SNE", "umap": "&UMAP"}


class MapPane(QWidget):
    """The family map (or a bigger one) with the selected token starred and its neighbours ringed.

    It holds the view (``view``: the canvas, the families, search, bigger maps) and its exports
    (``exports``); it asks the worker for maps and follows the state.
    """

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "M&ap"  # Alt+M is the Map menu's
    PLACE = Place.RIGHT_TAB
    MENUS = ("&File", "&Map", "&View")
    state: AppState
    view: MapView
    exports: MapExports

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def bind(self, ctx: PaneContext) -> None:
        # The view reads the remembered families and hidden ones as it is built: it comes with the context.
        self.view = MapView(ctx.settings)
        self.exports = MapExports(self.view)
        self._layout.addWidget(self.view)
        self.setFocusProxy(self.view)
        state, client, shell = ctx.state, ctx.client, ctx.shell
        self.state = state
        self._kept: NeighboursAnswer | None = None  # the last neighbours: shown at once, or after a guess
        self._map_coming = False  # a family map was asked for and has not come yet
        self._map_serial = 0  # the model the map on screen was drawn from (its model_serial)
        # k is asked about once the spinning stops, as the Neighbours pane does.
        self._k_timer = after_pause(self, self._ask_neighbours, K_PAUSE_MS)
        self._error_shown = ""  # the pane's last error in the message bar, withdrawn when a map comes
        self._build_menus(ctx)

        client.channel(MAP, self).ready.connect(self._on_map_ready)
        client.channel(MAP, self).failed.connect(self._on_map_failed)
        client.channel(MAP, self).progress.connect(shell.show_progress)  # a model file hashed for its first map
        client.channel(WORD_MAP, self).ready.connect(self._on_map_ready)
        client.channel(WORD_MAP, self).failed.connect(self._on_word_map_failed)
        client.channel(WORD_MAP, self).progress.connect(shell.show_progress)
        # The map asks for its own selection's neighbours, placed on the map it shows.
        client.channel(NEIGHBOURS, self).ready.connect(self._on_neighbours)
        client.channel(NEIGHBOURS, self).failed.connect(lambda _failure: self._forget_selection())
        self.view.word_map_requested.connect(self._on_word_map_requested)
        self.view.word_map_cancelled.connect(self._on_word_map_cancelled)
        self.view.word_clicked.connect(lambda text: state.update(text=text))
        self.view.families_requested.connect(lambda _path: self._request_map())
        self.view.hidden_changed.connect(lambda hidden: state.update(hidden_families=frozenset(hidden)))
        self.view.message.connect(self._on_message)
        self.view.status.connect(lambda text: shell.show_status(text, 6000))
        self.view.canvas.plot.sigRangeChanged.connect(lambda *_args: state.update(map_range=self.view_range()))
        theme.on_colour_scheme_change(self.view.canvas.apply_palette)

        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("multi_token", self._on_multi_token_changed)
        state.watch("selection", self._on_selection_changed)
        state.watch("k", self._on_k_changed)
        state.watch("neighbours_held", self._on_neighbours_held_changed)
        state.watch("hidden_families", self._on_hidden_families_changed)
        state.watch("families_file", self._on_families_file_changed)
        state.watch("map_range_wanted", self._on_map_range_wanted_changed)
        state.watch("presentation", self._on_presentation_changed)
        state.watch("map_change", self._on_map_change_changed)
        self.view.set_marker_scale(theme.presentation_scale(state.presentation))
        self._client = client
        self._shell = shell

    def _build_menus(self, ctx: PaneContext) -> None:
        file_menu = ctx.shell.menu("&File")
        file_menu.addActions(list(self.exports.actions))  # a picture, a web page, the points
        map_menu = ctx.shell.menu("&Map")
        map_menu.addAction("&Load families file...").triggered.connect(self.view.choose_families_file)
        map_menu.addAction("Use the &chapter's families").triggered.connect(lambda: self.view.use_families(""))
        map_menu.addAction("&Save families as...").triggered.connect(self.view.save_families_dialog)
        map_menu.addAction("&Edit families...").triggered.connect(self.view.edit_families)
        map_menu.addSeparator()
        map_menu.addAction("Family words &only").triggered.connect(self.view.show_family_map)
        map_menu.addAction("&Whole vocabulary").triggered.connect(lambda: self.view.request_word_map("all"))
        map_menu.addAction("Words &matching...").triggered.connect(self.view.ask_words)
        map_menu.addAction("&Axes from directions...").triggered.connect(self.view.ask_axes)
        projection = map_menu.addMenu("&Projection")
        self.projection_actions: dict[str, QAction] = {}
        for method, label in PROJECTION_LABELS.items():
            action = projection.addAction(label)
            action.setCheckable(True)
            action.setChecked(method == "pca")
            action.triggered.connect(lambda _checked=False, m=method: self._on_projection_chosen(m))
            self.projection_actions[method] = action
        map_menu.addSeparator()
        multi = map_menu.addMenu("Words of several &tokens")
        self.multi_token_actions: dict[str, QAction] = {}
        for mode in MULTI_TOKEN_ACTIONS:
            action = multi.addAction(MULTI_TOKEN_LABELS[mode])
            action.triggered.connect(lambda _checked=False, m=mode: ctx.state.update(multi_token=m))
            action.setCheckable(True)
            action.setChecked(ctx.state.multi_token == mode)
            self.multi_token_actions[mode] = action
        map_menu.addSeparator()
        map_menu.addActions(list(self.exports.actions))

        view_menu = ctx.shell.menu("&View")
        labels = view_menu.addAction("Word &labels on the map")
        labels.setCheckable(True)
        labels.setChecked(True)
        labels.toggled.connect(self.view.set_labels_visible)
        reset = view_menu.addAction("Reset vie&w")
        reset.triggered.connect(self.view.reset_view)
        reset.setShortcut(QKeySequence("Ctrl+0"))
        find = view_menu.addAction("&Find on the map")
        find.triggered.connect(self.view.focus_search)
        find.setShortcut(QKeySequence("Ctrl+F"))

    # ----- requests and answers ------------------------------------------------------------
    def _request_map(self) -> None:
        if self.state.loaded:
            self._map_coming = True
            self._client.ask(MAP, MapRequest(self.view.requested_families or None, self.state.multi_token), self)

    # ----- what the state tells the map ------------------------------------------------------
    def _on_model_serial_changed(self, _serial: int) -> None:
        self._request_map()

    def _on_k_changed(self, _k: int) -> None:
        self._k_timer.start()  # the rings are asked for once the spinning stops

    def _on_hidden_families_changed(self, hidden: frozenset[str]) -> None:
        self.view.set_hidden_families(set(hidden))

    def _on_map_range_wanted_changed(self, _wanted: Range | None) -> None:
        self._apply_wanted_range()

    def _on_presentation_changed(self, on: bool) -> None:
        self.view.set_marker_scale(theme.presentation_scale(on))

    def _on_map_change_changed(self, change: MapChange | None) -> None:
        self.view.canvas.set_change(change)

    def _on_multi_token_changed(self, mode: str) -> None:
        for name, action in self.multi_token_actions.items():
            action.setChecked(name == mode)
        self._request_map()

    def _on_map_failed(self, failure: Failure) -> None:
        self._shell.hide_progress()
        self._map_coming = False
        self.view.map_failed(failure.message)
        self._apply_wanted_range()

    def _apply_wanted_range(self) -> None:
        """A lesson's view: on the map on screen, or on the next one when one is on its way."""
        wanted = self.state.map_range_wanted
        if wanted is None or self._map_coming or not self.view.can_export:
            return
        self.state.update(map_range_wanted=None)
        self.view.canvas.plot.setRange(xRange=wanted[0], yRange=wanted[1], padding=0)

    def _on_word_map_requested(self, request: WordMapRequest) -> None:
        if not self.state.loaded:
            self.view.map_failed("Open a model first.")
            return
        self._client.ask(WORD_MAP, request, self)
        # What is being done, in words, until the job's own progress says more.
        what = self.view.describe_words((request.words, request.text))
        self._shell.show_progress(-1.0, f"Computing the {METHOD_NAMES[request.method]} map of {what}...")

    def _on_word_map_failed(self, failure: Failure) -> None:
        self._shell.hide_progress()
        self.view.map_failed(failure.message)
        self._check_projection(self.view.projection)

    def _on_word_map_cancelled(self) -> None:
        self._client.cancel(WORD_MAP, self)
        self._shell.hide_progress()
        self._check_projection(self.view.projection)

    def _on_projection_chosen(self, method: str) -> None:
        self.view.set_projection(method)
        self._check_projection(method if self.view.computing else self.view.projection)

    def _check_projection(self, method: str) -> None:
        for name, action in self.projection_actions.items():
            action.setChecked(name == method)

    def _on_message(self, text: str, level: str) -> None:
        self._shell.show_message(text, level)
        self._error_shown = text if level == "error" else ""

    def _on_map_ready(self, family_map: FamilyMap | WordMap) -> None:
        state = self.state
        self._shell.hide_progress()
        if self._error_shown:  # a map came after all: the error about the last one goes
            self._shell.withdraw_message(self._error_shown)
            self._error_shown = ""
        self.view.show_map(family_map, state.model_name)
        self._check_projection(self.view.projection)
        self.exports.set_enabled(True)
        self._map_coming = False
        self._map_serial = state.model_serial
        state.update(
            families_file=self.view.families_file,
            map_provenance=family_map.provenance,
            shown_map=ShownMap(family_map),
        )
        self._apply_wanted_range()
        self._ask_neighbours()  # place the selection on the new map

    # ----- the selection: a star and rings ---------------------------------------------------
    def _ask_neighbours(self) -> None:
        """Ask for the selection's neighbours placed on the map on screen, once that map is this model's.

        While a new model's map is on its way the question waits for it (``_on_map_ready`` asks),
        so each model open asks once.
        """
        selection, shown = self.state.selection, self.view.family_map
        if selection is None or shown is None or self._map_coming or self._map_serial != self.state.model_serial:
            return
        self._client.ask(NEIGHBOURS, NeighboursRequest(selection.token_id, self.state.k, on_map=shown), self)

    def _forget_selection(self) -> None:
        self._kept = None
        self.view.clear_selection()

    def _on_neighbours(self, answer: NeighboursAnswer) -> None:
        self._kept = answer
        if not self.state.neighbours_held:  # the rings would give a guess away
            self._star(answer)

    def _on_neighbours_held_changed(self, held: str) -> None:
        if held:
            self.view.clear_selection()
        elif self._kept is not None:
            self._star(self._kept)

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is None:
            self._client.cancel(NEIGHBOURS, self)
            self._forget_selection()
        else:
            self._ask_neighbours()

    def _star(self, answer: NeighboursAnswer) -> None:
        marks = answer.marks  # what core/maps/selection_marks.py marks, as the command line's --select
        if marks is None:
            return
        self.view.show_selection(marks.token, marks.at, tuple(marks.places), tuple(marks.names))
        if marks.missing:  # no star: the map does not hold the token, and the status bar says so
            self._shell.show_status(marks.missing, 6000)

    def _on_families_file_changed(self, path: str) -> None:
        if path != self.view.requested_families:
            self.view.use_families(path)

    def view_range(self) -> Range | None:
        """The map's visible x and y ranges (None before a map is drawn)."""
        if not self.view.can_export:
            return None
        (x0, x1), (y0, y1) = self.view.canvas.plot.viewRange()
        return (float(x0), float(x1)), (float(y0), float(y1))
