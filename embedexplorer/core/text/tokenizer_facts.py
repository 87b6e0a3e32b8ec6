"""What the engine knows of a tokenizer besides how it encodes: its facts, and its tokens when asked.

``summarise_tokenizer`` is what opening waits for; ``list_tokens`` (``tokenizer_library``) lists
tokens when something asks for them, from the tokenizer in this process or in its child
(``tokenizer_process``), which sends the summary as the plain dictionary it is read as.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from .tokenizer_library import list_tokens, read_summary

if TYPE_CHECKING:
    from tokenizers import Tokenizer


@dataclass(frozen=True)
class TokenizerTraits:
    """What the engine needs to know of a tokenizer besides how it encodes and its tokens.

    ``continuing_prefix`` is WordPiece's mark of a token that goes on a word ("##"; ""
    for other tokenizers) and ``special_ids`` its special tokens ([CLS], [PAD], ...):
    together they say which tokens start a word, which other tokenizers write with a space.
    """

    size: int
    byte_level: bool
    sentencepiece: bool
    unknown_id: int | None
    continuing_prefix: str = ""
    special_ids: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        # Shallow: asdict() would copy each of the 50,000-odd token strings once more on the way to JSON.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def traits(self) -> dict[str, Any]:
        """The fields of ``TokenizerTraits`` alone: what a summary and the facts have in common."""
        return {f.name: getattr(self, f.name) for f in fields(TokenizerTraits)}


@dataclass(frozen=True, kw_only=True)
class TokenizerFacts(TokenizerTraits):
    """The traits and every token: ``raw_tokens[i]`` is token i as the tokenizer stores it
    ("" for an id without a token); it travels as JSON from a tokenizer process."""

    raw_tokens: list[str]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenizerFacts:
        return TokenizerSummary.from_dict(data).with_tokens([str(t) for t in data["raw_tokens"]])

    def summary(self) -> TokenizerSummary:
        return TokenizerSummary(**self.traits(), top_id=len(self.raw_tokens) - 1)


@dataclass(frozen=True, kw_only=True)
class TokenizerSummary(TokenizerTraits):
    """The traits without the tokens, and the largest id: what opening waits for.

    The tokens themselves are listed when something asks for them (``Vocabulary.raw_token``):
    one neighbour query shows eleven of 50,257 (GPT-2) or 151,643 (Qwen2), and listing and
    sending them all cost a tenth of a second and more before the first answer.
    """

    top_id: int  # the largest id with a token (size - 1 when the ids have no gaps)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenizerSummary:
        unknown, size = data.get("unknown_id"), int(data["size"])
        listed = data.get("raw_tokens")
        return cls(
            size=size,
            byte_level=bool(data["byte_level"]),
            sentencepiece=bool(data["sentencepiece"]),
            unknown_id=None if unknown is None else int(unknown),
            top_id=int(data["top_id"]) if "top_id" in data else (len(listed) if listed is not None else size) - 1,
            continuing_prefix=str(data.get("continuing_prefix", "")),
            special_ids=tuple(int(i) for i in data.get("special_ids", ())),
        )

    def with_tokens(self, raw_tokens: list[str]) -> TokenizerFacts:
        return TokenizerFacts(**self.traits(), raw_tokens=raw_tokens)


def describe_tokenizer(tokenizer: Tokenizer, max_rows: int | None = None) -> TokenizerFacts:
    """Everything the engine asks of a tokenizer except encoding, in a form that travels as JSON.

    With ``max_rows`` (the table's rows), a tokenizer whose ids reach past the table is
    refused before a list as long as its largest id is built.
    """
    summary = summarise_tokenizer(tokenizer, max_rows)
    return summary.with_tokens(list_tokens(tokenizer, summary.top_id))


def summarise_tokenizer(tokenizer: Tokenizer, max_rows: int | None = None) -> TokenizerSummary:
    """``describe_tokenizer`` without listing the tokens (``list_tokens`` lists them when asked)."""
    return TokenizerSummary.from_dict(read_summary(tokenizer, max_rows))
