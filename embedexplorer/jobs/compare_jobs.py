"""Compare the open table with a second one (another file, or the model's own output head), token by token.

The second table is opened here, used and closed: the open table stays the window's, and
a second table that fails to open is one message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.common.errors import EmbedExplorerError, Interrupted
from .base import JobContext, Kind, Lane

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows
    from ..core.compare.comparison import Comparison


@dataclass(frozen=True)
class CompareRequest:
    spec: str  # the second table as the user named it (folder, .gguf, ollama:, Hub id); "" with output_head
    k: int = 10
    output_head: bool = False  # compare the open model's input table with its own output head
    words: tuple[int, ...] | None = None  # only these tokens of A (say, the map's), each against every row


def compare(ctx: JobContext, request: CompareRequest) -> Comparison:
    """The open table (A) against B, token by token: the window's File > Compare and ``embedexplorer compare``.

    B is opened with its tokenizer in a child process (time and memory limits), used and closed;
    A stays as it was.
    """
    from ..core.compare.comparison import compare_tables
    from ..core.compare.output_head import output_head_table
    from ..core.tables.opening import open_table

    first = ctx.session.table
    if request.output_head:
        second = output_head_table(first)
    else:
        ctx.progress(0, 0, f"Opening {request.spec}")
        try:
            second = open_table(request.spec, progress=ctx.progress, separate_tokenizer=True)
        except EmbedExplorerError as exc:
            if isinstance(exc, Interrupted):
                raise
            raise type(exc)(f"Could not open table B ({request.spec}): {exc}") from exc
    words = None if request.words is None else np.asarray(request.words, dtype=np.int64)
    try:
        return compare_tables(first, second, request.k, words=words, progress=ctx.progress)
    finally:
        second.close()


COMPARE = Kind("compare", Lane.LONG, compare)
