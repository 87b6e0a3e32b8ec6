"""A model's output head as a second table of the same vocabulary, for models that do not tie it to the input.

GPT-2 and MiniLM use their token table again to score the next token; Llama, Qwen2-7B and
most larger models learn a separate output table (``lm_head.weight``, GGUF's
``output.weight``). Compared with the input table it shows what reading and writing a
token have in common.
"""

from __future__ import annotations

from pathlib import Path

from ..common.errors import EmbedExplorerError, TableNotFoundError
from ..common.files import FileState
from ..formats.gguf_split import read_parts
from ..formats.safetensors_io import read_all_headers, weight_files
from ..readers.gguf import OUTPUT_HEAD as GGUF_HEAD
from ..readers.gguf import map_gguf_rows
from ..readers.safetensors import map_rows
from ..search.stored_rows import StoredRows
from ..tables.embedding_table import EmbeddingTable
from ..text.vocabulary import Vocabulary

SAFETENSORS_HEAD = "lm_head.weight"


def output_head_table(table: EmbeddingTable, gguf_file: Path | None = None) -> EmbeddingTable:
    """The output head of ``table``'s model as an EmbeddingTable sharing its vocabulary.

    Raises ``TableNotFoundError`` in one sentence when the model ties its head to the
    token table or has none of the same shape.
    """
    rows, storage, file = _head_rows(table, gguf_file)
    if tuple(rows.shape) != tuple(table.rows.shape):
        raise TableNotFoundError(
            f"{table.name}'s output head has shape {tuple(rows.shape)}, not the token table's "
            f"{tuple(table.rows.shape)}: the two cannot be compared token by token."
        )
    # The vocabulary is the input table's; closing this table must not stop its tokenizer.
    shared = Vocabulary(table.vocabulary.facts, table.vocabulary.encode)
    head = EmbeddingTable(
        name=f"{table.name} (output head)",
        rows=rows,
        vocabulary=shared,
        model_weights=table.model_weights,
        dtype=storage,
        folder=table.folder,
        config=table.config,
        mapped_files=(FileState(file),),
    )
    if isinstance(rows, StoredRows):
        head.prepare()
    return head


def _head_rows(table: EmbeddingTable, gguf_file: Path | None):  # type: ignore[no-untyped-def]
    gguf = gguf_file or table.gguf_file
    if gguf is not None:
        # Any part of a split model: llama.cpp's parts keep the output head apart from the token table.
        holder = next((part for part in read_parts(gguf) if GGUF_HEAD in part.tensors), None)
        if holder is None:
            raise _tied(table)
        tensor = holder.tensors[GGUF_HEAD]
        return map_gguf_rows(holder, tensor), tensor.type.name, holder.path
    if table.folder is None:
        raise _tied(table)
    try:
        entries = read_all_headers(weight_files(table.folder))
    except EmbedExplorerError as exc:
        raise TableNotFoundError(f"Cannot read {table.name}'s weights for its output head: {exc}") from exc
    entry = next((e for n, e in entries.items() if n == SAFETENSORS_HEAD or n.endswith("." + SAFETENSORS_HEAD)), None)
    if entry is None or entry.numel == 0:
        raise _tied(table)
    return map_rows(entry), entry.dtype, entry.file


def _tied(table: EmbeddingTable) -> TableNotFoundError:
    return TableNotFoundError(
        f"{table.name} has no output head of its own: it scores the next token with its token table "
        "(a tied head), so there is no second table to compare."
    )

