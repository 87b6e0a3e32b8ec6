"""What a typed word means as one token of the model, and completion from the model's vocabulary.

Learners type words; the table has tokens. On GPT-2 " Tuesday" (inside a sentence,
shown "_Tuesday") and "Tuesday" (at the start of a text) are different tokens, and
the neighbour lists are full of the first kind, so a word typed without a space
means the spaced token when there is one.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left

from .errors import QueryError
from .tables import EmbeddingTable, Query

# How many completions a prefix offers.
COMPLETIONS = 20


def word_token(table: EmbeddingTable, text: str) -> Query:
    """The one token a typed word means, in the model's own spelling.

    A completion ("_Tuesday") is taken as the token it names. On a byte-level
    vocabulary (GPT-2) a word typed without a leading space means the word inside
    a sentence when that is one token: "Tuesday" is " Tuesday", id 3431, not the
    token "Tuesday" that starts a text. A word that is several tokens is refused
    with the completions it may have meant.
    """
    if not text.strip():
        raise QueryError("Type a word first.")
    index = TokenIndex.for_table(table)
    if table.vocabulary.byte_level and not text.startswith((" ", "_")):
        spaced = table.encode(" " + text.strip())
        if len(spaced) == 1:
            return table.query(spaced[0].id)
    # A typed leading space is the tokenizer's to read, not a completion's "_".
    named = None if text.startswith(" ") else index.exact(text.strip())
    if named is not None:
        return table.query(named)
    answer = table.query(text)
    if len(answer.pieces) > 1:
        # One row is asked for: its first piece ("t" of "t uesday") would answer a question nobody asked.
        shown = " ".join(p.token for p in answer.pieces)
        offers = ", ".join(t for _, t in index.complete(text, 3))
        raise QueryError(
            f"{text.strip()!r} is {len(answer.pieces)} tokens in this model ({shown}); one token is needed"
            + (f"; try {offers}." if offers else ".")
        )
    return answer


class TokenIndex:
    """Every token's readable form, sorted for completion by prefix.

    A prefix matches case-insensitively and ignores the leading "_" of a spaced
    token, so "tues" offers "_Tuesday", "_tuesday" and "Tuesday" on GPT-2.
    """

    # The index of the table last asked about (building one takes ~0.1 s for GPT-2).
    _last: tuple[weakref.ref[EmbeddingTable], TokenIndex] | None = None

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self._exact = {t: i for i, t in enumerate(tokens) if not t.startswith("<row ")}
        keyed = sorted((_key(t), i) for i, t in enumerate(tokens) if t and not t.startswith("<row "))
        self._keys = [k for k, _ in keyed]
        self._ids = [i for _, i in keyed]

    @classmethod
    def for_table(cls, table: EmbeddingTable) -> TokenIndex:
        last = cls._last
        if last is not None and last[0]() is table:
            return last[1]
        index = cls(table.tokens)
        cls._last = (weakref.ref(table), index)
        return index

    def exact(self, token: str) -> int | None:
        """The id of the token whose readable form is ``token``, if there is one."""
        return self._exact.get(token)

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
        ids = self._ids[start:end]
        ids.sort(key=lambda i: (len(_key(self.tokens[i])), _piece_order(self.tokens[i]), i))
        return [(i, self.tokens[i]) for i in ids[:limit]]


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
