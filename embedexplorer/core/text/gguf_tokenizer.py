"""A GGUF file's own tokenizer, rebuilt with the ``tokenizers`` library from the file's metadata.

llama.cpp keeps the vocabulary in the file: "gpt2" models (GPT-2, Llama 3, Qwen2, ...)
as byte-level BPE tokens plus merges and a named pre-tokenizer; "llama" models
(Llama 2, Mistral, Gemma, ...) as sentencepiece pieces with scores, which llama.cpp
joins by always merging the adjacent pair whose union scores highest.  A BPE whose
merges are ranked by that score does the same, so ids match the model's tokenizer.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..common.errors import TokenizerMismatchError
from .vocabulary import TokenizerFacts

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# GGUF token types (llama.cpp's llama_token_type).
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# Pre-tokenizer splits of the byte-level models, by the name llama.cpp stores in tokenizer.ggml.pre.
_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
BYTE_LEVEL_SPLITS: dict[str, str | None] = {
    "default": None,  # GPT-2's own split, built into the ByteLevel pre-tokenizer
    "gpt-2": None,
    "llama-bpe": _LLAMA3_SPLIT,
    "llama3": _LLAMA3_SPLIT,
    "smaug-bpe": _LLAMA3_SPLIT,
    "qwen2": _QWEN2_SPLIT,
}
# Pre-tokenizers that also normalise text to NFC first (as the models' tokenizer.json do).
_NFC = {"qwen2"}
KNOWN_MODELS = ("gpt2", "llama")


def gguf_tokenizer_facts(metadata: dict[str, object], file_name: str) -> TokenizerFacts:
    """What the engine needs of a GGUF file's tokenizer, read from its metadata without building it.

    Raises ``TokenizerMismatchError`` for a tokenizer that cannot be rebuilt, so a bad
    file is refused at once, before any tokenizer is built here or in a child process.
    """
    kind = str(metadata.get("tokenizer.ggml.model", ""))
    tokens = metadata.get("tokenizer.ggml.tokens")
    if not kind or not isinstance(tokens, list) or not tokens:
        raise TokenizerMismatchError(f"{file_name} has no tokenizer in its metadata (tokenizer.ggml.tokens).")
    if kind not in KNOWN_MODELS:
        raise TokenizerMismatchError(
            f"{file_name} uses a tokenizer of type {kind!r}, which EmbedExplorer cannot rebuild "
            f"(it reads {' and '.join(repr(k) for k in KNOWN_MODELS)})."
        )
    if kind == "gpt2":
        pre = str(metadata.get("tokenizer.ggml.pre", "default"))
        if pre not in BYTE_LEVEL_SPLITS:
            raise TokenizerMismatchError(
                f"{file_name} splits text with llama.cpp's {pre!r} pre-tokenizer, which EmbedExplorer does not "
                f"know yet (it knows {', '.join(sorted(BYTE_LEVEL_SPLITS))}); its token ids would be wrong."
            )
        if not isinstance(metadata.get("tokenizer.ggml.merges"), list):
            raise TokenizerMismatchError(f"{file_name} has a byte-level tokenizer without merges.")
    unknown = metadata.get("tokenizer.ggml.unknown_token_id")
    if isinstance(unknown, (int, np.integer)) and not isinstance(unknown, bool) and not 0 <= unknown < len(tokens):
        # The characters it stands for would vanish from every text without a word.
        raise TokenizerMismatchError(
            f"{file_name} names token {int(unknown):,} as its unknown token, but its vocabulary has "
            f"{len(tokens):,} tokens (0 to {len(tokens) - 1:,})."
        )
    return TokenizerFacts(
        raw_tokens=list(tokens),
        size=len(tokens),
        byte_level=kind == "gpt2",
        sentencepiece=kind == "llama",
        unknown_id=int(unknown) if kind == "llama" and isinstance(unknown, (int, np.integer)) else None,
    )


def build_gguf_tokenizer(metadata: dict[str, object], file_name: str) -> tuple[Tokenizer, TokenizerFacts]:
    """The tokenizer described by a GGUF file's ``tokenizer.ggml.*`` keys, and its facts."""
    facts = gguf_tokenizer_facts(metadata, file_name)
    tokens = facts.raw_tokens
    types = _int_array(metadata.get("tokenizer.ggml.token_type"), len(tokens), NORMAL)
    if facts.byte_level:
        tokenizer = _byte_level_bpe(metadata, tokens, file_name)
    else:
        tokenizer = _sentencepiece_bpe(metadata, tokens, types)
    _add_special_tokens(tokenizer, tokens, types)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer, facts


