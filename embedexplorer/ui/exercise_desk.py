"""The chapter's exercises wired to the worker: guess first, the furthest family, analogies, two texts.

The window owns one desk; the desk owns the exercise panes and dialogs, sends their
requests and routes the answers back. It talks to the window's other panes only
through their small methods (``set_hidden``, ``mark``, ``show_selection``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog

from ..core.exercises.guess import GuessOutcome
from ..jobs.exercise_jobs import (
    ANALOGY,
    COMPLETE,
    FAMILY_DISTANCES,
    GUESS,
    PAIR_TOKENS,
    SUGGEST,
    TWO_TEXTS,
    CompletionRequest,
    DistancesRequest,
    GuessRequest,
    SuggestionsRequest,
)
from ..jobs.table_jobs import NeighboursAnswer
from ..worker import Failure
from .analogy_pane import AnalogyDialog
from .exercises import GuessBar, SuggestionStrip
from .family_distances import FamilyDistancesDialog
from .two_texts import TwoTextsDialog

if TYPE_CHECKING:
    from .main_window import MainWindow


class ExerciseDesk(QObject):
    """Guess first on the neighbour list; the other exercises in dialogs beside the window."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.client = window.client
        self.guess_bar = GuessBar(k=window.settings.k)
        self.guess_bar.hide()
        self.suggestions = SuggestionStrip()
        self.suggestions.hide()
        self.analogy = AnalogyDialog(window.settings.k, window)
        self.two_texts = TwoTextsDialog(window)
        self.family_distances = FamilyDistancesDialog(window)
        self._query: tuple[int, str] | None = None  # the selected token: id, readable form
        self._waiting: NeighboursAnswer | None = None  # neighbours kept back until a guess
        self.revealed = True

        self.guess_action = QAction("&Guess first", window)
        self.guess_action.setCheckable(True)
        self.guess_action.setShortcut(QKeySequence("Ctrl+G"))
        self.guess_action.setToolTip("Guess the nearest neighbour before you see the list (Ctrl+G)")
        self.guess_action.toggled.connect(self.set_guess_mode)
        self.furthest_action = QAction("Which family is &furthest?", window)
        self.furthest_action.setToolTip("The chapter's map question: guess, then see the ranking")
        self.furthest_action.triggered.connect(self.ask_furthest_family)
        self.distances_action = QAction("Family &distances", window)
        self.distances_action.setToolTip("Families ranked by their mean cosine to all the other families")
        self.distances_action.triggered.connect(self.show_family_distances)
        self.analogy_action = QAction("&Analogies...", window)
        self.analogy_action.setShortcut(QKeySequence("Ctrl+Shift+A"))
        self.analogy_action.setToolTip("A - B + C: king - man + woman")
        self.analogy_action.triggered.connect(self.show_analogies)
        self.two_texts_action = QAction("&Two texts...", window)
        self.two_texts_action.setShortcut(QKeySequence("Ctrl+Shift+T"))
        self.two_texts_action.setToolTip('"bank" in "the river bank" and in "my bank account"')
        self.two_texts_action.triggered.connect(self.show_two_texts)
        self._connect()

    def actions(self) -> list[QAction]:
        return [self.guess_action, self.furthest_action, self.analogy_action, self.two_texts_action]

    def _connect(self) -> None:
        channel = self.client.channel
        channel(GUESS).ready.connect(self._on_guess_ready)
        channel(GUESS).failed.connect(lambda failure: self.guess_bar.show_message(failure.message))
        channel(COMPLETE).ready.connect(self.guess_bar.show_completions)
        channel(SUGGEST).ready.connect(self.suggestions.show_suggestions)
        channel(FAMILY_DISTANCES).ready.connect(self.family_distances.show_distances)
        channel(FAMILY_DISTANCES).failed.connect(lambda failure: self.family_distances.show_message(failure.message))
        channel(ANALOGY).ready.connect(self.analogy.pane.show_answer)
        channel(ANALOGY).failed.connect(lambda failure: self.analogy.pane.show_message(failure.message))
        channel(PAIR_TOKENS).ready.connect(self.two_texts.pane.show_tokens)
        channel(PAIR_TOKENS).failed.connect(self._two_texts_failed)
        channel(TWO_TEXTS).ready.connect(self.two_texts.pane.show_comparison)
        channel(TWO_TEXTS).failed.connect(self._two_texts_failed)

        self.guess_bar.guess_made.connect(self._on_guess_made)
        self.guess_bar.completions_wanted.connect(lambda prefix: self._submit(COMPLETE, CompletionRequest(prefix)))
        self.guess_bar.reveal_wanted.connect(lambda: self.reveal(None))
        self.suggestions.word_picked.connect(self.window.token_pane.set_text)
        self.analogy.pane.requested.connect(lambda request: self._submit(ANALOGY, request))
        self.two_texts.pane.tokens_wanted.connect(lambda request: self._submit(PAIR_TOKENS, request))
        self.two_texts.pane.comparison_wanted.connect(lambda request: self._submit(TWO_TEXTS, request))

    def _submit(self, kind: object, request: object) -> None:
        if self.window.loaded:
            self.client.submit(kind, request)  # type: ignore[arg-type]

    # ----- what the window tells the desk ---------------------------------------------------
    def model_loaded(self, spec: str) -> None:
        self.guess_bar.reset_score(self.window.neighbours_pane.k())  # a new model, a new round
        self.analogy.pane.model = spec
        self.client.submit(SUGGEST, SuggestionsRequest())
        if self.analogy.isVisible():
            self.analogy.pane.submit()
        if self.two_texts.isVisible():
            self.two_texts.pane.request_tokens()

    def map_changed(self) -> None:
        if self.family_distances.isVisible():
            self._request_distances()

    def k_changed(self, k: int) -> None:
        self.guess_bar.set_k(k)

    def query_selected(self, token_id: int, token: str) -> None:
        """A new token is looked up: in guess mode its neighbours stay hidden until a guess."""
        if self._query is not None and self._query[0] == token_id and not self.revealed:
            return
        self._query = (token_id, token)
        self._waiting = None
        if self.guess_action.isChecked():
            self.revealed = False
            self.window.neighbours_pane.mark(None)
            self.window.neighbours_pane.set_hidden(True, f"Guess the nearest neighbour of {token} first.")
            self.window.map_view.clear_selection()  # the rings would give the answer away
            self.guess_bar.ask(token)

    def query_cleared(self) -> None:
        self._query, self._waiting = None, None
        self.revealed = True
        self.window.neighbours_pane.set_hidden(False)

    def hides_neighbours(self, answer: NeighboursAnswer) -> bool:
        """True when ``answer`` must wait for a guess; the desk shows it on the map at the reveal."""
        if self.revealed:
            return False
        self._waiting = answer
        return True

    # ----- guess first ---------------------------------------------------------------------
    def set_guess_mode(self, on: bool) -> None:
        self.guess_bar.setVisible(on)
        self.suggestions.setVisible(on)
        if on:
            if self._query is not None:
                token_id, token = self._query
                self._query = None
                self.query_selected(token_id, token)
            self.guess_bar.input.setFocus()
        else:
            self.reveal(None)

    def _on_guess_made(self, text: str) -> None:
        if self._query is None:
            self.guess_bar.show_message("Select a token first: click a chip or type a word.")
            return
        self._submit(GUESS, GuessRequest(self._query[0], text))

    def _on_guess_ready(self, outcome: GuessOutcome) -> None:
        if self._query is None or outcome.query.id != self._query[0]:
            return
        self.guess_bar.show_outcome(outcome)
        self.reveal(outcome.guess.id)

    def reveal(self, guess_id: int | None) -> None:
        """Show the neighbours (and their rings on the map), the guess in bold."""
        self.revealed = True
        pane = self.window.neighbours_pane
        pane.set_hidden(False)
        pane.mark(guess_id)
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self.window.show_on_map(waiting)

    # ----- the other exercises --------------------------------------------------------------
    def ask_furthest_family(self) -> None:
        self.family_distances.start_guess()
        self._open(self.family_distances)
        self._request_distances()

    def show_family_distances(self) -> None:
        self.family_distances.show_answer_now()
        self._open(self.family_distances)
        self._request_distances()

    def _request_distances(self) -> None:
        self._submit(FAMILY_DISTANCES, DistancesRequest(frozenset(self.window.settings.hidden_families)))

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
