"""Two texts side by side: one token picked in each, their rows, position rows and what enters layer 1.

The chapter: "The word 'bank' gets the same row in 'the river bank' and in 'my bank
account'." Same token id means the same table row (cosine 1.000); only the position
row, and so the sum, differs. On GPT-2 the same word can also be two tokens: " bank"
(3331) inside a sentence and "bank" (17796) at the start of a text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..common.errors import QueryError
from ..layers.layer_input import LayerInput, Recipe, layer_input
from ..search.neighbours import cosine
from ..tables.embedding_table import EmbeddingTable
from ..text.texts import Token, fixed


@dataclass(frozen=True)
class Side:
    """One text and the token picked in it."""

    text: str
    token: Token
    input: LayerInput


@dataclass(frozen=True)
class TwoTokens:
    """The two picked tokens compared."""

    first: Side
    second: Side
    row_cosine: float
    sum_cosine: float | None
    # False for a table without position rows (a rotary model's GGUF, say): a place changes nothing here.
    has_positions: bool = True

    @property
    def same_id(self) -> bool:
        return self.first.token.id == self.second.token.id

    def verdict(self) -> str:
        """One sentence: same id and row, or different tokens, and why when it is only the spelling."""
        a, b = self.first.token, self.second.token
        if self.same_id and not self.has_positions:
            return (
                f"Same token id {a.id:,} ({a.token}): the same table row, cosine {fixed(self.row_cosine, 3)}. "
                "This table has no position rows, so what enters layer 1 is the same too, wherever it stands."
            )
        if self.same_id:
            return (
                f"Same token id {a.id:,} ({a.token}): the same table row, cosine {fixed(self.row_cosine, 3)}. "
                "Only the position row differs, and with it the sum."
                if self.first.input.position_index != self.second.input.position_index
                else f"Same token id {a.id:,} ({a.token}) at the same place: the same row and the same sum."
            )
        sentence = (
            f"Different tokens: {a.token} is id {a.id:,}, {b.token} is id {b.id:,}; "
            f"their rows have cosine {fixed(self.row_cosine, 3)}."
        )
        return f"{sentence} {spelling_note(a, b)}".strip()


def spelling_note(a: Token, b: Token) -> str:
    """Why two tokens of the same word differ, when it is only a space or the case."""
    if a.id == b.id or a.text.strip().casefold() != b.text.strip().casefold() or not a.text.strip():
        return ""
    space_a, space_b = a.text.startswith(" "), b.text.startswith(" ")
    if space_a != space_b:
        spaced, bare = (a, b) if space_a else (b, a)
        return (
            f"They are the same word spelled two ways: {spaced.text!r} (id {spaced.id:,}) is the word inside a "
            f"sentence, with its space; {bare.text!r} (id {bare.id:,}) has no space, as at the start of a text."
        )
    return f"They are the same word in a different case: {a.text!r} and {b.text!r} are separate tokens."


def pick(table: EmbeddingTable, text: str, place: int) -> Token:
    """The token at 0-based ``place`` of ``text``, or a QueryError saying how many tokens there are."""
    tokens = table.encode(text)
    if not tokens:
        raise QueryError("One of the two texts has no tokens; type a text in each box.")
    if not 0 <= place < len(tokens):
        raise QueryError(f"{text!r} has {len(tokens)} token(s); there is no place {place + 1}.")
    return tokens[place]


def find_word(table: EmbeddingTable, text: str, word: str) -> int | None:
    """The 0-based place of the first token of ``text`` that spells ``word`` (space and case ignored)."""
    wanted = word_key(word)
    if not wanted:
        return None
    for place, token in enumerate(table.encode(text)):
        if word_key(token.text) == wanted:
            return place
    return None


def word_key(text: str) -> str:
    """How two tokens are matched as one word: without spaces, WordPiece's "##" or case."""
    return text.strip().removeprefix("##").casefold()


def compare(
    table: EmbeddingTable, recipe: Recipe, text_a: str, place_a: int, text_b: str, place_b: int
) -> TwoTokens:
    """Compare the token at ``place_a`` of ``text_a`` with the one at ``place_b`` of ``text_b``."""
    token_a, token_b = pick(table, text_a, place_a), pick(table, text_b, place_b)
    first = Side(text_a, token_a, layer_input(table, recipe, token_a.id, place_a))
    second = Side(text_b, token_b, layer_input(table, recipe, token_b.id, place_b))
    row_cosine = 1.0 if token_a.id == token_b.id else table.cosine(token_a.id, token_b.id)
    enters_a, enters_b = first.input.enters, second.input.enters
    sum_cosine = None if enters_a is None or enters_b is None else cosine(enters_a, enters_b)
    return TwoTokens(first, second, row_cosine, sum_cosine, table.positions is not None)