def load_gguf_tokenizer(path: Path) -> Tokenizer:
    """The tokenizer of a GGUF file, read from its header (what a tokenizer process runs)."""
    from ..formats.gguf_file import read_gguf

    return build_gguf_tokenizer(read_gguf(path).metadata, path.name)[0]


def _int_array(value: object, count: int, default: int) -> np.ndarray:
    if isinstance(value, np.ndarray) and value.shape == (count,):
        return value.astype(np.int64)
    return np.full(count, default, dtype=np.int64)


def _byte_level_bpe(metadata: dict[str, object], tokens: list[str], file_name: str) -> Tokenizer:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    pre = str(metadata.get("tokenizer.ggml.pre", "default"))
    merges = metadata.get("tokenizer.ggml.merges")
    assert isinstance(merges, list)  # gguf_tokenizer_facts checked it
    vocab = _first_ids(tokens)
    pairs = [tuple(merge.split(" ", 1)) for merge in merges]
    try:
        model = models.BPE(vocab=vocab, merges=pairs, fuse_unk=False)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - the Rust side raises plain Exception
        raise TokenizerMismatchError(f"{file_name}: the tokenizer's merges do not fit its tokens ({exc}).") from exc
    tokenizer = Tokenizer(model)
    split = BYTE_LEVEL_SPLITS[pre]
    if split is None:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(split), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    if pre in _NFC:
        tokenizer.normalizer = normalizers.NFC()
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _sentencepiece_bpe(metadata: dict[str, object], tokens: list[str], types: np.ndarray) -> Tokenizer:
    from tokenizers import Tokenizer, decoders, models, normalizers

    count = len(tokens)
    scores = metadata.get("tokenizer.ggml.scores")
    if not isinstance(scores, np.ndarray) or scores.shape != (count,):
        scores = -np.arange(count, dtype=np.float32)  # no scores: earlier pieces merge first
    vocab = _first_ids(tokens)
    mergeable = (types == NORMAL) | (types == USER_DEFINED)
    # llama.cpp merges the adjacent pair whose joined piece scores highest; BPE applies
    # merges by rank, so every way of splitting a piece in two ranks by the piece's score.
    found: list[tuple[float, int, int, int, str, str]] = []
    for token_id in np.flatnonzero(mergeable).tolist():
        piece = tokens[token_id]
        if vocab.get(piece) != token_id:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            left_id, right_id = vocab.get(left), vocab.get(right)
            if left_id is not None and right_id is not None:
                found.append((-float(scores[token_id]), token_id, left_id, right_id, left, right))
    found.sort(key=lambda merge: merge[:4])
    unknown = metadata.get("tokenizer.ggml.unknown_token_id")
    unk_token = tokens[int(unknown)] if isinstance(unknown, (int, np.integer)) and 0 <= unknown < count else None
    model = models.BPE(
        vocab=vocab,
        merges=[(left, right) for *_, left, right in found],
        unk_token=unk_token,
        fuse_unk=True,
        byte_fallback=bool((types == BYTE).any()),
    )
    tokenizer = Tokenizer(model)
    # llama.cpp puts one space before the text whatever it starts with, and turns every
    # space into "▁"; the Llama models' tokenizer.json do the same with these two steps.
    steps: list[normalizers.Normalizer] = [normalizers.Replace(" ", "▁")]
    if metadata.get("tokenizer.ggml.add_space_prefix", True):
        steps.insert(0, normalizers.Prepend("▁"))
    tokenizer.normalizer = normalizers.Sequence(steps)
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    return tokenizer


def _first_ids(tokens: Sequence[str]) -> dict[str, int]:
    """Token -> id, the first id when a token string repeats (padding pieces sometimes do)."""
    vocab: dict[str, int] = {}
    for token_id, token in enumerate(tokens):
        vocab.setdefault(token, token_id)
    return vocab


def _add_special_tokens(tokenizer: Tokenizer, tokens: list[str], types: np.ndarray) -> None:
    """Control and user-defined tokens match as whole pieces of text, as in the model's tokenizer.json."""
    from tokenizers import AddedToken

    special = [AddedToken(tokens[i], special=True, normalized=False) for i in _ids_of(tokens, types, CONTROL)]
    user = [AddedToken(tokens[i], special=False, normalized=False) for i in _ids_of(tokens, types, USER_DEFINED)]
    if special:
        tokenizer.add_special_tokens(special)
    if user:
        tokenizer.add_tokens(user)


def _ids_of(tokens: list[str], types: np.ndarray, kind: int) -> list[int]:
    return [i for i in np.flatnonzero(types == kind).tolist() if tokens[i]]
