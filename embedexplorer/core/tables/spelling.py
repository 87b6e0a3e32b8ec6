"""What a typed word means as one token of the model, and completion from the model's vocabulary.

Learners type words; the table has tokens. On GPT-2 " Tuesday" (inside a sentence,
shown "_Tuesday") and "Tuesday" (at the start of a text) are different tokens, and
the neighbour lists are full of the first kind, so a word typed without a space
means the spaced token when there is one. A word in double quotes ("Tuesday") is read
exactly as typed, by the tokenizer alone. The window and the command line both read
every typed word here (the command line's ``--exact`` puts the quotes on for you).
"""

from __future__ import annotations

import heapq
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from ..common.constants import COMPLETIONS  # how many completions a prefix offers
from ..common.errors import QueryError
from .embedding_table import EmbeddingTable, Query


def word_token(table: EmbeddingTable, text: str) -> Query:
    """The one token a typed word means, in the model's own spelling (every box of the window reads words so).

    A completion ("_Tuesday") is taken as the token it names. On a byte-level
    vocabulary (GPT-2) a word typed without a leading space means the word inside
    a sentence when that is one token: "Tuesday" is " Tuesday", id 3431, not the
    token "Tuesday" that starts a text. A word that is several tokens is refused
    with the completions it may have meant.
    """
    answer = _read_word(table, text)
    if len(answer.pieces) > 1:
        # One row is asked for: its first piece ("t" of "t uesday") would answer a question nobody asked.
        shown = " ".join(p.token for p in answer.pieces)
        offers = ", ".join(t for _, t in TokenIndex.for_table(table).complete(text, 3))
        raise QueryError(
            f"{_as_read(text)!r} is {len(answer.pieces)} tokens in this model ({shown}); one token is needed"
            + (f"; try {offers}." if offers else ".")
        )
    return answer


def word_or_first_token(table: EmbeddingTable, text: str) -> Query:
    """A typed word read as ``word_token`` reads it, but a word of several tokens answers with its first.

    The answer's note then says so in words a box can show on its visible line:
    "'embeddings' is 3 tokens here (_embed d ings); the first, _embed, answers for it."
    Cosine with and Directions read words so.
    """
    answer = _read_word(table, text)
    if len(answer.pieces) > 1:
        shown = " ".join(p.token for p in answer.pieces)
        count = len(answer.pieces)
        note = f"{_as_read(text)!r} is {count} tokens here ({shown}); the first, {answer.token}, answers for it."
        return Query(answer.id, answer.token, answer.pieces, note)
    return answer


def token_used(query: Query) -> str:
    """How a box names the token it used for a typed word: "_Paris (id 6342)"."""
    return f"{query.token} (id {query.id:,})"


def exactly(word: str) -> str:
    """``word`` in double quotes: the reading of exactly these characters (the command line's ``--exact``)."""
    return f'"{word}"'


def quoted_text(text: str) -> str | None:
    """What stands between the double quotes of ``"word"`` (spaces inside kept), or None when unquoted."""
    if len(text) >= 3 and text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    return None


def _as_read(text: str) -> str:
    """The word ``_read_word`` reads in ``text``, as a note names it: inside its quotes; as typed where it starts
    with a space (the tokenizer reads every space of it); else without the spaces around it."""
    literal = quoted_text(text.strip())
    if literal is not None:
        return literal
    return text if text.startswith(" ") else text.strip()


def _read_word(table: EmbeddingTable, text: str) -> Query:
    """The one rule for a typed word: quoted as typed; else a completion's name, GPT-2's spaced form first,
    else the tokenizer's reading."""
    if not text.strip():
        raise QueryError("Type a word first.")
    literal = quoted_text(text.strip())
    if literal is not None:
        # The tokenizer's own reading of exactly these characters: on GPT-2 "Paris" is the token
        # that starts a text, not the one inside a sentence.
        return table.query(literal)
    spaced_form = table.vocabulary.byte_level and not text.startswith((" ", "_"))
    if spaced_form:
        spaced = table.encode(" " + text.strip())
        if len(spaced) == 1:
            return table.query(spaced[0].id)
    # A typed leading space is the tokenizer's to read, not a completion's "_".
    named = None if text.startswith(" ") else TokenIndex.for_table(table).exact(text.strip())
    if named is not None:
        return table.query(named)
    # Several tokens either way: the pieces of the word inside a sentence, as GPT-2 reads it there.
    return table.query(" " + text.strip() if spaced_form else text)


class TokenIndex:
    """Every token's spelling, sorted for completion by prefix.

    A prefix matches case-insensitively and ignores the leading "_" of a spaced
    token, so "tues" offers "_Tuesday", "_tuesday" and "Tuesday" on GPT-2. The
    keys come from the tokenizer's stored forms (GPT-2's "Ġ" and SentencePiece's
    "▁" read as "_"), so only the tokens offered are made readable: a 152,000-token
    vocabulary is indexed in a fraction of a second.
    """

    # The index of the table last asked about.
    _last: tuple[weakref.ref[EmbeddingTable], TokenIndex] | None = None

    def __init__(self, tokens: Sequence[str], stored: Sequence[str] | None = None) -> None:
        self.tokens = tokens
        forms = tokens if stored is None else stored
        count = min(len(forms), len(tokens))
        keyed = sorted(
            (_key(_spaced(forms[i])), _piece_order(_spaced(forms[i])), i)
            for i in range(count)
            if forms[i] and not forms[i].startswith("<row ")
        )
        self._keys = [key for key, _, _ in keyed]
        self._order = [(len(key), piece, i) for key, piece, i in keyed]

    @classmethod
    def for_table(cls, table: EmbeddingTable) -> TokenIndex:
        last = cls._last
        if last is not None and last[0]() is table:
            return last[1]
        index = cls(table.tokens, table.vocabulary.facts.raw_tokens)
        cls._last = (weakref.ref(table), index)
        return index

    def exact(self, token: str) -> int | None:
        """The id of the token whose readable form is ``token``, if there is one."""
        key = _key(token)
        if not key:
            return None
        start, end = bisect_left(self._keys, key), bisect_right(self._keys, key)
        for _, _, i in self._order[start:end]:
            if self.tokens[i] == token:
                return i
        return None

    def complete(self, prefix: str, limit: int = COMPLETIONS) -> list[tuple[int, str]]:
        """Up to ``limit`` (id, token) pairs whose readable form starts with ``prefix``.

        Shorter tokens first (the whole word before its longer relatives), then
        words before pieces of words (GPT-2's spaced form first), then by id.
        """
        key = _key(prefix)
        if not key:
            return []
        start = bisect_left(self._keys, key)
        end = bisect_left(self._keys, key + "\U0010ffff")
        best = heapq.nsmallest(limit, self._order[start:end])
        return [(i, self.tokens[i]) for _, _, i in best]


def _spaced(form: str) -> str:
    """A stored token with its space mark as the readable form writes it: "ĠTuesday" -> "_Tuesday"."""
    return "_" + form[1:] if form[:1] in ("\u0120", "\u2581") else form


def _key(token: str) -> str:
    """How completion compares tokens: case-folded, without a leading space mark or word-piece hashes."""
    stripped = token.strip()
    if stripped.startswith("_"):
        stripped = stripped[1:]
    elif stripped.startswith("##"):
        stripped = stripped[2:]
    return stripped.casefold()


def _piece_order(token: str) -> int:
    """0 for a spaced word ("_Tuesday"), 1 for a bare token, 2 for a WordPiece continuation ("##day")."""
    return 0 if token.startswith("_") else 2 if token.startswith("##") else 1
