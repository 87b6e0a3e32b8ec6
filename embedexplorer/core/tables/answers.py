"""What the table's questions answer with: neighbours, a looked-up word, a table's facts, readable tokens.

Plain values the worker hands across threads and the command line prints; the table
(``embedding_table``) makes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import overload

from ..text.texts import Token, fixed
from ..text.vocabulary import Vocabulary


class ReadableTokens(Sequence[str]):
    """Every row's token in readable form, made on first use and remembered."""

    def __init__(self, vocabulary: Vocabulary, rows: int) -> None:
        self._vocabulary, self._rows = vocabulary, rows
        self._made: dict[int, str] = {}

    def __len__(self) -> int:
        return self._rows

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._rows))]
        token_id = int(index)
        if token_id < 0:
            token_id += self._rows
        if not 0 <= token_id < self._rows:
            raise IndexError(f"token id {index} is outside the table")
        made = self._made.get(token_id)
        if made is None:
            vocabulary = self._vocabulary
            made = vocabulary.readable(token_id) if token_id < vocabulary.size else f"<row {token_id}>"
            self._made[token_id] = made
        return made

    def many(self, ids: list[int]) -> list[str]:
        """The tokens of rows ``ids`` (each in the table): those made already by one lookup each."""
        made = self._made
        return [made[i] if i in made else self[i] for i in ids]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ReadableTokens, list)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Neighbour:
    id: int
    token: str
    cosine: float


@dataclass(frozen=True)
class Query:
    """The token that answers for what the user typed, and why."""

    id: int
    token: str
    pieces: tuple[Token, ...]
    note: str = ""


@dataclass(frozen=True)
class NeighbourResult:
    query: Query | None
    neighbours: tuple[Neighbour, ...]
    note: str = ""


@dataclass(frozen=True)
class TableFacts:
    model: str
    rows: int
    width: int
    table_weights: int
    model_weights: int
    share: float
    position_rows: int | None
    position_note: str
    baseline_cosine: float
    vocabulary_size: int
    dtype: str
    storage: str = ""  # how the file stores the table, in words: "BF16", "Q4_K, dequantised"
    memory_bytes: int = 0  # what the table's rows and its first pass take, mapped or copied
    pointing_nowhere: str = ""  # the rows holding NaN or infinity or all zero, in a sentence ("" for none)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> str:
        """The chapter's sentences about a table: rows x width = weights, share of the model."""
        positions = f"{self.position_rows:,} position rows" if self.position_rows else self.position_note
        return (
            f"model: {self.model}\n"
            f"{self.rows:,} rows x {self.width:,} numbers = {self.table_weights:,} weights\n"
            f"share of the whole model: {self.table_weights:,} / {self.model_weights:,} = {self.share:.1%}\n"
            f"{positions}\n"
            f"stored as {self.storage or self.dtype}; the table holds {self.memory_bytes / 1e6:,.0f} MB\n"
            f"mean cosine of unrelated tokens (baseline): {fixed(self.baseline_cosine, 3)}"
        )
