"""Every row's score on a direction (its cosine with it), the two ends and where a word falls.

The scores come from one pass over the rows as the table keeps them: a float32 table's
unit rows through BLAS, a half-precision table's stored 16-bit rows through the C scan
(each product scaled by the row's stored reciprocal length), so no float32 copy of a
bfloat16 table is made.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import cache
from ..common.constants import END_SIZE  # tokens shown at each end (the window names it before this loads)
from ..search.stored_rows import StoredRows
from ..tables.embedding_table import EmbeddingTable


@dataclass(frozen=True, slots=True)
class ScoredToken:
    """A row, its readable token, its score, and what a person would type to look it up."""

    id: int
    token: str
    score: float
    text: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "token": self.token, "score": self.score}


@dataclass(frozen=True)
class Spread:
    """How far a direction orders the whole vocabulary, and how it separates the example sides.

    ``std``: the standard deviation of all rows' scores. ``gap``: the mean score of the
    ``END_SIZE`` highest rows minus that of the lowest. ``separation``: the mean score of
    the second side's examples minus the first side's, in standard deviations of all scores.
    """

    std: float
    gap: float
    separation: float

    def to_dict(self) -> dict[str, float]:
        return {"std": self.std, "gap": self.gap, "separation": self.separation}


def direction_scores(table: EmbeddingTable, vector: np.ndarray) -> np.ndarray:
    """Every row's cosine with ``vector`` (float32, one per row; rows that point nowhere score 0)."""
    unit = np.asarray(vector, dtype=np.float64)
    unit = (unit / np.linalg.norm(unit)).astype(np.float32)
    table.check_files()
    if table.stored:
        # cosine x |query|, and the query has length 1
        return table.stored_screen.scores(unit)
    rows = table.unit
    assert isinstance(rows, np.ndarray)
    return np.asarray(rows @ unit, dtype=np.float32)


def end_ids(scores: np.ndarray, k: int, highest: bool = True) -> np.ndarray:
    """The ``k`` rows with the highest (or lowest) scores, best first; ties by the lower id."""
    k = min(k, scores.shape[0])
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    keyed = -scores if highest else scores
    chosen = np.argpartition(keyed, k - 1)[:k]
    return chosen[np.lexsort((chosen, keyed[chosen]))].astype(np.int64)


def percentile(scores: np.ndarray, score: float) -> float:
    """The share of the scored rows whose score is below ``score``, in percent (0: the lowest, ~100: the highest).

    Rows left out (NaN: pointing nowhere) count on neither side."""
    scored_rows = int(np.count_nonzero(~np.isnan(scores)))
    return 100.0 * float(np.count_nonzero(scores < np.float32(score))) / max(1, scored_rows)


def spread_of(scores: np.ndarray, ids_a: np.ndarray, ids_b: np.ndarray, k: int = END_SIZE) -> Spread:
    """``Spread`` of one direction's scores: standard deviation, gap between the ends, example separation.

    Rows left out (NaN: pointing nowhere) are not part of it."""
    every = scores
    scores = scores[~np.isnan(scores)]
    std = float(np.std(scores, dtype=np.float64))
    k = min(k, scores.shape[0])
    top = np.partition(scores, scores.shape[0] - k)[scores.shape[0] - k :]
    bottom = np.partition(scores, k - 1)[:k]
    gap = float(top.astype(np.float64).mean() - bottom.astype(np.float64).mean())
    if ids_a.size == 0 or ids_b.size == 0:
        return Spread(std, gap, 0.0)
    difference = float(every[ids_b].astype(np.float64).mean() - every[ids_a].astype(np.float64).mean())
    return Spread(std, gap, difference / std if std > 0 else 0.0)


def scored(table: EmbeddingTable, ids: np.ndarray, scores: np.ndarray) -> tuple[ScoredToken, ...]:
    tokens = table.tokens
    return tuple(
        ScoredToken(i, tokens[i], s, typed_text(table, i))
        for i, s in zip(ids.tolist(), scores[ids].tolist(), strict=True)
    )


def typed_text(table: EmbeddingTable, token_id: int) -> str:
    """What a person would type to get this token back (WordPiece's "##" is not typed)."""
    if token_id >= table.vocabulary.size:
        return str(token_id)
    text = table.vocabulary.text_of(token_id)
    if not table.vocabulary.byte_level and text.startswith("##") and len(text) > 2:
        return text[2:]
    return text


def stored_cache_key(table: EmbeddingTable) -> str | None:
    """A disk-cache name for what is computed once from a mapped stored table (as its row lengths are), else None.

    Small float32 tables are quick to measure again; a half-precision table of a current model is not.
    """
    rows = table.rows
    if not isinstance(rows, StoredRows):
        return None
    raw = rows.raw
    file = getattr(raw, "filename", None)
    if not isinstance(raw, np.memmap) or file is None:
        return None
    return cache.file_key(file, raw.offset, rows.shape, rows.storage)
