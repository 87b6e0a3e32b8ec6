"""The reader protocol: what every file kind answers, and the model it hands back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..common.errors import TableNotFoundError

if TYPE_CHECKING:
    import numpy as np

    from ..common.files import FileState
    from ..search.raw_rows import RawRows
    from ..search.stored_rows import StoredRows
    from ..search.stored_screen import StoredScreen
    from ..text.vocabulary import Vocabulary

from ..common.progress import ProgressCallback

# The most rows a token table may have: 16 times the largest vocabulary in common use
# (Gemma's 262,144), and few enough that a readable token for each fits in memory.
MAX_TABLE_ROWS = 4_194_304
# The most numbers a row may have: four times the widest tables in use (16,384 for
# Llama 3.1 405B, 18,432 for Nemotron-4 340B). A wider row is a damaged or hostile header,
# and every row is copied and scaled whole.
MAX_TABLE_WIDTH = 65_536


def check_table_shape(rows: int, width: int, what: str) -> None:
    """Refuse a token table whose shape no model has, before anything is built row by row.

    Every row gets a readable token and a length, so a header that claims 10^9 rows of
    width 0 (no bytes at all in the file) would otherwise take gigabytes.
    """
    if width < 1 or rows < 1:
        raise TableNotFoundError(f"{what} has {rows:,} rows of {width:,} numbers: there is nothing to look at.")
    if rows > MAX_TABLE_ROWS:
        raise TableNotFoundError(
            f"{what} claims {rows:,} rows; EmbedExplorer opens tables of at most {MAX_TABLE_ROWS:,} rows "
            "(the largest vocabularies in use have about 260,000)."
        )
    if width > MAX_TABLE_WIDTH:
        raise TableNotFoundError(
            f"{what} claims rows of {width:,} numbers; EmbedExplorer opens rows of at most {MAX_TABLE_WIDTH:,} "
            "(the widest models in use have about 18,000)."
        )


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
    positions: np.ndarray | StoredRows | None = None
    position_note: str = ""
    folder: Path | None = None
    config: dict[str, object] = field(default_factory=dict)
    # The memory-mapped files as they were when opened, checked before rows are read.
    mapped_files: tuple[FileState, ...] = ()
    # The first pass over stored rows, when the reader made it while the tokenizer loaded.
    stored_screen: StoredScreen | None = None
    # A float32 table's rows with their lengths, when the reader measured them while the tokenizer loaded.
    raw_rows: RawRows | None = None


class Reader(Protocol):
    """One file kind: ``claims`` says whether a path is of this kind, ``open`` reads it.

    ``claims`` must be cheap (a name, a directory listing or a file's first bytes)
    and never raise; ``open`` raises an ``EmbedExplorerError`` with a sentence a
    person can act on.
    """

    name: str
    # How a person names the kind ("GGUF file") and the file names it opens (for file dialogs and help).
    label: str
    patterns: tuple[str, ...]

    def claims(self, path: Path) -> bool: ...

    def open(
        self, path: Path, report: ProgressCallback, separate_tokenizer: bool = False, read_whole: bool = True
    ) -> OpenedModel: ...
