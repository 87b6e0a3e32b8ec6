"""What a text becomes: its tokens, how many of them the position table has rows for, and a note.

Tokenizing is fast (100,000 characters take about 0.1 s), but turning tens of thousands
of ids into readable tokens, or drawing them, is not, and a paste can be any size. So a
report reads at most ``MAX_TEXT_CHARS`` characters, counts every token of them, and makes
readable only the tokens to show: those that have a position row, at most
``MAX_SHOWN_TOKENS`` of them. The note says in plain words whatever was left out and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .vocabulary import MAX_TEXT_CHARS, Vocabulary, make_visible

# Tokens made readable and returned for display; GPT-2's whole context (1,024) fits.
MAX_SHOWN_TOKENS = 2_048


@dataclass(frozen=True)
class Token:
    """One token of a text: its id, readable form and the characters it stands for."""

    id: int
    token: str
    text: str


class TokenSource(Protocol):
    """What a report needs of a table: its tokenizer, its position rows, readable tokens."""

    @property
    def vocabulary(self) -> Vocabulary: ...

    @property
    def position_count(self) -> int | None: ...

    def token(self, token_id: int) -> Token: ...


@dataclass(frozen=True)
class TokenReport:
    """The tokens of a text as the model would read it, and what did not fit.

    Attributes
    ----------
    tokens:
        The tokens to show, from the start of the text.
    count:
        Tokens in the text that was read (``chars_read`` characters).
    position_rows:
        Rows in the learned position table, or None when the model has none.
    fits:
        Tokens that have a position row: ``min(count, position_rows)``, or ``count``.
    chars, chars_read:
        Characters in the text as given, and how many of them were tokenized.
    unknown:
        How many tokens are the tokenizer's unknown token (WordPiece's ``[UNK]``).
    note:
        Plain words about anything a reader should know: empty text, unknown
        characters, tokens past the last position row, text or tokens left out.
    """

    tokens: tuple[Token, ...]
    count: int
    position_rows: int | None
    fits: int
    chars: int
    chars_read: int
    unknown: int
    note: str

    @property
    def complete(self) -> bool:
        """True when every character was read and every token is in ``tokens``."""
        return self.chars_read == self.chars and len(self.tokens) == self.count


def fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, never "-0.000": a tiny negative mean reads as zero."""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def token_report(
    table: TokenSource,
    text: str,
    *,
    max_chars: int = MAX_TEXT_CHARS,
    max_shown: int | None = MAX_SHOWN_TOKENS,
    only_fitting: bool = True,
) -> TokenReport:
    """Tokenize ``text`` for display: count all tokens, show those with a position row.

    ``max_shown=None`` and ``only_fitting=False`` return every token of the text read.
    Never raises for any text: a text without tokens gives an empty report and a note.
    """
    read = text[:max_chars]
    ids = table.vocabulary.encode(read)
    count = len(ids)
    rows = table.position_count
    fits = count if rows is None else min(count, rows)
    shown = fits if only_fitting else count
    if max_shown is not None:
        shown = min(shown, max_shown)
    unknown_id = table.vocabulary.unknown_id
    unknown = 0 if unknown_id is None else sum(1 for i in ids if i == unknown_id)
    table.vocabulary.prefetch(ids[:shown])
    tokens = tuple(table.token(i) for i in ids[:shown])

    notes: list[str] = []
    if len(read) < len(text):
        notes.append(f"Only the first {len(read):,} of {len(text):,} characters were read.")
    if count == 0:
        notes.append(_no_token_note(text))
    if unknown:
        unk = table.token(unknown_id).token if unknown_id is not None else "[UNK]"
        notes.append(
            f"{unknown:,} of the {count:,} tokens are {unk}: the vocabulary has no token "
            "for those characters, so they all share one row."
        )
    if rows is not None and count > rows:
        notes.append(
            f"The text is {count:,} tokens, but the position table has {rows:,} rows: there is "
            f"no row for position {rows + 1:,}, so only the first {rows:,} tokens fit"
            + (" (shown)." if only_fitting and len(tokens) == fits else ".")
        )
    if len(tokens) < count and len(tokens) != fits:
        notes.append(f"Showing the first {len(tokens):,} of {count:,} tokens.")
    return TokenReport(tokens, count, rows, fits, len(text), len(read), unknown, " ".join(notes))


def _no_token_note(text: str) -> str:
    if not text:
        return "The text is empty; type a word."
    if not text.strip():
        return "The text is only spaces, and this tokenizer drops spaces; type a word."
    return (
        f"The tokenizer drops every character of {make_visible(text[:40])} "
        "(control or invisible characters); type a word."
    )
