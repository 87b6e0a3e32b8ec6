"""How a Hugging Face model folder lays out its embedding tables: their names, the config, the checks.

Read from the weights' headers and config.json alone, without numpy: the safetensors reader
uses it to open a table, the Hub download to pick the tensors it fetches, and ``tokens`` to
know the table's rows and position rows without mapping anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..common.errors import EmbedExplorerError, TableNotFoundError, TokenizerMismatchError
from ..common.files import CONFIG_FILE_LIMIT, read_json
from ..formats.safetensors_io import FLOAT_DTYPES, TensorEntry

if TYPE_CHECKING:
    from ..text.vocabulary import Vocabulary

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


def check_vocabulary(vocabulary: Vocabulary, rows_count: int) -> None:
    """Every id the tokenizer gives must have a row."""
    if vocabulary.max_id() >= rows_count:
        raise TokenizerMismatchError(
            f"The tokenizer has ids up to {vocabulary.max_id():,} but the table has only "
            f"{rows_count:,} rows: they do not belong to the same model."
        )


def _check_special_ids(config: dict[str, object], vocabulary: Vocabulary) -> None:
    """The ids config.json gives the start and end tokens must be tokens of the tokenizer.

    A tokenizer smaller than the table passes the row check above; this catches the
    common mix-up of a tokenizer copied from another model.
    """
    for key, role in (("bos_token_id", "start"), ("eos_token_id", "end")):
        value = config.get(key)
        ids = value if isinstance(value, list) else [value]
        for token_id in ids:
            if isinstance(token_id, int) and not 0 <= token_id < vocabulary.size:
                raise TokenizerMismatchError(
                    f"config.json says the {role}-of-text token is id {token_id:,}, but the tokenizer "
                    f"has only {vocabulary.size:,} tokens: the tokenizer belongs to another model."
                )


def _named(name: str, suffixes: tuple[str, ...]) -> bool:
    """True when ``name`` is one of ``suffixes`` or ends in "." + one (c_attn.bias is no attn.bias)."""
    return any(name == s or name.endswith("." + s) for s in suffixes)


def _read_config(folder: Path) -> dict[str, object]:
    config_file = folder / "config.json"
    if not config_file.exists():
        raise TableNotFoundError(f"{folder} has no config.json; it does not look like a model folder.")
    config = read_json(config_file, "model config", CONFIG_FILE_LIMIT, EmbedExplorerError)
    if not isinstance(config, dict):
        raise EmbedExplorerError(f"{config_file} is not a JSON object.")
    # Encoder-decoder and multimodal configs keep the language model's settings inside.
    text_config = config.get("text_config")
    return text_config if isinstance(text_config, dict) else config


def _find_tensor(
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


def _find_token_table(entries: dict[str, TensorEntry], config: dict[str, object]) -> TensorEntry:
    found = _find_tensor(entries, TOKEN_TABLE_NAMES)
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


def _position_note(entry: TensorEntry | None, config: dict[str, object]) -> str:
    if entry is not None:
        return f"learned position table with {entry.shape[0]:,} rows"
    kind = str(config.get("position_embedding_type", ""))
    # transformers 5 writes "rope_parameters"; older configs "rope_theta" or "rope_scaling".
    if any(key in config for key in ("rope_theta", "rope_scaling", "rope_parameters")) or "rotary" in kind:
        return "no position table: the model marks positions by rotating rows (rotary embeddings)"
    if "alibi" in kind or config.get("model_type") in {"bloom", "mpt"}:
        return "no position table: the model marks positions with attention biases (ALiBi)"
    return "no position table in the weights: the model marks positions another way"
