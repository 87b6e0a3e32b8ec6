"""The chapter's exercises beside the window: the furthest family, analogies, two texts, and their actions.

The desk owns the exercise dialogs, sends their requests and routes the answers back; it
follows the application state (the model, k, the hidden families, the two texts) and
changes it (Guess first), and never touches another pane. Guess first's own panes are in
``guess_first.py``.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog

from ...jobs.exercise_jobs import (
    ANALOGY,
    FAMILY_DISTANCES,
    PAIR_TOKENS,
    TWO_TEXTS,
    DistancesRequest,
)
from ...state import ShownMap
from ...worker import Channel, Failure
from ..window.plugging import PaneContext, Place
from .analogy import AnalogyDialog
from .family_distances import FamilyDistancesDialog
from .two_texts import DEFAULT_TEXTS, TwoTextsDialog


class ExerciseDesk(QObject):
    """The Exercises menu and toolbar; the other exercises in dialogs beside the window."""

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Exercises"
    PLACE = Place.NOWHERE  # dialogs beside the window, a menu and a toolbar
    MENUS = ("&Map", "E&xercises")

    def bind(self, ctx: PaneContext) -> None:
        parent = ctx.shell.window_widget()
        self.setParent(parent)
        self.state, self.client = ctx.state, ctx.client
        self._parent, self._first_k = parent, ctx.state.k
        # The dialogs are built the first time they are opened (or asked about): not for the
        # window's first frame.
        self._analogy: AnalogyDialog | None = None
        self._two_texts: TwoTextsDialog | None = None
        self._family_distances: FamilyDistancesDialog | None = None

        self.guess_action = QAction("&Guess first", parent)
        self.guess_action.setCheckable(True)
        self.guess_action.setShortcut(QKeySequence("Ctrl+G"))
        self.guess_action.setToolTip("Guess the nearest neighbour before you see the list (Ctrl+G)")
        self.guess_action.toggled.connect(lambda on: self.state.update(guess_mode=on))
        self.furthest_action = QAction("Which family is &furthest?", parent)
        self.furthest_action.setToolTip("The chapter's map question: guess, then see the ranking (Ctrl+Shift+F)")
        self.furthest_action.setShortcut(QKeySequence("Ctrl+Shift+F"))
        self.furthest_action.triggered.connect(self.ask_furthest_family)
        self.distances_action = QAction("Family &distances", parent)
        self.distances_action.setToolTip("Families ranked by their mean cosine to all the other families")
        self.distances_action.triggered.connect(self.show_family_distances)
        self.analogy_action = QAction("&Analogies...", parent)
        self.analogy_action.setShortcut(QKeySequence("Ctrl+Shift+A"))
        self.analogy_action.setToolTip("A - B + C: king - man + woman")
        self.analogy_action.triggered.connect(self.show_analogies)
        self.two_texts_action = QAction("&Two texts...", parent)
        self.two_texts_action.setShortcut(QKeySequence("Ctrl+Shift+T"))
        self.two_texts_action.setToolTip('"bank" in "the river bank" and in "my bank account"')
        self.two_texts_action.triggered.connect(self.show_two_texts)
        for action in (*self.actions(), self.distances_action):
            # The exercise dialogs are windows of their own: from one of them a teacher goes on to the next.
            action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self._connect()
        toolbar = ctx.shell.toolbar("Exercises")
        menu = ctx.shell.menu("E&xercises")
        for action in self.actions():
            toolbar.addAction(action)
            menu.addAction(action)
        map_menu = ctx.shell.menu("&Map")
        map_menu.addSeparator()
        map_menu.addAction(self.distances_action)
        map_menu.addAction(self.furthest_action)

    def actions(self) -> list[QAction]:
        return [self.guess_action, self.furthest_action, self.analogy_action, self.two_texts_action]

    # ----- the dialogs, each built when first needed ---------------------------------------------
    @property
    def analogy(self) -> AnalogyDialog:
        if self._analogy is None:
            dialog = self._analogy = AnalogyDialog(self._first_k, self._parent)
            dialog.pane.model = self.state.model_spec
            dialog.pane.requested.connect(lambda request: self._submit(ANALOGY, request))
        return self._analogy

    @property
    def two_texts(self) -> TwoTextsDialog:
        if self._two_texts is None:
            self._two_texts = TwoTextsDialog(self._parent)
            pane = self._two_texts.pane
            pane.tokens_wanted.connect(lambda request: self._submit(PAIR_TOKENS, request, pair_texts=pane.texts()))
            pane.comparison_wanted.connect(
                lambda request: self._submit(TWO_TEXTS, request, pair_places=pane.places())
            )
            self._show_pair()  # a lesson's texts, given before the dialog was built
        return self._two_texts

    @property
    def family_distances(self) -> FamilyDistancesDialog:
        if self._family_distances is None:
            self._family_distances = FamilyDistancesDialog(self._parent)
        return self._family_distances

    def _connect(self) -> None:
        state = self.state

        def channel(kind: object) -> Channel:
            return self.client.channel(kind, self)  # type: ignore[arg-type]

        # Answers come only to a dialog that asked, so each is built by then.
        channel(FAMILY_DISTANCES).ready.connect(lambda answer: self.family_distances.show_distances(answer))
        channel(FAMILY_DISTANCES).failed.connect(lambda failure: self.family_distances.show_message(failure.message))
        channel(ANALOGY).ready.connect(lambda answer: self.analogy.pane.show_answer(answer))
        channel(ANALOGY).failed.connect(lambda failure: self.analogy.pane.show_message(failure.message))
        channel(PAIR_TOKENS).ready.connect(lambda answer: self.two_texts.pane.show_tokens(answer))
        channel(PAIR_TOKENS).failed.connect(self._two_texts_failed)
        channel(TWO_TEXTS).ready.connect(lambda answer: self.two_texts.pane.show_comparison(answer))
        channel(TWO_TEXTS).failed.connect(self._two_texts_failed)
        state.update(pair_texts=DEFAULT_TEXTS, pair_places=(None, None))  # what a new Two texts pane shows
        state.watch("pair_texts", self._on_pair_texts_changed)
        state.watch("pair_places", self._on_pair_places_changed)
        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("hidden_families", self._on_hidden_families_changed)
        state.watch("shown_map", self._on_shown_map_changed)  # the map pane drew a new one
        state.watch("guess_mode", self._on_guess_mode_changed)

    def _show_pair(self) -> None:
        """Texts or places that the pane does not show yet (a lesson's) go into it."""
        if self._two_texts is None:
            return  # the dialog shows the state's texts when it is built
        pane, state = self._two_texts.pane, self.state
        if pane.texts() != state.pair_texts or pane.places() != state.pair_places:
            first, second = state.pair_texts
            pane.set_texts(first, second, state.pair_places)

    def _submit(self, kind: object, request: object, **changes: object) -> None:
        self.state.update(**changes)
        if self.state.loaded:
            self.client.ask(kind, request, self)  # type: ignore[arg-type]

    # ----- what the state tells the desk ---------------------------------------------------
    def _on_pair_texts_changed(self, _texts: tuple[str, str]) -> None:
        self._show_pair()

    def _on_pair_places_changed(self, _places: tuple[int | None, int | None]) -> None:
        self._show_pair()

    def _on_hidden_families_changed(self, _hidden: frozenset[str]) -> None:
        self._map_changed()

    def _on_shown_map_changed(self, _shown: ShownMap | None) -> None:
        self._map_changed()

    def _on_guess_mode_changed(self, on: bool) -> None:
        self.guess_action.setChecked(on)

    def _on_model_serial_changed(self, _serial: int) -> None:
        if self._analogy is not None:
            self._analogy.pane.model = self.state.model_spec
            if self._analogy.isVisible():
                self._analogy.pane.submit()
        if self._two_texts is not None and self._two_texts.isVisible():
            self._two_texts.pane.request_tokens()
        if self._family_distances is not None:
            self._family_distances.new_model()

    def _map_changed(self) -> None:
        if self._family_distances is not None and self._family_distances.isVisible():
            self._request_distances()

    # ----- the exercises ----------------------------------------------------------------------
    def ask_furthest_family(self) -> None:
        self.family_distances.start_guess()
        self._open(self.family_distances)
        self._request_distances()

    def show_family_distances(self) -> None:
        self.family_distances.show_answer_now()
        self._open(self.family_distances)
        self._request_distances()

    def _request_distances(self) -> None:
        shown = self.state.shown_map
        on_map = None if shown is None else shown.map
        self._submit(FAMILY_DISTANCES, DistancesRequest(frozenset(self.state.hidden_families), on_map))

    def show_analogies(self) -> None:
        self._open(self.analogy)
        self.analogy.pane.submit()

    def show_two_texts(self) -> None:
        self._open(self.two_texts)
        self.two_texts.pane.request_tokens()

    def _two_texts_failed(self, failure: Failure) -> None:
        self.two_texts.pane.show_message(failure.message)

    @staticmethod
    def _open(dialog: QDialog) -> None:
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
