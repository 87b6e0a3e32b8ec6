"""What the model's own tokenizer can produce, asked of it in its child process, batch by batch.

The round trip (``core/text/round_trip``) runs in a tokenizer process of its own, with the
process's limits on memory and time, for every kind of tokenizer the app reads: a
tokenizer.json beside the weights, or a GGUF file's tokenizer. A batch that stops or
hangs the tokenizer leaves its tokens "not checked" and the rest go on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..common.errors import EmbedExplorerError, Interrupted
from ..tables.embedding_table import EmbeddingTable
from ..text.round_trip import KINDS, ROUND_TRIP_BATCH

Progress = Callable[[int, int], None]


@dataclass
class Reachability:
    """One boolean array per kind of ``round_trip.KINDS``, plus the tokens never checked."""

    unreachable: np.ndarray
    partial: np.ndarray
    special: np.ndarray
    byte: np.ndarray
    failed: np.ndarray
    unchecked: np.ndarray
    notes: list[str] = field(default_factory=list)

    @classmethod
    def empty(cls, size: int, note: str) -> Reachability:
        none = np.zeros(size, dtype=bool)
        return cls(none, none.copy(), none.copy(), none.copy(), none.copy(), np.ones(size, dtype=bool), [note])


def tokenizer_source(table: EmbeddingTable) -> Path | None:
    """What a tokenizer process reads for this table: its GGUF file, or its folder; None if neither."""
    if table.gguf_file is not None:
        return table.gguf_file
    folder = table.folder
    return folder if folder is not None and folder.is_dir() else None


def check_reachability(table: EmbeddingTable, progress: Progress) -> Reachability:
    """Round-trip every token of ``table``'s vocabulary in a tokenizer process started for it."""
    from ..text.tokenizer_process import TokenizerProcess

    size = int(table.rows.shape[0])
    source = tokenizer_source(table)
    if source is None:
        return Reachability.empty(size, "This table has no tokenizer file to ask, so no token was round-tripped.")
    process = TokenizerProcess(source, size if source.is_dir() else None)
    try:
        return _ask(process, size, progress)
    finally:
        process.close()


def _ask(process: object, size: int, progress: Progress) -> Reachability:
    found = {kind: np.zeros(size, dtype=bool) for kind in KINDS}
    unchecked = np.zeros(size, dtype=bool)
    notes: list[str] = []
    try:
        tokens = min(size, int(process.facts()["size"]))  # type: ignore[attr-defined]
    except Interrupted:
        raise
    except EmbedExplorerError as exc:
        return Reachability.empty(size, f"{exc} No token was round-tripped.")
    if tokens < size:
        # Rows past the last token (a table padded to a round size): no text can ever give them.
        found["unreachable"][tokens:] = True
        notes.append(f"Rows {tokens:,} to {size - 1:,} have no token at all; they count as unreachable.")
    for start in range(0, tokens, ROUND_TRIP_BATCH):
        stop = min(tokens, start + ROUND_TRIP_BATCH)
        try:
            answer = process.round_trip(start, stop)  # type: ignore[attr-defined]
        except Interrupted:
            raise
        except EmbedExplorerError as exc:
            unchecked[start:stop] = True
            if len(notes) < 3:
                notes.append(f"{exc} Tokens {start:,} to {stop - 1:,} were not round-tripped.")
            if start == 0 and "could not be started" in str(exc):
                unchecked[:] = True
                break
        else:
            for kind in KINDS:
                ids = np.asarray(answer.get(kind, []), dtype=np.int64)
                ids = ids[(ids >= 0) & (ids < size)]
                found[kind][ids] = True
        progress(stop, tokens)
    failed = int(found["failed"].sum())
    if failed:
        notes.append(
            f"The tokenizer failed on {failed:,} token(s); they are marked 'tokenizer-failed', not unreachable."
        )
    return Reachability(**found, unchecked=unchecked, notes=notes)
