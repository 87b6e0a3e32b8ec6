"""Which tensors of a checkpoint are the token and position tables, and how many weights it has.

Names only: no tensor is read here, so a table-only download can decide from the
Hub's headers what to fetch and count the whole model without holding it.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import EmbedExplorerError, TableNotFoundError
from .safetensors_io import FLOAT_DTYPES, TensorEntry

# Suffixes of the token table's name in the common architectures, most specific first.
TOKEN_TABLE_NAMES = (
    "wte.weight",  # GPT-2 (GPT2Model) and transformer.wte.weight (GPT2LMHeadModel)
    "embeddings.word_embeddings.weight",  # BERT, RoBERTa, MiniLM
    "embed_tokens.weight",  # Llama, Qwen, Mistral, OPT, T5 decoders
    "embed_in.weight",  # GPT-NeoX, Pythia
    "word_embeddings.weight",  # BLOOM
    "tok_embeddings.weight",
    "shared.weight",  # T5
)
POSITION_TABLE_NAMES = (
    "wpe.weight",
    "embeddings.position_embeddings.weight",
    "embed_positions.weight",
    "position_embeddings.weight",
)
# Saved buffers that are not learned weights and must not count towards the model size.
BUFFER_NAMES = ("attn.bias", "attn.masked_bias", "position_ids", "inv_freq", "_float_tensor")
TIED_HEAD_NAMES = ("lm_head.weight", "cls.predictions.decoder.weight")


def count_model_weights(
    entries: dict[str, TensorEntry], config: dict[str, object], token_entry: TensorEntry
) -> int:
    """Learned weights in the checkpoint: buffers skipped, a tied output head counted once."""
    tied = bool(config.get("tie_word_embeddings", True))
    total = 0
    for name, entry in entries.items():
        if entry.dtype not in FLOAT_DTYPES or _named(name, BUFFER_NAMES):
            continue
        if tied and _named(name, TIED_HEAD_NAMES) and entry.shape == token_entry.shape:
            continue
        total += entry.numel
    return total


def _named(name: str, suffixes: tuple[str, ...]) -> bool:
    """True when ``name`` is one of ``suffixes`` or ends in "." + one (c_attn.bias is no attn.bias)."""
    return any(name == s or name.endswith("." + s) for s in suffixes)


def read_config(folder: Path) -> dict[str, object]:
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise TableNotFoundError(f"{folder} has no config.json; it does not look like a model folder.")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbedExplorerError(f"{config_file} cannot be read: {exc}") from exc
    if not isinstance(config, dict):
        raise EmbedExplorerError(f"{config_file} is not a JSON object.")
    # Encoder-decoder and multimodal configs keep the language model's settings inside.
    text_config = config.get("text_config")
    return text_config if isinstance(text_config, dict) else config


def find_tensor(
    entries: dict[str, TensorEntry], suffixes: tuple[str, ...], width: int | None = None
) -> TensorEntry | None:
    for suffix in suffixes:
        matches = [
            e
            for n, e in entries.items()
            if _named(n, (suffix,))
            and len(e.shape) == 2
            and e.dtype in FLOAT_DTYPES
            and (width is None or e.shape[1] == width)
        ]
        if matches:
            return min(matches, key=lambda e: len(e.name))
    return None


def find_token_table(entries: dict[str, TensorEntry], config: dict[str, object]) -> TensorEntry:
    found = find_tensor(entries, TOKEN_TABLE_NAMES)
    if found is not None:
        return found
    vocab_size = config.get("vocab_size")
    guesses = [
        e
        for n, e in entries.items()
        if "embed" in n and len(e.shape) == 2 and e.dtype in FLOAT_DTYPES and e.shape[0] == vocab_size
    ]
    if guesses:
        return min(guesses, key=lambda e: len(e.name))
    raise TableNotFoundError(
        "No token embedding table was found in the weights (looked for "
        + ", ".join(TOKEN_TABLE_NAMES[:3])
        + ", ...)."
    )

