"""Guess first's running score: in a module of its own, so the window keeps it before the engine loads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .guess import GuessOutcome


@dataclass(frozen=True)
class GuessScore:
    """A session's running score: guesses made, exactly right (#1), and within the top k shown."""

    guesses: int = 0
    exact: int = 0
    close: int = 0
    k: int = 8

    def add(self, outcome: GuessOutcome, k: int | None = None) -> GuessScore:
        top = self.k if k is None else k
        rank = outcome.rank.rank
        return GuessScore(self.guesses + 1, self.exact + (rank == 1), self.close + (rank <= top), top)

    def summary(self) -> str:
        if not self.guesses:
            return "No guesses yet."
        word = "guess" if self.guesses == 1 else "guesses"
        return f"{self.guesses} {word}: {self.exact} #1, {self.close} in the top {self.k}"
