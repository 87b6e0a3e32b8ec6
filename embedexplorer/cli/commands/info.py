"""``embedexplorer info``: the size of the table and its share of the model."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.common.terminal import one_line
from ..command import Answer, Asker, Command

if TYPE_CHECKING:
    from ...core.tables.embedding_table import EmbeddingTable


def arguments(parser: argparse.ArgumentParser) -> None:
    """No arguments of its own: the common --model, --json and --download."""


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    table = asker.table
    facts = table.facts()
    payload: dict[str, object] = {
        "model": facts.model,
        "rows": facts.rows,
        "width": facts.width,
        "table_weights": facts.table_weights,
        "model_weights": facts.model_weights,
        "share": facts.share,
        "position_rows": facts.position_rows,
        "position_note": facts.position_note,
        "baseline_cosine": facts.baseline_cosine,
        "vocabulary_size": facts.vocabulary_size,
        "storage": facts.storage,
        "memory_bytes": facts.memory_bytes,
        "neighbour_search": table.search_method(),
    }
    head = _output_head(table)
    payload["output_head"] = None if head is None else head.kind
    payload["output_head_note"] = None if head is None else head.sentence
    lines = [replace(facts, model=one_line(facts.model)).summary(), f"neighbour search: {payload['neighbour_search']}"]
    return payload, "\n".join(lines + ([] if head is None else [one_line(head.sentence)]))


def _output_head(table: EmbeddingTable) -> Any:
    """Whether the model's output head is the table itself: from a GGUF file's tensors, or a model folder's
    config and weight names; None for neither."""
    from ...core.layers.output_head import describe, describe_gguf

    if table.gguf_file is not None:  # its folder holds whatever else the user keeps there
        return describe_gguf(table.gguf_file)
    folder = table.folder
    return describe(folder) if folder is not None and Path(folder).is_dir() else None


COMMAND = Command("info", "size of the table and its share of the model", arguments, answer=answer)
