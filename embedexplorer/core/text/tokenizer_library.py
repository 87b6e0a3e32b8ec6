"""Every call into the tokenizers library: load a folder's tokenizer, encode, describe it, list its tokens.

This is what the tokenizer's child process (``tokenizer_child``) runs, so it imports nothing
that loading a tokenizer does not need: no dataclasses, pathlib or logging (each a few
milliseconds of every command's start, on top of the library's own import). The engine's
types for what it finds (``tokenizer_facts``) are built from the plain dictionary
``read_summary`` gives, which is also what the child sends.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..common.errors import EmbedExplorerError, ModelNotFoundError, TokenizerFailedError, TokenizerMismatchError
from ..common.files import TOKENIZER_FILE_LIMIT, check_regular, read_regular

if TYPE_CHECKING:
    from tokenizers import Tokenizer

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


def load_tokenizer(folder: str | os.PathLike[str]) -> Tokenizer:
    """The folder's fast tokenizer, set to keep every token (no padding, no truncation)."""
    tokenizer_file = os.path.join(os.fspath(folder), "tokenizer.json")
    if os.path.exists(tokenizer_file):
        data = read_regular(tokenizer_file, "tokenizer file", TOKENIZER_FILE_LIMIT, EmbedExplorerError)
        try:
            tokenizer = rust_call(lambda: _from_bytes(data), f"Cannot read {tokenizer_file}")
        except EmbedExplorerError:
            _check_utf8(data, tokenizer_file)
            raise
    else:
        tokenizer = _backend_from_transformers(folder)
    # Saved tokenizers may pad or cut every text to a fixed length; we want all tokens.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _from_bytes(data: bytes) -> Tokenizer:
    """The tokenizer in a tokenizer.json's bytes, refused in the same words as from its text.

    From the bytes: decoding 11 MB of JSON to a str, which the library encodes back to
    UTF-8, took 0.01-0.03 s of every open. The library checks the UTF-8 itself.
    """
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_buffer(data)
    except ValueError as exc:
        raise ValueError(str(exc).removeprefix("Cannot instantiate Tokenizer from buffer: ")) from None


def _check_utf8(data: bytes, tokenizer_file: str) -> None:
    """Say plainly that a tokenizer file the library refused is not UTF-8 text, when that is why."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EmbedExplorerError(f"Cannot read {tokenizer_file}: it is not UTF-8 text.") from exc


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


def encode_with(tokenizer: Tokenizer, text: str) -> list[int]:
    """Ids of ``text``, which must already be clean (see ``clean_text``); no special tokens added."""
    encoding = rust_call(
        lambda: tokenizer.encode(text, add_special_tokens=False),
        "The tokenizer cannot read this text",
        TokenizerFailedError,
    )
    return list(encoding.ids)


def read_summary(tokenizer: Tokenizer, max_rows: int | None = None) -> dict[str, Any]:
    """What the engine needs of a tokenizer besides encoding and its tokens (``TokenizerSummary``'s fields).

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
    top = _top_id(tokenizer, size)
    if max_rows is not None and top >= max_rows:
        raise TokenizerMismatchError(
            f"The tokenizer has ids up to {top:,} but the table has only "
            f"{max_rows:,} rows: they do not belong to the same model."
        )
    # The decoder's own state is a few bytes; serialising the whole tokenizer would take far longer.
    decoder = tokenizer.decoder
    decoder_text = decoder.__getstate__().decode("utf-8", "replace") if decoder is not None else ""
    return {
        "size": size,
        "byte_level": '"ByteLevel"' in decoder_text,
        "sentencepiece": '"Metaspace"' in decoder_text,
        "unknown_id": _unknown_id(tokenizer),
        "top_id": top,
        **_word_piece_marks(tokenizer, decoder_text),
    }


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
    """WordPiece's continuing prefix and special ids (see ``tokenizer_facts.TokenizerTraits``); nothing for
    other tokenizers."""
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


def _backend_from_transformers(place: str | os.PathLike[str]) -> Tokenizer:
    """Folders without tokenizer.json: let transformers build the fast tokenizer."""
    from pathlib import Path  # only here: the tokenizer's child loads a tokenizer.json without it

    folder = Path(place)
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
