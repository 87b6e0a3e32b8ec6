"""A direction's whole answer: its two ends, the learner's words, the random baseline and the best single number."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..common.constants import MAX_END_SIZE
from ..common.errors import QueryError
from ..common.progress import ProgressCallback
from ..common.terminal import one_line
from ..tables.embedding_table import EmbeddingTable, Query
from ..text.texts import fixed
from .baseline import Baseline, RandomScores
from .coordinates import BestCoordinate, CoordinateSpread, best_coordinate
from .direction import Direction, DirectionSpec, make_direction, side_token
from .scores import END_SIZE, ScoredToken, Spread, direction_scores, end_ids, percentile, scored, spread_of


@dataclass(frozen=True)
class WordPlace:
    """Where one of the learner's words falls: its token's score and the share of rows below it."""

    word: str
    query: Query
    score: float
    percentile: float

    def to_dict(self) -> dict[str, object]:
        return {
            "word": self.word,
            "id": self.query.id,
            "token": self.query.token,
            "score": self.score,
            "percentile": self.percentile,
            "note": self.query.note,
        }


@dataclass(frozen=True)
class DirectionReport:
    model: str
    rows: int
    width: int
    direction: Direction
    top: tuple[ScoredToken, ...]
    bottom: tuple[ScoredToken, ...]
    words: tuple[WordPlace, ...]
    examples: tuple[WordPlace, ...]
    spread: Spread
    baseline: Baseline | None
    best: BestCoordinate | None
    # Rows pointing nowhere (NaN, infinity, all zero), left out of the ends and the statistics.
    left_out_note: str = ""

    @property
    def label(self) -> str:
        return self.direction.label

    @property
    def notes(self) -> tuple[str, ...]:
        left_out = (self.left_out_note,) if self.left_out_note else ()
        return self.direction.notes + tuple(w.query.note for w in self.words if w.query.note) + left_out

    def baseline_summary(self) -> dict[str, object] | None:
        return None if self.baseline is None else self.baseline.summary(self.spread)

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "rows": self.rows,
            "direction": self.label,
            **self.direction.spec.to_dict(),
            "top": [t.to_dict() for t in self.top],
            "bottom": [t.to_dict() for t in self.bottom],
            "words": [w.to_dict() for w in self.words],
            "examples": [w.to_dict() for w in self.examples],
            "spread": self.spread.to_dict(),
            "baseline": self.baseline_summary(),
            "best_coordinate": None if self.best is None else self.best.to_dict(),
            "notes": list(self.notes),
        }

    def baseline_lines(self) -> list[str]:
        """The direction against chance, in sentences."""
        summary = self.baseline_summary()
        if summary is None:
            return []
        lines = [f"Against {summary['directions']} random directions (seed {summary['seed']}):"]
        names = {
            "std": "spread of all scores (standard deviation)",
            "gap": f"gap between the {END_SIZE} at each end (mean top - mean bottom)",
            "separation": "separation of the examples (B - A, in standard deviations)",
        }
        for key, name in names.items():
            figure = summary[key]
            assert isinstance(figure, dict)
            times = figure["times_random_mean"]
            lines.append(
                f"  {name}: this direction {fixed(figure['direction'], 3)}; random mean "
                f"{fixed(figure['random_mean'], 3)}, largest {fixed(figure['random_max'], 3)}"
                + (f" ({times:.1f}x the mean" if times is not None else " (")
                + f"; {figure['random_at_least_as_large']} of {summary['directions']} random as large)"
            )
        return lines

    def text_lines(self) -> list[str]:
        """The whole answer as the command line prints it."""
        # Every name from the model or the user is one line: a token holding a newline forges no row.
        lines = [
            f"model: {one_line(self.model)}",
            f"direction: {one_line(self.label)} (cosine of every one of {self.rows:,} rows with it)",
        ]
        lines += [f"note: {one_line(note)}" for note in self.notes]
        for title, ends in (("highest", self.top), ("lowest", self.bottom)):
            lines.append(f"{len(ends)} {title}:")
            lines += [f"  {one_line(t.token):<20} {t.id:>8}  {t.score:+.3f}" for t in ends]
        if self.words:
            lines.append("your words:")
            lines += [
                f"  {one_line(w.word):<14} {one_line(w.query.token):<14} {w.score:+.3f}  "
                f"above {w.percentile:5.1f}% of the rows"
                for w in self.words
            ]
        lines += self.baseline_lines()
        if self.best is not None:
            lines.append(self.best_line())
        return lines

    def best_line(self) -> str:
        best = self.best
        if best is None:
            return ""
        return (
            f"Best single number: #{best.index} separates the examples by {fixed(best.separation, 2)} standard "
            f"deviations (next #{best.second_index}, {fixed(best.second_separation, 2)}); "
            f"the direction by {fixed(best.direction_separation, 2)}."
        )


def direction_report(
    table: EmbeddingTable,
    spec: DirectionSpec,
    words: tuple[str, ...] = (),
    k: int = END_SIZE,
    *,
    baseline: bool = True,
    coordinates: bool = True,
    progress: ProgressCallback | None = None,
    check: Callable[[], None] | None = None,
) -> DirectionReport:
    """Score every row of ``table`` on the direction of ``spec`` and say what it means.

    ``baseline`` adds the random directions (one more read of the table the first time);
    ``coordinates`` the best single number (a pass over the table the first time).
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_END_SIZE:
        raise QueryError(f"The number of tokens at each end must be a whole number from 1 to {MAX_END_SIZE:,}.")
    direction = make_direction(table, spec)
    places = tuple((w, side_token(table, w)) for w in words)
    scores = direction_scores(table, direction.vector)
    if check is not None:
        check()
    # A row pointing nowhere has no cosine with the direction: it is no end and no part of the
    # spread or of a word's percentile (its 0 would sit in the middle of every distribution).
    nowhere = table.pointing_nowhere
    kept, left_out_note = nowhere.left_out(np.arange(scores.shape[0]), "the rows scored")
    if kept.size < scores.shape[0]:
        scores = scores.astype(np.float32, copy=True)
        scores[np.setdiff1d(np.arange(scores.shape[0]), kept)] = np.nan
    ids_a, ids_b = direction.ids_a, direction.ids_b
    spread = spread_of(scores, ids_a, ids_b)

    def place(word: str, query: Query) -> WordPlace:
        score = float(scores[query.id])
        return WordPlace(word, query, score, percentile(scores, score))

    examples = tuple(place(q.pieces[0].text if q.pieces else q.token, q) for q in direction.side_a + direction.side_b)
    random = RandomScores.for_table(table, progress, check).baseline(ids_a, ids_b) if baseline else None
    best = None
    if coordinates:
        std = CoordinateSpread.for_table(table, progress, check).std
        best = best_coordinate(direction.difference, std, spread.separation)
    return DirectionReport(
        model=table.name,
        rows=int(table.rows.shape[0]),
        width=table.width,
        direction=direction,
        top=scored(table, end_ids(scores, k, highest=True), scores),
        bottom=scored(table, end_ids(scores, k, highest=False), scores),
        words=tuple(place(w, q) for w, q in places),
        examples=examples,
        spread=spread,
        baseline=random,
        best=best,
        left_out_note=left_out_note,
    )
