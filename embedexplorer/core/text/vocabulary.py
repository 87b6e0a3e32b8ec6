"""Text to token ids and back, with every token shown in a form a person can read.

GPT-2's byte-level tokens store a leading space as "Ġ" and other bytes as odd
letters; we show the space as "_" as the chapter does, and spell out any byte a
reader could not see (newlines, control characters, half a UTF-8 character).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable
from functools import cached_property, lru_cache, partial
from pathlib import Path

from ..common.errors import (
    QueryError,
    TokenizerFailedError,
    TokenizerMismatchError,
    TokenizerStartError,
)
from .tokenizer_facts import TokenizerFacts, TokenizerSummary, summarise_tokenizer
from .tokenizer_library import encode_with, list_tokens, load_tokenizer

log = logging.getLogger(__name__)

# Characters of one text the tokenizer reads: a 200,000-character paste tokenizes in about 0.2 s.
MAX_TEXT_CHARS = 200_000
# Tokens a vocabulary lists a few at a time before it lists them all in one request.
LISTED_ONE_BY_ONE = 256

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


class Vocabulary:
    """A tokenizer's facts plus a way to encode, so the engine needs only ids and readable forms.

    The encoder is either the tokenizer itself, in this process, or a
    ``TokenizerProcess`` (see ``tokenizer_process``) for callers that must
    never wait on the tokenizer's hold of the global lock. Made from a summary
    (``listing_later``), it asks for the tokens it is asked about, and for all of
    them once many are asked for or ``facts`` is read.
    """

    def __init__(
        self, facts: TokenizerFacts, encode: Callable[[str], list[int]], close: Callable[[], None] | None = None
    ) -> None:
        self._facts: TokenizerFacts | None = facts
        self._summary = facts.summary()
        self._list: Callable[[list[int] | None], list[str]] | None = None
        self._listed: dict[int, str] = {}
        self._encode = encode
        self._encode_listing: Callable[[str], tuple[list[int], list[str]]] | None = None
        self._close = close
        self.byte_level = facts.byte_level
        self.sentencepiece = facts.sentencepiece

    @classmethod
    def listing_later(
        cls,
        summary: TokenizerSummary,
        encode: Callable[[str], list[int]],
        list_tokens: Callable[[list[int] | None], list[str]],
        close: Callable[[], None] | None = None,
        encode_listing: Callable[[str], tuple[list[int], list[str]]] | None = None,
    ) -> Vocabulary:
        """A vocabulary that lists its tokens when asked: ``list_tokens(ids)`` gives tokens ``ids`` (None: all).

        ``encode_listing(text)``, when given, encodes and lists the tokens of the ids in one
        request (a tokenizer process's round trip saved for every typed word).
        """
        vocabulary = cls.__new__(cls)
        vocabulary._facts, vocabulary._summary = None, summary
        vocabulary._list, vocabulary._listed = list_tokens, {}
        vocabulary._encode, vocabulary._close = encode, close
        vocabulary._encode_listing = encode_listing
        vocabulary.byte_level, vocabulary.sentencepiece = summary.byte_level, summary.sentencepiece
        return vocabulary

    @property
    def facts(self) -> TokenizerFacts:
        """Everything about the tokenizer, every token listed (asked for once, the first time)."""
        if self._facts is None:
            assert self._list is not None
            self._facts = self._summary.with_tokens(self._checked(None, self._list(None)))
        return self._facts

    def prefetch(self, ids: list[int]) -> None:
        """List tokens ``ids`` in one request, before they are asked for one by one."""
        if self._facts is None:
            missing = sorted({int(i) for i in ids if 0 <= i <= self._summary.top_id} - self._listed.keys())
            if missing:
                self._list_some(missing)

    def _list_some(self, ids: list[int]) -> None:
        assert self._list is not None
        if len(self._listed) + len(ids) > LISTED_ONE_BY_ONE:  # many asked for: list them all at once
            _ = self.facts
            return
        self._listed.update(zip(ids, self._checked(ids, self._list(ids)), strict=True))

    def _checked(self, ids: list[int] | None, tokens: list[str]) -> list[str]:
        expected = self._summary.top_id + 1 if ids is None else len(ids)
        if len(tokens) != expected:
            raise TokenizerFailedError(f"The tokenizer listed {len(tokens):,} tokens, not the {expected:,} asked for.")
        return [str(t) for t in tokens]

    @property
    def in_child_process(self) -> bool:
        """Whether the tokenizer runs in its own process, under that process's time and memory limits."""
        from .tokenizer_process import TokenizerProcess

        return isinstance(getattr(self._encode, "__self__", None), TokenizerProcess)

    @classmethod
    def from_folder(cls, folder: Path, max_rows: int | None = None) -> Vocabulary:
        """The folder's tokenizer, built in this process (``max_rows``: see ``describe_tokenizer``)."""
        tokenizer = load_tokenizer(folder)
        summary = summarise_tokenizer(tokenizer, max_rows)
        return cls.listing_later(
            summary, partial(encode_with, tokenizer), partial(list_tokens, tokenizer, summary.top_id)
        )

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
                summary = TokenizerSummary.from_dict(process.facts())
            except TokenizerStartError as exc:
                # A child that cannot run here at all (not a bad model): keep working, in-process.
                process.close()
                log.warning("%s Reading the tokenizer in this process instead.", exc)
                return cls.from_folder(folder, max_rows)
            except BaseException:
                process.close()
                raise
            return cls.listing_later(summary, process.encode, process.tokens, process.close, process.encode_listing)

        return finish

    def close(self) -> None:
        """Stop a tokenizer process, if there is one; encoding afterwards starts it again."""
        if self._close is not None:
            self._close()

    @property
    def size(self) -> int:
        return self._summary.size

    @property
    def unknown_id(self) -> int | None:
        return self._summary.unknown_id

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``; a text longer than ``MAX_TEXT_CHARS`` is a QueryError (read a part of it)."""
        if len(text) > MAX_TEXT_CHARS:
            raise QueryError(
                f"The text is {len(text):,} characters; at most {MAX_TEXT_CHARS:,} are read at once. "
                "Use tokenize(), which reads the first part and says so, or split the text."
            )
        listed: list[str] = []
        if self._encode_listing is not None and self._facts is None:
            ids, listed = self._encode_listing(clean_text(text))
        else:
            ids = self._encode(clean_text(text))
        if ids and not 0 <= min(ids) <= max(ids) < self.size:
            # A tokenizer file replaced after the model was opened (the tokenizer process reads it
            # again), or a post-processor naming an id it does not have: never an id without a row.
            bad = next(i for i in ids if not 0 <= i < self.size)
            raise TokenizerMismatchError(
                f"The tokenizer gave token id {bad:,}, but it has {self.size:,} tokens (0 to {self.size - 1:,}); "
                "its file may have changed since the model was opened. Open the model again."
            )
        if listed and self._facts is None:
            shown = ids[: len(listed)]
            self._listed.update(zip(shown, self._checked(shown, listed), strict=True))
        return ids

    def raw_token(self, token_id: int) -> str:
        if self._facts is not None:
            raw = self._facts.raw_tokens
            return raw[token_id] if 0 <= token_id < len(raw) else ""
        if not 0 <= token_id <= self._summary.top_id:
            return ""
        if token_id not in self._listed:
            self._list_some([token_id])
            if self._facts is not None:
                return self._facts.raw_tokens[token_id]
        return self._listed[token_id]

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
        return self._summary.top_id

