"""Text to token ids and back, with every token shown in a form a person can read.

GPT-2's byte-level tokens store a leading space as "Ġ" and other bytes as odd
letters; we show the space as "_" as the chapter does, and spell out any byte a
reader could not see (newlines, control characters, half a UTF-8 character).
"""

from __future__ import annotations

import json
import logging
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..common.errors import (
    EmbedExplorerError,
    ModelNotFoundError,
    QueryError,
    TokenizerFailedError,
    TokenizerMismatchError,
    TokenizerStartError,
)
from ..common.files import TOKENIZER_FILE_LIMIT, check_regular, read_regular

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# Characters of one text the tokenizer reads: a 200,000-character paste tokenizes in about 0.2 s.
MAX_TEXT_CHARS = 200_000

_VISIBLE_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


@lru_cache(maxsize=1)
def _byte_level_decoder() -> dict[str, int]:
    """Inverse of GPT-2's byte -> printable character table."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = list(printable)
    shift = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + shift)
            shift += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=False)}


@lru_cache(maxsize=1)
def _byte_level_translation() -> tuple[frozenset[str], dict[int, int]]:
    """The byte-level characters, and ``str.translate``'s table from each to its byte as a
    Latin-1 character: decoding a whole vocabulary then runs in C, not a loop per character."""
    decoder = _byte_level_decoder()
    return frozenset(decoder), {ord(char): byte for char, byte in decoder.items()}


def make_visible(text: str) -> str:
    """Show spaces as "_" and spell out characters that print as nothing."""
    out = []
    for char in text:
        if char == " ":
            out.append("_")
        elif char in _VISIBLE_ESCAPES:
            out.append(_VISIBLE_ESCAPES[char])
        elif 0xDC80 <= ord(char) <= 0xDCFF:  # a lone byte of an unfinished UTF-8 character
            out.append(f"<0x{ord(char) - 0xDC00:02X}>")
        elif unicodedata.category(char) in {"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn", "Cs"}:
            out.append(f"<U+{ord(char):04X}>")
        else:
            out.append(char)
    return "".join(out) or "<empty>"


def clean_text(text: str) -> str:
    """Text the tokenizer can take: lone surrogates become the characters they stand for, or U+FFFD.

    Python strings may hold lone surrogates (a command-line argument that was not valid
    UTF-8 arrives that way) and the Rust tokenizer refuses them with a TypeError.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        if _only_escapes(text):
            # surrogateescape turns argv's undecodable bytes back into bytes; what is
            # still not UTF-8 after that becomes the replacement character.
            return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
        # Pairs of surrogates join into one character through UTF-16; lone ones become U+FFFD.
        return text.encode("utf-16-le", errors="surrogatepass").decode("utf-16-le", errors="replace")


