"""Opening a table: from what the user typed (``open_table``) or a found source (``load_table``).

The reader that claims the source opens it; ``table_from`` makes the table from what it found.
"""

from __future__ import annotations

import os

from ..common.errors import ModelNotFoundError
from ..common.progress import ProgressCallback
from ..readers.base import OpenedModel
from ..sources.resolve import ModelSource, naming_the_model, reader_for, resolve_source
from .embedding_table import EmbeddingTable


def open_table(
    spec: str | os.PathLike[str] | None = None,
    *,
    allow_download: bool = False,
    progress: ProgressCallback | None = None,
    separate_tokenizer: bool = False,
    whole_model: bool = False,
    read_whole: bool = True,
) -> EmbeddingTable:
    """Open a model's embedding table: a folder, a cached Hub id, "bundled" or the default.

    ``allow_download`` fetches a Hub model that is not here: its embedding tables
    alone, or every weight into the HF cache with ``whole_model``.
    ``separate_tokenizer`` runs the tokenizer in a child process, for callers (the
    window) whose other threads must never wait on the tokenizer's hold of the GIL.
    ``read_whole`` (the default) says the table will be searched: its rows are measured
    and mapped in while the tokenizer loads; a caller that reads a few rows passes False.

    >>> table = open_table("bundled")
    >>> [n.token for n in table.neighbours("monday", k=3).neighbours]  # doctest: +SKIP
    """
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if spec is not None and not isinstance(spec, str):
        raise ModelNotFoundError(
            f"open_table takes a model folder, a Hugging Face id or 'bundled' as text, "
            f"not {type(spec).__name__} ({spec!r:.60})."
        )
    report = progress or (lambda done, total, message: None)
    report(0, 4, "Finding the model")
    source = resolve_source(spec, allow_download=allow_download, progress=progress, whole_model=whole_model)
    return load_table(source, report, separate_tokenizer, read_whole)


def load_table(
    source: ModelSource, report: ProgressCallback, separate_tokenizer: bool = False, read_whole: bool = True
) -> EmbeddingTable:
    """Open ``source`` with the reader that claims it; the table does not depend on which one did."""
    with naming_the_model(source):
        opened = reader_for(source.location).open(source.location, report, separate_tokenizer, read_whole)
        table = table_from(source.name, opened)
        table.source_kind = source.kind
        if table.stored:
            try:
                table.prepare(progress=report)  # the row lengths (or dequantising), with progress
            except BaseException:
                table.close()
                raise
    report(4, 4, "Ready")
    return table


def table_from(name: str, opened: OpenedModel) -> EmbeddingTable:
    """An EmbeddingTable for what a reader found."""
    table = EmbeddingTable(
        name=name,
        rows=opened.rows,
        vocabulary=opened.vocabulary,
        model_weights=opened.model_weights,
        dtype=opened.storage,
        positions=opened.positions,
        position_note=opened.position_note,
        folder=opened.folder,
        config=opened.config,
        mapped_files=opened.mapped_files,
    )
    # Made by the reader while the tokenizer loaded.
    if opened.stored_screen is not None:
        table.__dict__["stored_screen"] = opened.stored_screen
    if opened.raw_rows is not None:
        table.__dict__["raw_rows"] = opened.raw_rows
    return table
