"""What the engine knows of a tokenizer besides how it encodes: its facts, and its tokens when asked.

``summarise_tokenizer`` is what opening waits for; ``list_tokens`` lists tokens when something
asks for them, from the tokenizer in this process or in its child (``tokenizer_process``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..common.errors import TokenizerMismatchError

if TYPE_CHECKING:
    from tokenizers import Tokenizer


@dataclass(frozen=True)
class TokenizerFacts:
    """What the engine needs to know of a tokenizer besides how it encodes.

    ``raw_tokens[i]`` is token i as the tokenizer stores it ("" for an id
    without a token); it travels as JSON from a tokenizer process.
    ``continuing_prefix`` is WordPiece's mark of a token that goes on a word ("##"; ""
    for other tokenizers) and ``special_ids`` its special tokens ([CLS], [PAD], ...):
    together they say which tokens start a word, which other tokenizers write with a space.
    """

    raw_tokens: list[str]
    size: int
    byte_level: bool
    sentencepiece: bool
    unknown_id: int | None
    continuing_prefix: str = ""
    special_ids: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        # Shallow: asdict() would copy each of the 50,000-odd token strings once more on the way to JSON.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenizerFacts:
        return TokenizerSummary.from_dict(data).with_tokens([str(t) for t in data["raw_tokens"]])

    def summary(self) -> TokenizerSummary:
        return TokenizerSummary(
            self.size, self.byte_level, self.sentencepiece, self.unknown_id, len(self.raw_tokens) - 1,
            self.continuing_prefix, self.special_ids,
        )  # fmt: skip


@dataclass(frozen=True)
class TokenizerSummary:
    """``TokenizerFacts`` without the tokens, and the largest id: what opening waits for.

    The tokens themselves are listed when something asks for them (``Vocabulary.raw_token``):
    one neighbour query shows eleven of 50,257 (GPT-2) or 151,643 (Qwen2), and listing and
    sending them all cost a tenth of a second and more before the first answer.
    """

    size: int
    byte_level: bool
    sentencepiece: bool
    unknown_id: int | None
    top_id: int  # the largest id with a token (size - 1 when the ids have no gaps)
    continuing_prefix: str = ""
    special_ids: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

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
        return TokenizerFacts(
            raw_tokens, self.size, self.byte_level, self.sentencepiece, self.unknown_id,
            self.continuing_prefix, self.special_ids,
        )  # fmt: skip


def describe_tokenizer(tokenizer: Tokenizer, max_rows: int | None = None) -> TokenizerFacts:
    """Everything the engine asks of a tokenizer except encoding, in a form that travels as JSON.

    With ``max_rows`` (the table's rows), a tokenizer whose ids reach past the table is
    refused before a list as long as its largest id is built.
    """
    summary = summarise_tokenizer(tokenizer, max_rows)
    return summary.with_tokens(list_tokens(tokenizer, summary.top_id))


def summarise_tokenizer(tokenizer: Tokenizer, max_rows: int | None = None) -> TokenizerSummary:
    """``describe_tokenizer`` without listing the tokens (``list_tokens`` lists them when asked)."""
    size = int(tokenizer.get_vocab_size(with_added_tokens=True))
    if max_rows is not None and size > max_rows:
        # More tokens than rows: some id is past the table. Counting is cheap; listing
        # a vocabulary of millions of tokens as Python strings is not.
        raise TokenizerMismatchError(
            f"The tokenizer has {size:,} tokens but the table has only "
            f"{max_rows:,} rows: they do not belong to the same model."
        )
    top = _top_id(tokenizer, size)
    if max_rows is not None and top >= max_rows:
        raise TokenizerMismatchError(
            f"The tokenizer has ids up to {top:,} but the table has only "
            f"{max_rows:,} rows: they do not belong to the same model."
        )
    # The decoder's own state is a few bytes; serialising the whole tokenizer would take far longer.
    decoder = tokenizer.decoder
    decoder_text = decoder.__getstate__().decode("utf-8", "replace") if decoder is not None else ""
    return TokenizerSummary(
        size=size,
        byte_level='"ByteLevel"' in decoder_text,
        sentencepiece='"Metaspace"' in decoder_text,
        unknown_id=_unknown_id(tokenizer),
        top_id=top,
        **_word_piece_marks(tokenizer, decoder_text),
    )


def list_tokens(tokenizer: Tokenizer, top_id: int, ids: list[int] | None = None) -> list[str]:
    """Tokens ``ids`` as the tokenizer stores them (every id to ``top_id`` when None); "" for an id without one.

    Asked id by id: twice as quick as building ``get_vocab``'s dictionary and turning it
    round (152,000 tokens: a quarter of a second on a busy machine).
    """
    to_token = tokenizer.id_to_token
    wanted = range(top_id + 1) if ids is None else ids
    return [(to_token(i) or "") if 0 <= i <= top_id else "" for i in wanted]


def _top_id(tokenizer: Tokenizer, size: int) -> int:
    """The largest id with a token: ``size - 1`` when the ids look like 0..size-1, else read from the vocabulary.

    ``size`` distinct ids reaching past ``size - 1`` leave some id below it without a token;
    the last is the one looked at (a file whose only gap is elsewhere gets its far ids refused
    by ``Vocabulary.encode``, which lets no id past ``size`` through, and lists no token past here).
    """
    try:
        added = tokenizer.get_added_tokens_decoder()
        top = max([int(tokenizer.get_vocab_size(with_added_tokens=False)) - 1, *added])
    except (AttributeError, TypeError, ValueError):  # an older tokenizers library
        top = -2
    if top + 1 == size and (size == 0 or tokenizer.id_to_token(top) is not None):
        return top
    vocab = tokenizer.get_vocab(with_added_tokens=True)  # ids with gaps: rare, and read whole
    return max(vocab.values()) if vocab else -1


def _word_piece_marks(tokenizer: Tokenizer, decoder_text: str) -> dict[str, Any]:
    """WordPiece's continuing prefix and special ids (see ``TokenizerFacts``); nothing for other tokenizers."""
    if '"WordPiece"' not in decoder_text:
        return {}
    prefix = getattr(tokenizer.model, "continuing_subword_prefix", None) or "##"
    try:
        added = tokenizer.get_added_tokens_decoder()
    except AttributeError:  # an older tokenizers library
        added = {}
    return {"continuing_prefix": str(prefix), "special_ids": tuple(sorted(i for i, t in added.items() if t.special))}


def _unknown_id(tokenizer: Tokenizer) -> int | None:
    model = tokenizer.model
    unk = getattr(model, "unk_token", None)  # WordPiece and BPE say it directly
    if unk is None and type(model).__name__ == "Unigram":
        unk_id = (json.loads(tokenizer.to_str()).get("model") or {}).get("unk_id")
        return None if unk_id is None else int(unk_id)
    found = None if unk is None else tokenizer.token_to_id(str(unk))
    return None if found is None else int(found)
