"""The best single number: which coordinate of the rows separates the two example sides best.

Coordinate j read as a direction is the axis e_j: a row's score on it is its unit row's
j-th number. Its separation is measured as the direction's is, (mean of side B - mean of
side A) over the standard deviation of all rows on it, so the two can stand side by side.
Each coordinate's spread over the vocabulary is one pass over the table, made once per
table (and kept on disk for a mapped half-precision table).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..common.progress import ProgressCallback
from ..tables.embedding_table import EmbeddingTable
from .per_table import LastTable, cached_array

_BLOCK_ROWS = 2048


@dataclass(frozen=True)
class BestCoordinate:
    """The coordinate that separates the examples best, how well, and the direction's figure beside it."""

    index: int
    separation: float  # signed: negative when side B is lower on it
    direction_separation: float
    second_index: int
    second_separation: float

    def to_dict(self) -> dict[str, object]:
        return {
            "coordinate": self.index,
            "separation": self.separation,
            "direction_separation": self.direction_separation,
            "runner_up": {"coordinate": self.second_index, "separation": self.second_separation},
        }


class CoordinateSpread:
    """Each coordinate's standard deviation over all unit rows of one table."""

    _last: LastTable[CoordinateSpread] = LastTable()

    def __init__(self, std: np.ndarray) -> None:
        self.std = std

    @classmethod
    def for_table(
        cls,
        table: EmbeddingTable,
        progress: ProgressCallback | None = None,
        check: Callable[[], None] | None = None,
    ) -> CoordinateSpread:
        def make() -> CoordinateSpread:
            std = cached_array(
                table, "coordinate-std", (table.width,), np.float64, lambda: column_std(table, progress, check)
            )
            return cls(np.array(std))

        return cls._last.get(table, make)


def column_std(
    table: EmbeddingTable, progress: ProgressCallback | None = None, check: Callable[[], None] | None = None
) -> np.ndarray:
    """The standard deviation of each number of the unit rows over every row (float64)."""
    count, width = table.rows.shape
    sums = np.zeros(width, dtype=np.float64)
    squares = np.zeros(width, dtype=np.float64)
    table.check_files()
    for start in range(0, count, _BLOCK_ROWS):
        stop = min(start + _BLOCK_ROWS, count)
        if table.stored:
            # Decoded to float32 and scaled in place: BLAS sums the columns (float32 within a block of
            # rows, float64 across blocks), with no float64 copy of the block.
            block = np.asarray(table.rows[start:stop], dtype=np.float32)
            scale = table.stored_screen.scale[start:stop]
            block[scale == 0] = 0.0  # a row that points nowhere (zeros, NaN or infinity in it) adds nothing
            block *= scale[:, None]
        else:
            unit = table.unit
            assert isinstance(unit, np.ndarray)
            block = np.array(unit[start:stop], dtype=np.float32)
        ones = np.ones(block.shape[0], dtype=np.float32)
        sums += ones @ block
        np.multiply(block, block, out=block)
        squares += ones @ block
        if progress is not None:
            progress(stop, count, "Measuring the spread of each number")
        if check is not None:
            check()
    mean = sums / count
    return np.sqrt(np.maximum(squares / count - mean * mean, 0.0))


def best_coordinate(difference: np.ndarray, std: np.ndarray, direction_separation: float) -> BestCoordinate:
    """The coordinate with the largest |mean B - mean A| / std, from the sides' mean difference of unit rows."""
    with np.errstate(divide="ignore", invalid="ignore"):
        separation = np.where(std > 0, np.asarray(difference, dtype=np.float64) / std, 0.0)
    order = np.argsort(-np.abs(separation), kind="stable")
    first, second = int(order[0]), int(order[1]) if order.size > 1 else int(order[0])
    return BestCoordinate(first, float(separation[first]), direction_separation, second, float(separation[second]))