def _only_escapes(text: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


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
        unknown = data.get("unknown_id")
        return cls(
            raw_tokens=[str(t) for t in data["raw_tokens"]],
            size=int(data["size"]),
            byte_level=bool(data["byte_level"]),
            sentencepiece=bool(data["sentencepiece"]),
            unknown_id=None if unknown is None else int(unknown),
            continuing_prefix=str(data.get("continuing_prefix", "")),
            special_ids=tuple(int(i) for i in data.get("special_ids", ())),
        )


# Files a tokenizer may be built from when there is no tokenizer.json (transformers reads them).
TOKENIZER_SOURCE_FILES = (
    "tokenizer.model",
    "spiece.model",
    "sentencepiece.bpe.model",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
)
TOKENIZER_SIDE_FILES = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")


def load_tokenizer(folder: Path) -> Tokenizer:
    """The folder's fast tokenizer, set to keep every token (no padding, no truncation)."""
    tokenizer_file = folder / "tokenizer.json"
    if tokenizer_file.exists():
        from tokenizers import Tokenizer

        data = read_regular(tokenizer_file, "tokenizer file", TOKENIZER_FILE_LIMIT, EmbedExplorerError)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EmbedExplorerError(f"Cannot read {tokenizer_file}: it is not UTF-8 text.") from exc
        tokenizer = rust_call(lambda: Tokenizer.from_str(text), f"Cannot read {tokenizer_file}")
    else:
        tokenizer = _backend_from_transformers(folder)
    # Saved tokenizers may pad or cut every text to a fixed length; we want all tokens.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


T = TypeVar("T")


def rust_call(call: Callable[[], T], failure: str, error: type[EmbedExplorerError] = EmbedExplorerError) -> T:
    """Run a call into the Rust tokenizers library; its errors and panics become one plain line.

    A panic inside the library reaches Python as ``PanicException``, which derives
    from BaseException, not Exception, so a plain ``except Exception`` would let it
    through as a traceback.
    """
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the Rust side raises plain Exception
        raise error(f"{failure}: {one_line(str(exc))}") from exc
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        raise TokenizerFailedError(f"{failure}: the tokenizer library failed inside ({one_line(str(exc))}).") from None


def one_line(text: str, limit: int = 300) -> str:
    """The first line of ``text``, at most ``limit`` characters."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def describe_tokenizer(tokenizer: Tokenizer, max_rows: int | None = None) -> TokenizerFacts:
    """Everything the engine asks of a tokenizer except encoding, in a form that travels as JSON.

    With ``max_rows`` (the table's rows), a tokenizer whose ids reach past the table is
    refused before a list as long as its largest id is built.
    """
    size = int(tokenizer.get_vocab_size(with_added_tokens=True))
    if max_rows is not None and size > max_rows:
        # More tokens than rows: some id is past the table. Counting is cheap; listing
        # a vocabulary of millions of tokens as Python strings is not.
        raise TokenizerMismatchError(
            f"The tokenizer has {size:,} tokens but the table has only "
            f"{max_rows:,} rows: they do not belong to the same model."
        )
    raw_tokens = _tokens_by_id(tokenizer, size)
    if raw_tokens is None:  # ids with gaps: every token and its id, from the whole vocabulary
        vocab = tokenizer.get_vocab(with_added_tokens=True)
        top = max(vocab.values()) if vocab else -1
        if max_rows is not None and top >= max_rows:
            raise TokenizerMismatchError(
                f"The tokenizer has ids up to {top:,} but the table has only "
                f"{max_rows:,} rows: they do not belong to the same model."
            )
        raw_tokens = [""] * (top + 1)
        for token, token_id in vocab.items():
            raw_tokens[token_id] = token
    # The decoder's own state is a few bytes; serialising the whole tokenizer would take far longer.
    decoder = tokenizer.decoder
    decoder_text = decoder.__getstate__().decode("utf-8", "replace") if decoder is not None else ""
    return TokenizerFacts(
        raw_tokens=raw_tokens,
        size=size,
        byte_level='"ByteLevel"' in decoder_text,
        sentencepiece='"Metaspace"' in decoder_text,
        unknown_id=_unknown_id(tokenizer),
        **_word_piece_marks(tokenizer, decoder_text),
    )


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


def _tokens_by_id(tokenizer: Tokenizer, size: int) -> list[str] | None:
    """Every token in id order, asked id by id, when the ids run 0..size-1 without gaps; else None.

    Twice as quick as building ``get_vocab``'s dictionary and turning it round (152,000
    tokens: a quarter of a second on a busy machine), and opening waits for it.
    """
    try:
        added = tokenizer.get_added_tokens_decoder()
        top = max([int(tokenizer.get_vocab_size(with_added_tokens=False)) - 1, *added])
    except (AttributeError, TypeError, ValueError):  # an older tokenizers library
        return None
    if top + 1 != size:
        return None
    to_token = tokenizer.id_to_token
    tokens = [to_token(token_id) for token_id in range(size)]
    return None if None in tokens else tokens  # type: ignore[return-value]


def _unknown_id(tokenizer: Tokenizer) -> int | None:
    model = tokenizer.model
    unk = getattr(model, "unk_token", None)  # WordPiece and BPE say it directly
    if unk is None and type(model).__name__ == "Unigram":
        unk_id = (json.loads(tokenizer.to_str()).get("model") or {}).get("unk_id")
        return None if unk_id is None else int(unk_id)
    found = None if unk is None else tokenizer.token_to_id(str(unk))
    return None if found is None else int(found)


def encode_with(tokenizer: Tokenizer, text: str) -> list[int]:
    """Ids of ``text``, which must already be clean (see ``clean_text``); no special tokens added."""
    encoding = rust_call(
        lambda: tokenizer.encode(text, add_special_tokens=False),
        "The tokenizer cannot read this text",
        TokenizerFailedError,
    )
    return list(encoding.ids)


class Vocabulary:
    """A tokenizer's facts plus a way to encode, so the engine needs only ids and readable forms.

    The encoder is either the tokenizer itself, in this process, or a
    ``TokenizerProcess`` (see ``tokenizer_process``) for callers that must
    never wait on the tokenizer's hold of the global lock.
    """

    def __init__(
        self, facts: TokenizerFacts, encode: Callable[[str], list[int]], close: Callable[[], None] | None = None
    ) -> None:
        self.facts = facts
        self._encode = encode
        self._close = close
        self.byte_level = facts.byte_level
        self.sentencepiece = facts.sentencepiece

    @property
    def in_child_process(self) -> bool:
        """Whether the tokenizer runs in its own process, under that process's time and memory limits."""
        from .tokenizer_process import TokenizerProcess

        return isinstance(getattr(self._encode, "__self__", None), TokenizerProcess)

    @classmethod
    def from_folder(cls, folder: Path, max_rows: int | None = None) -> Vocabulary:
        """The folder's tokenizer, built in this process (``max_rows``: see ``describe_tokenizer``)."""
        tokenizer = load_tokenizer(folder)
        return cls(describe_tokenizer(tokenizer, max_rows), partial(encode_with, tokenizer))

    @classmethod
    def start(
        cls, folder: Path, separate_process: bool = False, max_rows: int | None = None
    ) -> Callable[[], Vocabulary]:
        """Begin reading the folder's tokenizer; the returned function gives the Vocabulary.

        Either way it loads while the caller goes on (maps and prepares the table) and the
        function waits for it and raises its errors: on a thread of this process, or in a
        separate process.
        """
        if not separate_process:
            from ..common.background import Background

            return Background(lambda: cls.from_folder(folder, max_rows), "embedexplorer-tokenizer").result
        from .tokenizer_process import TokenizerProcess, take_early

        process = take_early(folder, max_rows) or TokenizerProcess(folder, max_rows)

        def finish() -> Vocabulary:
            try:
                facts = TokenizerFacts.from_dict(process.facts())
            except TokenizerStartError as exc:
                # A child that cannot run here at all (not a bad model): keep working, in-process.
                process.close()
                log.warning("%s Reading the tokenizer in this process instead.", exc)
                return cls.from_folder(folder, max_rows)
            except BaseException:
                process.close()
                raise
            return cls(facts, process.encode, process.close)

        return finish

    def close(self) -> None:
        """Stop a tokenizer process, if there is one; encoding afterwards starts it again."""
        if self._close is not None:
            self._close()

    @property
    def size(self) -> int:
        return self.facts.size

    @property
    def unknown_id(self) -> int | None:
        return self.facts.unknown_id

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``; a text longer than ``MAX_TEXT_CHARS`` is a QueryError (read a part of it)."""
        if len(text) > MAX_TEXT_CHARS:
            raise QueryError(
                f"The text is {len(text):,} characters; at most {MAX_TEXT_CHARS:,} are read at once. "
                "Use tokenize(), which reads the first part and says so, or split the text."
            )
        ids = self._encode(clean_text(text))
        if ids and not 0 <= min(ids) <= max(ids) < self.size:
            # A tokenizer file replaced after the model was opened (the tokenizer process reads it
            # again), or a post-processor naming an id it does not have: never an id without a row.
            bad = next(i for i in ids if not 0 <= i < self.size)
            raise TokenizerMismatchError(
                f"The tokenizer gave token id {bad:,}, but it has {self.size:,} tokens (0 to {self.size - 1:,}); "
                "its file may have changed since the model was opened. Open the model again."
            )
        return ids

    def raw_token(self, token_id: int) -> str:
        raw = self.facts.raw_tokens
        return raw[token_id] if 0 <= token_id < len(raw) else ""

    def text_of(self, token_id: int) -> str:
        """The characters a token stands for (a lone byte becomes a surrogate escape)."""
        raw = self.raw_token(token_id)
        if self.byte_level:
            known, to_bytes = _byte_level_translation()
            if known.issuperset(raw):
                data = raw.translate(to_bytes).encode("latin-1")
                return data.decode("utf-8", errors="surrogateescape")
        if self.sentencepiece:
            return raw.replace("\u2581", " ")
        return raw

    def readable(self, token_id: int) -> str:
        return make_visible(self.text_of(token_id))

    def token_id(self, token: str) -> int | None:
        return self._ids.get(token)

    @cached_property
    def _ids(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.facts.raw_tokens) if token}

    def max_id(self) -> int:
        return len(self.facts.raw_tokens) - 1


def _backend_from_transformers(folder: Path) -> Tokenizer:
    """Folders without tokenizer.json: let transformers build the fast tokenizer."""
    sources = [folder / name for name in TOKENIZER_SOURCE_FILES if (folder / name).exists()]
    if not sources:
        raise ModelNotFoundError(
            f"{folder} has no tokenizer that can be read: the tokenizer is missing (no tokenizer.json, "
            "vocab.txt, vocab.json, merges.txt or tokenizer.model). Copy the model's tokenizer files "
            "beside its weights."
        )
    # transformers reads these itself: make sure none is a FIFO, a device or absurdly large.
    for file in sources + [folder / name for name in TOKENIZER_SIDE_FILES if (folder / name).exists()]:
        check_regular(file, "tokenizer file", TOKENIZER_FILE_LIMIT, ModelNotFoundError)
    try:
        from transformers import AutoTokenizer

        wrapper = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - transformers raises many types here
        raise ModelNotFoundError(f"{folder} has no tokenizer that can be read: {one_line(str(exc))}") from exc
    backend = getattr(wrapper, "backend_tokenizer", None)
    if backend is None:
        raise ModelNotFoundError(f"{folder} has only a slow tokenizer, which is not supported.")
    return backend
