"""Which rows of two tables stand for the same token: by id when the vocabularies are one, else by text."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..tables.embedding_table import EmbeddingTable
from ..text.vocabulary import Vocabulary


@dataclass(frozen=True)
class TokenMatch:
    """Rows of A and of B that stand for the same token, in A's id order.

    ``by`` is "id" (the same vocabulary: row i is row i) or "text" (the token's characters).
    """

    ids_a: np.ndarray
    ids_b: np.ndarray
    by: str
    only_a: int  # tokens of A with no partner in B
    only_b: int

    def __len__(self) -> int:
        return int(self.ids_a.size)

    def sentence(self) -> str:
        how = "by id (the same vocabulary)" if self.by == "id" else "by the text they stand for"
        return f"{len(self):,} tokens matched {how}; {self.only_a:,} only in A, {self.only_b:,} only in B."


def match_tokens(a: EmbeddingTable, b: EmbeddingTable) -> TokenMatch:
    """Pair the tokens of two tables; rows the tokenizer never uses are paired only by id."""
    rows_a, rows_b = int(a.rows.shape[0]), int(b.rows.shape[0])
    if list(a.vocabulary.facts.raw_tokens) == list(b.vocabulary.facts.raw_tokens):
        shared = min(rows_a, rows_b)
        ids = np.arange(shared, dtype=np.int64)
        return TokenMatch(ids, ids, "id", rows_a - shared, rows_b - shared)
    text_a, text_b = matching_text(a.vocabulary), matching_text(b.vocabulary)
    in_b: dict[str, int] = {}
    for token_id in range(min(b.vocabulary.size, rows_b)):
        text = text_b(token_id)
        if text:
            in_b.setdefault(text, token_id)
    pairs_a: list[int] = []
    pairs_b: list[int] = []
    for token_id in range(min(a.vocabulary.size, rows_a)):
        partner = in_b.pop(text_a(token_id) or "\0none", None)
        if partner is not None:
            pairs_a.append(token_id)
            pairs_b.append(partner)
    ids_a, ids_b = np.asarray(pairs_a, dtype=np.int64), np.asarray(pairs_b, dtype=np.int64)
    return TokenMatch(ids_a, ids_b, "text", rows_a - ids_a.size, rows_b - ids_b.size)


def matching_text(vocabulary: Vocabulary) -> Callable[[int], str]:
    """The text each token stands for, written the same way for every kind of tokenizer.

    WordPiece (BERT, MiniLM) writes a token that starts a word bare ("the") and one that
    goes on a word with "##" ("##ing"); llama.cpp's converter writes the same vocabulary as
    "▁the" and "ing", and GPT-2 as "Ġthe". So a WordPiece token that starts a word stands
    for " the" and "##ing" for "ing"; special tokens ([CLS]) stay as they are. Bracketed
    names such as "[unused0]" are matched without a leading space: older versions of the
    converter wrote them bare (llama.cpp's own ggml-vocab-bert-bge.gguf), newer ones "▁[unused0]".
    """
    prefix = vocabulary.facts.continuing_prefix
    if not prefix:
        return lambda token_id: _bare_name(vocabulary.text_of(token_id))
    special = frozenset(vocabulary.facts.special_ids)
    raw = vocabulary.facts.raw_tokens

    def text_of(token_id: int) -> str:
        token = raw[token_id] if token_id < len(raw) else ""
        if not token or token_id in special:
            return token
        return token[len(prefix) :] if token.startswith(prefix) else _bare_name(" " + token)

    return text_of


_NAME = re.compile(r" \[\w+\]")


def _bare_name(text: str) -> str:
    return text[1:] if _NAME.fullmatch(text) else text
