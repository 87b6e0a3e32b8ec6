"""Guess first as panes of the window: the guess line above the neighbours and the words to try.

While Guess first is on, each newly selected token's neighbours are held back (the state's
``neighbours_held`` says why); the neighbour list and the map's rings follow that field,
so a guess or "Show without guessing" reveals both at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from ...jobs.exercise_jobs import COMPLETE, GUESS, SUGGEST, CompletionRequest, GuessRequest, SuggestionsRequest
from ...state import AppState, Selection
from ..window.plugging import PaneContext, Place
from .guess_widgets import GuessBar, SuggestionStrip

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.exercises.guess import GuessOutcome


class GuessFirstBar(GuessBar):
    """The guess line: shown while Guess first is on; holds the neighbours until a guess."""

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Guess first"
    PLACE = Place.LEFT_LOWER  # above the neighbours it holds back
    MENUS = ()

    def bind(self, ctx: PaneContext) -> None:
        state, client = ctx.state, ctx.client
        self.hide()
        self.set_k(state.k)
        self._state = state
        self._asked: Selection | None = None  # the token whose neighbours are held or were revealed
        state.watch("selection", self._on_selection_changed)
        state.watch("guess_mode", self._on_guess_mode_changed)
        state.watch("k", self._on_k_changed)
        state.watch("model_serial", self._on_model_serial_changed)
        self.guess_made.connect(self._on_guess_made)
        self.completions_wanted.connect(
            lambda prefix: client.ask(COMPLETE, CompletionRequest(prefix), self) if state.loaded else None
        )
        self.reveal_wanted.connect(lambda: self._reveal(None))
        client.channel(GUESS, self).ready.connect(self._on_outcome)
        client.channel(GUESS, self).failed.connect(lambda failure: self.show_message(failure.message))
        client.channel(COMPLETE, self).ready.connect(self.show_completions)
        self._client = client

    def _hold(self, selection: Selection) -> None:
        self._asked = selection
        self._state.update(guess_mark=None, neighbours_held=f"Guess the nearest neighbour of {selection.token} first.")
        self.ask(selection.token)

    def _on_k_changed(self, k: int) -> None:
        self.set_k(k)

    def _on_model_serial_changed(self, _serial: int) -> None:
        self.reset_score(self._state.k)  # a new model, a new round

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is None:
            self._asked = None
            self._state.update(neighbours_held="")
        elif not self._state.guess_mode:
            self._asked = selection
        elif not (self._state.neighbours_held and self._asked and selection.token_id == self._asked.token_id):
            self._hold(selection)  # a new token, or one already revealed: guess again

    def _on_guess_mode_changed(self, on: bool) -> None:
        self.setVisible(on)
        if not on:
            self._reveal(None)
            return
        if self._state.selection is not None:
            self._hold(self._state.selection)
        self.input.setFocus()

    def _on_guess_made(self, text: str) -> None:
        if self._asked is None:
            self.show_message("Select a token first: click a chip or type a word.")
        elif self._state.loaded:
            self._client.ask(GUESS, GuessRequest(self._asked.token_id, text), self)

    def _on_outcome(self, outcome: GuessOutcome) -> None:
        if self._asked is None or outcome.query.id != self._asked.token_id:
            return
        self.show_outcome(outcome)
        self._reveal(outcome.guess.id)

    def _reveal(self, guess_id: int | None) -> None:
        """Show the neighbours (and their rings on the map), the guess in bold."""
        self._state.update(neighbours_held="", guess_mark=guess_id)

    def focus_chain(self) -> list[QWidget]:
        return [self.input]

    _state: AppState


class SuggestionsPane(SuggestionStrip):
    """Twenty words to try, shown while Guess first is on."""

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Words to try"
    PLACE = Place.TOP
    MENUS = ()
    ctx: PaneContext

    def bind(self, ctx: PaneContext) -> None:
        self.ctx = ctx
        self.hide()
        ctx.state.watch("guess_mode", self._on_guess_mode_changed)
        ctx.state.watch("model_serial", self._on_model_serial_changed)
        ctx.client.channel(SUGGEST, self).ready.connect(self.show_suggestions)
        self.word_picked.connect(lambda text: ctx.state.update(text=text))

    def _on_guess_mode_changed(self, on: bool) -> None:
        self.setVisible(on)

    def _on_model_serial_changed(self, _serial: int) -> None:
        self.ctx.client.ask(SUGGEST, SuggestionsRequest(), self)
