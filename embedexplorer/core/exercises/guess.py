"""Guess first: the rank of a learner's guess among all rows, twenty words to try, a running score.

The chapter asks "Before you look, guess the nearest one." A guess is a token of
the model's own vocabulary; on GPT-2 a word typed without a space means the word
inside a sentence (" Tuesday", shown "_Tuesday"), the form the neighbour lists show.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..common.errors import QueryError
from ..tables.embedding_table import EmbeddingTable, Query
from ..tables.ranks import Rank, table_rank, unit_row
from ..tables.spelling import word_token
from ..text.texts import fixed

# A guess ranked past this is "not in the first 100".
NAMED_RANKS = 100
# The chapter's six tokens first, then its "Try ... king, Tokyo and seven", then more of ours;
# written in GPT-2's spelling (a leading space: the word inside a sentence).
SUGGESTED_WORDS = (
    " Paris", " France", " cat", " Monday", " happy", " doctor",
    " king", " Tokyo", " seven",
    " banana", " queen", " dog", " London", " red", " summer", " teacher",
    " coffee", " river", " January", " guitar", " small", " computer", " water", " music",
)  # fmt: skip
SUGGESTED_COUNT = 20


@dataclass(frozen=True)
class Suggestion:
    """A word to try: ``text`` is what to look up, ``token`` how the model spells it."""

    text: str
    id: int
    token: str


@dataclass(frozen=True)
class GuessOutcome:
    """Where the learner's guess stands among the neighbours of the query."""

    query: Query
    guess: Query
    rank: Rank

    @property
    def named(self) -> bool:
        """True when the guess is among the first ``NAMED_RANKS`` rows."""
        return self.rank.rank <= NAMED_RANKS

    def message(self) -> str:
        """ "tuesday is #1 of 30,521, cosine 0.750", or "... not in the first 100: rank 4,210 ..." """
        cosine = fixed(self.rank.cosine, 3)
        if self.named:
            return f"{self.guess.token} is #{self.rank.rank:,} of {self.rank.of:,}, cosine {cosine}"
        return (
            f"{self.guess.token} is not in the first {NAMED_RANKS}: rank {self.rank.rank:,} "
            f"of {self.rank.of:,}, cosine {cosine}"
        )


def guess_outcome(table: EmbeddingTable, query: str | int, guess: str) -> GuessOutcome:
    """Rank the guessed token among all rows but the query's by cosine to the query's row."""
    asked = table.query(query)
    guessed = word_token(table, guess)
    if guessed.id == asked.id:
        raise QueryError(f"{guessed.token} is the word itself; guess one of its neighbours.")
    rank = table_rank(table, unit_row(table, asked.id), guessed.id, exclude=(asked.id,))
    return GuessOutcome(asked, guessed, rank)


def suggestions(table: EmbeddingTable, count: int = SUGGESTED_COUNT) -> list[Suggestion]:
    """Twenty words to try, each a single token of this model, in its own spelling.

    GPT-2 keeps the leading space (" Paris" is "_Paris"); a vocabulary without
    such spaced words gets the bare word, lower-cased if it only knows lower case.
    """
    found: list[Suggestion] = []
    seen: set[int] = set()
    for word in SUGGESTED_WORDS:
        for text in (word, word.strip(), word.strip().lower()):
            pieces = table.encode(text)
            if len(pieces) == 1 and pieces[0].id != table.vocabulary.unknown_id:
                if pieces[0].id not in seen:
                    seen.add(pieces[0].id)
                    found.append(Suggestion(text, pieces[0].id, pieces[0].token))
                break
        if len(found) == count:
            break
    return found
