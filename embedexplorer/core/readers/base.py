"""The reader protocol: what every file kind answers, and the model it hands back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..stored_rows import StoredRows
    from ..vocabulary import Vocabulary

ProgressCallback = Callable[[int, int, str], None]


@dataclass
class OpenedModel:
    """What a reader found in a model file or folder: the table, the tokenizer and the facts.

    ``rows`` is a float32 array (usually memory-mapped) or, for half-precision and
    quantised tables, ``StoredRows`` that give float32 rows on demand.
    """

    rows: np.ndarray | StoredRows
    vocabulary: Vocabulary
    model_weights: int
    storage: str  # how the file stores the token table: "F32", "BF16", "Q4_K", ...
    positions: np.ndarray | None = None
    position_note: str = ""
    folder: Path | None = None
    config: dict[str, object] = field(default_factory=dict)


class Reader(Protocol):
    """One file kind: ``claims`` says whether a path is of this kind, ``open`` reads it.

    ``claims`` must be cheap (a name, a directory listing or a file's first bytes)
    and never raise; ``open`` raises an ``EmbedExplorerError`` with a sentence a
    person can act on.
    """

    name: str

    def claims(self, path: Path) -> bool: ...

    def open(self, path: Path, report: ProgressCallback, separate_tokenizer: bool = False) -> OpenedModel: ...
