"""Model folders with safetensors weights (single file or shards with an index), memory-mapped.

Only the embedding tensors are read; the model itself is never built, so opening
GPT-2 takes a fraction of a second.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..common.errors import CorruptWeightsError
from ..common.files import FileState
from ..common.read_ahead import map_in_background
from ..formats.safetensors_io import FLOAT_DTYPES, TensorEntry, map_tensor, read_all_headers, weight_files
from ..formats.table_store import whole_model_entries
from ..search.raw_rows import RawRows
from ..search.stored_rows import HALF_KINDS, StoredRows
from ..search.stored_search import StoredScreen, screen_for_stored
from ..text.vocabulary import Vocabulary
from .base import OpenedModel, ProgressCallback, check_table_shape
from .folder_layout import (
    BUFFER_NAMES,
    POSITION_TABLE_NAMES,
    TIED_HEAD_NAMES,
    _check_special_ids,
    _find_tensor,
    _find_token_table,
    _named,
    _position_note,
    _read_config,
    check_vocabulary,
)


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

    def open(
        self, path: Path, report: ProgressCallback, separate_tokenizer: bool = False, read_whole: bool = True
    ) -> OpenedModel:
        """Read the tokenizer and map the embedding tensors of a model folder (``read_whole``: see ``prepare_rows``)."""
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
        # One state per file: both tables often live in one, and each state is checked before every query.
        files = dict.fromkeys(e.file for e in (token_entry, position_entry) if e is not None and e.numel)
        mapped = tuple(FileState(file) for file in files)
        screen, raw = prepare_rows(rows, report, read_whole, mapped)
        vocabulary = finish_vocabulary()
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
            raw_rows=raw,
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


def prepare_rows(
    rows: np.ndarray | StoredRows, report: ProgressCallback, read_whole: bool, mapped: tuple[FileState, ...] = ()
) -> tuple[StoredScreen | None, RawRows | None]:
    """What the first question would otherwise wait for, made now, while the tokenizer loads.

    Half-precision or quantised rows get their first pass (their lengths, or bfloat16
    roundings). With ``read_whole`` (the caller will search the table or name its rows that
    point nowhere, as the window and ``neighbours`` do; not ``cosine``, which reads two rows)
    the first pass's pages are mapped in on a thread meanwhile, and a float32 table gets its
    rows' lengths (one read, in C without the interpreter's lock, which the tokenizer's build
    holds when it loads in this process).
    """
    if isinstance(rows, StoredRows):
        screen = screen_for_stored(rows, report)
        if read_whole:
            map_in_background(screen.bits)
        return screen, None
    if not read_whole:
        return None, None
    for state in mapped:
        state.check()  # a file cut short since it was mapped is named, not a SIGBUS
    return None, RawRows(rows)


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


