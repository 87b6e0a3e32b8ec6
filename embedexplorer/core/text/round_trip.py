"""Which tokens a tokenizer can give back: decode each token, encode the text again, compare.

A token whose text never encodes back to it is *unreachable*: no text a person types
produces it, so it never appeared in training text and its row was never trained for
itself (Land & Bartolo, "Fishing for Magikarp", 2024, section 3.1). A token that
continues a word (WordPiece's "##ing", a piece without SentencePiece's leading space)
only comes back after a word start, so the text is also tried behind a few *anchors*
(one-token texts that merge with nothing): ``encode(anchor + text) == encode(anchor) + [id]``.

The checks run where the tokenizer runs: in the tokenizer's child process
(``tokenizer_child``), for a tokenizer.json (``hf_round_trip``) and for a GGUF file's
own tokenizer as llama.cpp rebuilds it (``gguf_round_trip``). Nothing here reads a
token's spelling to judge it, except where the tokenizer itself defines a kind by it
(SentencePiece's byte tokens are spelled "<0xAB>").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .vocabulary import _byte_level_translation

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from .llama_vocab import LlamaTokenizer

# Tokens checked per request to the child: one batch is answered in well under a second.
ROUND_TRIP_BATCH = 4096
# Texts tried in front of a token that only continues a word; the first three the tokenizer
# reads as tokens of their own (and not as its unknown token) are kept.
ANCHOR_CANDIDATES = ("\u00ab", "\u0436", "\u03c8", "\u05e7", "\u00a7", "q", "x")
_BYTE_SPELLING = re.compile(r"<0x[0-9A-Fa-f]{2}>")
# What one batch's answer holds, by name: lists of token ids.
KINDS = ("unreachable", "partial", "special", "byte", "failed")


@dataclass
class TokenPiece:
    """What decoding one token gave: its text, whether it needs a word start before it, its bytes."""

    text: str
    needs_anchor: bool = False
    partial: bool = False  # its bytes end or start inside a UTF-8 character
    byte: bool = False  # a token that stands for one raw byte
    special: bool = False  # a control or special token (the program adds it, text does not)


@dataclass
class RoundTripper:
    """Checks tokens one batch at a time with a tokenizer's own decode and encode."""

    size: int
    piece: Callable[[int], TokenPiece]
    encode: Callable[[str], list[int]]
    unknown_id: int | None = None
    encode_many: Callable[[list[str]], list[list[int]]] | None = None
    anchors: list[tuple[str, list[int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.anchors:
            self.anchors = self._find_anchors()

    def _find_anchors(self) -> list[tuple[str, list[int]]]:
        found: list[tuple[str, list[int]]] = []
        for text in ANCHOR_CANDIDATES:
            try:
                ids = self.encode(text)
            except Exception:  # noqa: BLE001 - a tokenizer that cannot read it offers no anchor
                continue
            if ids and self.unknown_id not in ids:
                found.append((text, ids))
            if len(found) == 3:
                break
        return found

    def check(self, start: int, stop: int) -> dict[str, list[int]]:
        """Ids in ``start..stop-1`` by what the round trip found (see ``KINDS``)."""
        out: dict[str, list[int]] = {kind: [] for kind in KINDS}
        pieces: list[tuple[int, TokenPiece]] = []
        for token_id in range(max(0, start), min(stop, self.size)):
            try:
                piece = self.piece(token_id)
            except Exception:  # noqa: BLE001 - one token the decoder refuses is one fact, not the end
                out["failed"].append(token_id)
                continue
            for kind, flag in (("partial", piece.partial), ("byte", piece.byte), ("special", piece.special)):
                if flag:
                    out[kind].append(token_id)
            pieces.append((token_id, piece))
        plain = [(i, p) for i, p in pieces if not p.needs_anchor and p.text]
        back = self._encode_all([p.text for _, p in plain], out, [i for i, _ in plain])
        left = [(i, p) for (i, p), ids in zip(plain, back, strict=True) if ids != [i]]
        left += [(i, p) for i, p in pieces if p.needs_anchor and p.text]
        for anchor, anchor_ids in self.anchors:
            if not left:
                break
            back = self._encode_all([anchor + p.text for _, p in left], out, [i for i, _ in left])
            left = [(i, p) for (i, p), ids in zip(left, back, strict=True) if ids != [*anchor_ids, i]]
        failed = set(out["failed"])
        out["unreachable"] = sorted(
            {i for i, _ in left if i not in failed} | {i for i, p in pieces if not p.text and i not in failed}
        )
        return out

    def _encode_all(self, texts: list[str], out: dict[str, list[int]], ids: list[int]) -> list[list[int] | None]:
        """Each text's ids; a text the tokenizer fails on gives None and its token is noted as failed."""
        if self.encode_many is not None and texts:
            try:
                return list(self.encode_many(texts))
            except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException: go text by text
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
        answers: list[list[int] | None] = []
        for token_id, text in zip(ids, texts, strict=True):
            try:
                answers.append(self.encode(text))
            except BaseException as exc:  # noqa: BLE001 - as above, for the one text
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                answers.append(None)
                if token_id not in out["failed"]:
                    out["failed"].append(token_id)
        return answers


# ----- the tokenizers library (tokenizer.json) ---------------------------------------------
def hf_round_trip(tokenizer: Tokenizer) -> RoundTripper:
    """A ``RoundTripper`` for a tokenizers-library tokenizer (padding and truncation already off)."""
    import json

    size = int(tokenizer.get_vocab_size(with_added_tokens=True))
    try:
        added = tokenizer.get_added_tokens_decoder()
    except AttributeError:
        added = {}
    special = {int(i) for i, t in added.items() if t.special}
    model = json.loads(tokenizer.to_str()).get("model") or {}
    byte_fallback = bool(model.get("byte_fallback"))
    prefix = str(model.get("continuing_subword_prefix") or "") if model.get("type") == "WordPiece" else ""
    decoder_state = tokenizer.decoder.__getstate__().decode("utf-8", "replace") if tokenizer.decoder else ""
    byte_level = '"ByteLevel"' in decoder_state
    known, to_bytes = _byte_level_translation()

    def piece(token_id: int) -> TokenPiece:
        raw = tokenizer.id_to_token(token_id) or ""
        if prefix and raw.startswith(prefix) and token_id not in added and len(raw) > len(prefix):
            text, anchored = raw[len(prefix) :], True
        else:
            text, anchored = tokenizer.decode([token_id], skip_special_tokens=False), False
        data = None
        if byte_level and raw and known.issuperset(raw) and token_id not in added:
            data = raw.translate(to_bytes).encode("latin-1")
        partial = _partial_bytes(data) if data is not None else ("\ufffd" in text and "\ufffd" not in raw)
        byte = (byte_fallback and bool(_BYTE_SPELLING.fullmatch(raw))) or (data is not None and len(data) == 1)
        return TokenPiece(text, anchored, partial, byte, token_id in special)

    def encode_many(texts: list[str]) -> list[list[int]]:
        return [list(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]

    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False).ids)

    unknown = getattr(tokenizer.model, "unk_token", None)
    unknown_id = tokenizer.token_to_id(str(unknown)) if unknown is not None else None
    return RoundTripper(size, piece, encode, unknown_id, encode_many)


# ----- a GGUF file's tokenizer, decoded as llama.cpp's token_to_piece does ------------------
def gguf_round_trip(tokenizer: LlamaTokenizer) -> RoundTripper:
    """A ``RoundTripper`` for a GGUF file's tokenizer: llama_token_to_piece(special=true), then
    llama_tokenize(parse_special=false), so a control token is never read back from its text."""
    from .llama_pretokenizers import BPE_KINDS, PRE_TOKENIZERS, SPLITS
    from .llama_vocab import A_BYTE, A_CONTROL, A_NORMAL, A_UNKNOWN, A_UNUSED, _unescape_rwkv

    vocab = tokenizer.vocab
    kind = tokenizer.kind
    byte_level = kind in BPE_KINDS and tokenizer.pre is not None and SPLITS[tokenizer.pre.split].byte_encode
    escaped = kind in BPE_KINDS and tokenizer.pre is not None and PRE_TOKENIZERS[tokenizer.pre_name].escape_whitespaces
    known, to_bytes = _byte_level_translation()

    def token_bytes(token_id: int) -> bytes:
        token, attr = vocab.tokens[token_id], vocab.attrs[token_id]
        if attr & A_BYTE or bool(vocab.is_byte[token_id]):
            match = _BYTE_SPELLING.fullmatch(token)
            return bytes([int(token[3:5], 16)]) if match else token.encode("utf-8")
        if not attr & A_NORMAL:
            return token.encode("utf-8")  # control, user-defined, unknown: their text as it stands
        if kind == "rwkv":
            return _unescape_rwkv(token)
        if byte_level and known.issuperset(token):
            return token.translate(to_bytes).encode("latin-1")
        if kind in ("llama", "t5", "bert") or escaped:
            return token.replace("\u2581", " ").encode("utf-8")
        return token.encode("utf-8")

    def piece(token_id: int) -> TokenPiece:
        attr = vocab.attrs[token_id]
        data = token_bytes(token_id)
        partial = _partial_bytes(data)
        text = data.decode("utf-8", errors="replace")
        # llama.cpp's word-start mark is the escaped space; a piece without it continues a word.
        needs_anchor = kind in ("llama", "t5", "bert") and bool(attr & A_NORMAL) and not text.startswith(" ")
        byte = bool(attr & A_BYTE) or bool(vocab.is_byte[token_id]) or (byte_level and len(data) == 1)
        special = bool(attr & (A_CONTROL | A_UNKNOWN | A_UNUSED))
        return TokenPiece(text, needs_anchor, partial, byte, special)

    return RoundTripper(len(vocab.tokens), piece, tokenizer.encode, tokenizer.unknown_id)


def _partial_bytes(data: bytes) -> bool:
    """True when ``data`` is not whole UTF-8 characters (a token that holds part of one)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def merge_answers(answers: Sequence[dict[str, Any]]) -> dict[str, list[int]]:
    """Several batches' answers as one."""
    out: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for answer in answers:
        for kind in KINDS:
            out[kind].extend(int(i) for i in answer.get(kind, ()))
    return out
