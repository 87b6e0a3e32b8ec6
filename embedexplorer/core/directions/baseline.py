"""The same figures for random directions, so a direction's spread is read against chance.

A table's rows are not spread evenly around the origin (most share a common direction),
so even a random direction orders them somewhat. 100 directions drawn uniformly on the
sphere (a fixed seed: the same baseline every time) are scored over the whole vocabulary
in one read of the rows per block, and kept per table: only the example separation
depends on the learner's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..common.progress import ProgressCallback
from ..search.many_scores import scores_many, vectorised
from ..tables.embedding_table import EmbeddingTable
from .per_table import LastTable, cached_array
from .scores import END_SIZE, Spread, spread_of

BASELINE_DIRECTIONS = 100
BASELINE_SEED = 0
# Rows per block: a progress report and a chance to stop about every few hundred milliseconds.
_BLOCK_ROWS = 8192


def random_directions(width: int, count: int = BASELINE_DIRECTIONS, seed: int = BASELINE_SEED) -> np.ndarray:
    """``count`` unit vectors uniform on the sphere of ``width`` dimensions (normal numbers, scaled)."""
    draws = np.random.default_rng(seed).standard_normal((count, width))
    return (draws / np.linalg.norm(draws, axis=1, keepdims=True)).astype(np.float32)


def many_direction_scores(
    table: EmbeddingTable,
    vectors: np.ndarray,
    progress: ProgressCallback | None = None,
    check: Callable[[], None] | None = None,
) -> np.ndarray:
    """Every row's cosine with each unit vector: ``[q, i]`` is row i on vector q (float32)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    count = table.rows.shape[0]
    out = np.empty((vectors.shape[0], count), dtype=np.float32)
    table.check_files()
    for start in range(0, count, _BLOCK_ROWS):
        stop = min(start + _BLOCK_ROWS, count)
        if table.stored:
            screen = table.stored_screen
            if screen.bf16_bits and vectorised():
                raw = scores_many(screen.bits[start:stop], vectors, bf16_bits=True)
            else:
                raw = vectors @ np.asarray(table.rows[start:stop], dtype=np.float32).T
            scale = screen.scale[start:stop]
            # A row that points nowhere scores 0, as in the single pass (NaN times 0 would be NaN).
            out[:, start:stop] = np.where(scale == 0, np.float32(0), raw * scale)
        else:
            unit = table.unit
            assert isinstance(unit, np.ndarray)
            out[:, start:stop] = vectors @ unit[start:stop].T
        if progress is not None:
            progress(stop, count, f"Scoring {vectors.shape[0]} random directions")
        if check is not None:
            check()
    return out


@dataclass(frozen=True)
class Baseline:
    """``Spread`` figures of each random direction; the real direction is compared with them."""

    count: int
    seed: int
    spreads: tuple[Spread, ...]

    def summary(self, real: Spread) -> dict[str, object]:
        """For each figure: the random directions' mean and largest, the real one, and how many random ones reach it.

        Separation is compared by size: a random direction's sign is a coin toss.
        """
        out: dict[str, object] = {"directions": self.count, "seed": self.seed, "end_size": END_SIZE}
        for name in ("std", "gap", "separation"):
            values = np.abs([getattr(s, name) for s in self.spreads])
            mine = abs(getattr(real, name))
            out[name] = {
                "random_mean": float(values.mean()),
                "random_max": float(values.max()),
                "direction": float(getattr(real, name)),
                "times_random_mean": float(mine / values.mean()) if values.mean() > 0 else None,
                "random_at_least_as_large": int(np.count_nonzero(values >= mine)),
            }
        return out


class RandomScores:
    """The random directions' scores over one table, kept while the table is open."""

    _last: LastTable[RandomScores] = LastTable()

    def __init__(self, scores: np.ndarray, seed: int) -> None:
        self.scores, self.seed = scores, seed
        # What does not depend on the examples, once: each direction's spread and gap between its ends.
        none = np.empty(0, dtype=np.int64)
        self._fixed = [spread_of(row, none, none) for row in scores]

    @classmethod
    def for_table(
        cls,
        table: EmbeddingTable,
        progress: ProgressCallback | None = None,
        check: Callable[[], None] | None = None,
    ) -> RandomScores:
        def make() -> RandomScores:
            scores = cached_array(
                table,
                f"random-{BASELINE_DIRECTIONS}-{BASELINE_SEED}",
                (BASELINE_DIRECTIONS, table.rows.shape[0]),
                np.float32,
                lambda: many_direction_scores(table, random_directions(table.width), progress, check),
            )
            return cls(np.asarray(scores), BASELINE_SEED)

        return cls._last.get(table, make)

    def baseline(self, ids_a: np.ndarray, ids_b: np.ndarray) -> Baseline:
        """Each random direction's figures for these examples (only their separation is computed here)."""
        means = self.scores[:, ids_b].astype(np.float64).mean(axis=1) - self.scores[:, ids_a].astype(np.float64).mean(
            axis=1
        )
        spreads = tuple(
            Spread(fixed.std, fixed.gap, float(mean) / fixed.std if fixed.std > 0 else 0.0)
            for fixed, mean in zip(self._fixed, means.tolist(), strict=True)
        )
        return Baseline(len(spreads), self.seed, spreads)
