"""Model folders with safetensors weights (single file or shards with an index), memory-mapped.

Only the embedding tensors are read; the model itself is never built, so opening
GPT-2 takes a fraction of a second.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..common.errors import CorruptWeightsError, EmbedExplorerError, TableNotFoundError, TokenizerMismatchError
from ..common.files import CONFIG_FILE_LIMIT, FileState, read_json
from ..formats.safetensors_io import FLOAT_DTYPES, TensorEntry, map_tensor, read_all_headers, weight_files
from ..formats.table_store import whole_model_entries
from ..search.stored_rows import HALF_KINDS, StoredRows
from ..search.stored_search import StoredScreen, screen_for_stored
from ..text.vocabulary import Vocabulary
from .base import OpenedModel, ProgressCallback, check_table_shape

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


class SafetensorsFolder:
    """A folder with config.json, a tokenizer and safetensors weights (the Hugging Face layout)."""

    name = "safetensors folder"
    label = "model folder (config.json, tokenizer, .safetensors weights)"
    patterns: tuple[str, ...] = ("*.safetensors", "config.json")  # a file inside the folder names the folder

    def claims(self, path: Path) -> bool:
        try:
            return path.is_dir()
        except OSError:
            return False

    def open(self, path: Path, report: ProgressCallback, separate_tokenizer: bool = False) -> OpenedModel:
        """Read the tokenizer and map the embedding tensors of a model folder."""
        folder = path
        config = _read_config(folder)
        report(1, 4, "Reading the weights' index")
        entries = read_all_headers(weight_files(folder))
        token_entry = _find_token_table(entries, config)
        where = f"The token table {token_entry.name!r} in {token_entry.file.name}"
        check_table_shape(token_entry.shape[0], token_entry.shape[1], where)
        position_entry = _find_tensor(entries, POSITION_TABLE_NAMES, width=token_entry.shape[1])
        report(2, 4, "Reading the tokenizer")
        # The tokenizer loads (on a thread, or in its own process) while the tables are mapped and prepared.
        finish_vocabulary = Vocabulary.start(
            folder, separate_process=separate_tokenizer, max_rows=token_entry.shape[0]
        )
        report(3, 4, "Mapping the embedding table")
        rows = map_rows(token_entry)
        positions = None if position_entry is None else map_tensor(position_entry)
        screen = prepare_stored(rows, report)
        vocabulary = finish_vocabulary()
        mapped = tuple(FileState(e.file) for e in (token_entry, position_entry) if e is not None and e.numel)
        try:
            check_vocabulary(vocabulary, rows.shape[0])
            _check_special_ids(config, vocabulary)
        except BaseException:
            vocabulary.close()
            raise
        return OpenedModel(
            rows=rows,
            vocabulary=vocabulary,
            # A table-only download counts the whole model from the note of every header it read.
            model_weights=count_model_weights(whole_model_entries(folder) or entries, config, token_entry),
            storage=token_entry.dtype,
            positions=positions,
            position_note=_position_note(position_entry, config),
            folder=folder,
            config=config,
            mapped_files=mapped,
            stored_screen=screen,
        )


READER = SafetensorsFolder()


def map_rows(entry: TensorEntry) -> np.ndarray | StoredRows:
    """The token table as the search reads it: bfloat16 and float16 stay as stored, mapped."""
    if entry.dtype in HALF_KINDS and entry.numel > 0 and len(entry.shape) == 2:
        try:
            bits = np.memmap(entry.file, dtype="<u2", mode="r", offset=entry.start, shape=entry.shape)
        except (OSError, ValueError) as exc:
            raise CorruptWeightsError(f"Cannot map tensor {entry.name!r} from {entry.file.name}: {exc}") from exc
        return StoredRows.half(bits, entry.dtype)
    return map_tensor(entry)


def prepare_stored(rows: np.ndarray | StoredRows, report: ProgressCallback) -> StoredScreen | None:
    """The first pass of half-precision or quantised rows (their lengths, or bfloat16 roundings), made now.

    Done while the tokenizer loads: measuring or dequantising runs in C and numpy without
    the interpreter's lock, which the tokenizer's build holds.
    """
    return screen_for_stored(rows, report) if isinstance(rows, StoredRows) else None


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
