"""A GGUF file's own tokenizer, as llama.cpp rebuilds it from the file's metadata.

llama.cpp keeps the vocabulary in the file (``tokenizer.ggml.*``) and tokenizes with its
own code; the ids it gives are the ids the model sees, so the engine runs a port of that
code (``llama_vocab``) rather than an approximation with another library.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..common.errors import TokenizerMismatchError
from .llama_plamo2 import byte_tokens
from .llama_pretokenizers import BPE_KINDS, PRE_TOKENIZERS, SPLITS
from .llama_vocab import (
    DEFAULT_UNKNOWN,
    LlamaTokenizer,
    byte_typed,
    charsmap_blob,
    check_kind,
    check_token_sizes,
    token_texts,
)
from .tokenizer_facts import TokenizerFacts

_PIECE_KINDS = ("llama", "bert", "t5")  # pieces that show a leading space as U+2581


def gguf_tokenizer_facts(metadata: dict[str, object], file_name: str) -> TokenizerFacts:
    """What the engine needs of a GGUF file's tokenizer, read from its metadata without building it.

    Raises ``TokenizerMismatchError`` for a tokenizer that cannot be rebuilt, so a bad
    file is refused at once, before any tokenizer is built here or in a child process.
    """
    tokens = metadata.get("tokenizer.ggml.tokens")
    if not metadata.get("tokenizer.ggml.model") or not isinstance(tokens, list) or not tokens:
        raise TokenizerMismatchError(f"{file_name} has no tokenizer in its metadata (tokenizer.ggml.tokens).")
    kind, pre = check_kind(metadata, file_name)
    byte_level = kind in BPE_KINDS and SPLITS[PRE_TOKENIZERS[pre].split].byte_encode
    escaped = kind in BPE_KINDS and PRE_TOKENIZERS[pre].escape_whitespaces
    raw_tokens = token_texts([str(t) for t in tokens])
    check_token_sizes(raw_tokens, file_name)  # before anything is built here or in a child
    if kind == "t5":
        charsmap_blob(metadata, file_name)  # a damaged normaliser is refused here, not in a child
    if kind == "plamo2":  # llama.cpp refuses a PLaMo-2 file without all 256 byte tokens
        byte_tokens(raw_tokens, byte_typed(metadata, len(tokens)), file_name)
    unknown = metadata.get("tokenizer.ggml.unknown_token_id")
    if isinstance(unknown, (int, np.integer)) and not isinstance(unknown, bool) and not 0 <= unknown < len(tokens):
        # The characters it stands for would vanish from every text without a word.
        raise TokenizerMismatchError(
            f"{file_name} names token {int(unknown):,} as its unknown token, but its vocabulary has "
            f"{len(tokens):,} tokens (0 to {len(tokens) - 1:,})."
        )
    unknown_id = int(unknown) if isinstance(unknown, (int, np.integer)) else DEFAULT_UNKNOWN.get(kind)
    return TokenizerFacts(
        raw_tokens=raw_tokens,
        size=len(tokens),
        byte_level=byte_level,
        sentencepiece=kind in _PIECE_KINDS or escaped,
        unknown_id=unknown_id if unknown_id is not None and 0 <= unknown_id < len(tokens) else None,
    )


def build_gguf_tokenizer(metadata: dict[str, object], file_name: str) -> tuple[LlamaTokenizer, TokenizerFacts]:
    """The tokenizer described by a GGUF file's ``tokenizer.ggml.*`` keys, and its facts."""
    facts = gguf_tokenizer_facts(metadata, file_name)
    return LlamaTokenizer(metadata, file_name), facts


def load_gguf_tokenizer(path: Path) -> tuple[LlamaTokenizer, TokenizerFacts]:
    """The tokenizer of a GGUF file and its facts, read from its header (what a tokenizer process runs)."""
    from ..formats.gguf_file import read_gguf

    return build_gguf_tokenizer(read_gguf(path).metadata, path.name)
