"""Two tables compared token by token: row cosines, neighbour overlaps, ranks, and a summary of them.

Both tables are searched among the matched tokens only, so a neighbour in A can always be
found in B. The neighbours come from every number of the rows (``every_neighbour``),
never from a map.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..common.errors import QueryError
from ..common.progress import ProgressCallback
from ..search import neighbours as nb
from ..tables.embedding_table import EmbeddingTable
from .every_neighbour import nearest_of_all, planned_cores
from .matching import TokenMatch, match_tokens

# Fewer tokens in common than this share of the smaller table is not one vocabulary compared.
MIN_SHARED = 0.1
# Tokens listed as the most and the least changed.
LISTED = 10
COSINE_BINS = 40


@dataclass(frozen=True)
class TokenChange:
    """One token's change from A to B, with both neighbour lists (readable tokens, cosines)."""

    id: int
    token: str
    row_cosine: float | None
    relative_error: float | None
    overlap: int
    rank_in_b: int  # where A's nearest token stands among B's neighbours of this token (1 = nearest)
    near_a: tuple[tuple[str, float], ...]
    near_b: tuple[tuple[str, float], ...]
    kept_a: tuple[bool, ...] = ()  # which of near_a are among near_b (matched tokens, whatever their spelling)
    kept_b: tuple[bool, ...] = ()


@dataclass(frozen=True)
class Comparison:
    """Every compared token's change (arrays in the order of ``ids_a``) and where they came from."""

    a: str
    b: str
    storage_a: str
    storage_b: str
    k: int
    match: TokenMatch
    ids_a: np.ndarray  # the compared tokens, as ids of A
    ids_b: np.ndarray
    tokens_a: Sequence[str]  # every row's readable token, by id
    tokens_b: Sequence[str]
    overlap: np.ndarray  # how many of A's k nearest are among B's k nearest
    rank_in_b: np.ndarray
    near_a: np.ndarray  # (tokens, k) ids of A
    near_b: np.ndarray  # (tokens, k) ids of B
    cosines_a: np.ndarray
    cosines_b: np.ndarray
    row_cosine: np.ndarray | None  # None when the widths differ
    relative_error: np.ndarray | None  # |a - b| / |a|
    widths: tuple[int, int]
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())
    text_of_a: Callable[[int], str] | None = None  # the characters a token of A stands for (to look it up)

    def text_of(self, position: int) -> str:
        """What to type to look up the compared token at ``position`` in A."""
        token_id = int(self.ids_a[position])
        return self.text_of_a(token_id) if self.text_of_a is not None else self.tokens_a[token_id]

    def __len__(self) -> int:
        return int(self.ids_a.size)

    def change_order(self) -> np.ndarray:
        """Positions from the most changed token to the least: fewest shared neighbours, then lowest row cosine."""
        second = self.row_cosine if self.row_cosine is not None else -self.rank_in_b.astype(np.float64)
        return np.lexsort((self.ids_a, second, self.overlap))

    @cached_property
    def _partner_in_b(self) -> np.ndarray:
        """For each id of A, the id of its partner in B (-1: none)."""
        partner = np.full(int(self.match.ids_a.max(initial=-1)) + 1, -1, dtype=np.int64)
        partner[self.match.ids_a] = self.match.ids_b
        return partner

    def token(self, position: int) -> TokenChange:
        token_id = int(self.ids_a[position])
        near_a_in_b = self._partner_in_b[self.near_a[position]].tolist()
        near_b = self.near_b[position].tolist()
        return TokenChange(
            id=token_id,
            token=self.tokens_a[token_id],
            row_cosine=None if self.row_cosine is None else float(self.row_cosine[position]),
            relative_error=None if self.relative_error is None else float(self.relative_error[position]),
            overlap=int(self.overlap[position]),
            rank_in_b=int(self.rank_in_b[position]),
            near_a=_listed(self.tokens_a, self.near_a[position], self.cosines_a[position]),
            near_b=_listed(self.tokens_b, self.near_b[position], self.cosines_b[position]),
            kept_a=tuple(i in near_b for i in near_a_in_b),
            kept_b=tuple(i in near_a_in_b for i in near_b),
        )

    def position_of(self, token_id: int) -> int | None:
        found = np.flatnonzero(self.ids_a == token_id)
        return int(found[0]) if found.size else None

    def most_changed(self, count: int = LISTED) -> list[int]:
        return self.change_order()[:count].tolist()

    def least_changed(self, count: int = LISTED) -> list[int]:
        return self.change_order()[::-1][:count].tolist()

    def summary(self) -> dict[str, object]:
        """Means, medians, histograms and the most and least changed tokens."""
        overlap = self.overlap.astype(np.float64)
        summary: dict[str, object] = {
            "matched_by": self.match.by,
            "only_in_a": self.match.only_a,
            "only_in_b": self.match.only_b,
            "compared": len(self),
            "storage_a": self.storage_a,
            "storage_b": self.storage_b,
            "widths": list(self.widths),
            "mean_overlap": float(overlap.mean()),
            "median_overlap": float(np.median(overlap)),
            "overlap_histogram": np.bincount(self.overlap, minlength=self.k + 1).tolist(),
            "nearest_kept": float(np.mean(self.rank_in_b == 1)),
            "median_rank_in_b": float(np.median(self.rank_in_b)),
        }
        if self.row_cosine is not None and self.relative_error is not None:
            counts, edges = self.cosine_histogram()
            summary |= {
                "mean_row_cosine": float(self.row_cosine.mean()),
                "median_row_cosine": float(np.median(self.row_cosine)),
                "mean_relative_error": float(self.relative_error.mean()),
                "median_relative_error": float(np.median(self.relative_error)),
                "row_cosine_histogram": {"counts": counts.tolist(), "edges": edges.tolist()},
            }
        summary["most_changed"] = [self._brief(p) for p in self.most_changed()]
        summary["least_changed"] = [self._brief(p) for p in self.least_changed()]
        summary["notes"] = list(self.notes)
        return summary

    def cosine_histogram(self) -> tuple[np.ndarray, np.ndarray]:
        assert self.row_cosine is not None
        low = float(min(self.row_cosine.min(), 0.999))
        counts, edges = np.histogram(self.row_cosine, bins=COSINE_BINS, range=(low, 1.0))
        return counts, edges

    def _brief(self, position: int) -> dict[str, object]:
        token_id = int(self.ids_a[position])
        return {
            "id": token_id,
            "token": self.tokens_a[token_id],
            "row_cosine": None if self.row_cosine is None else float(self.row_cosine[position]),
            "overlap": int(self.overlap[position]),
        }

    def to_dict(self) -> dict[str, object]:
        cosines = [None] * len(self) if self.row_cosine is None else self.row_cosine.tolist()
        tokens = [
            {"id": i, "token": self.tokens_a[i], "row_cosine": c, "overlap": o}
            for i, c, o in zip(self.ids_a.tolist(), cosines, self.overlap.tolist(), strict=True)
        ]
        return {
            "a": self.a,
            "b": self.b,
            "k": self.k,
            "matched": len(self.match),
            "tokens": tokens,
            "summary": self.summary(),
        }


def _listed(tokens: Sequence[str], ids: np.ndarray, cosines: np.ndarray) -> tuple[tuple[str, float], ...]:
    return tuple((tokens[i], c) for i, c in zip(ids.tolist(), cosines.tolist(), strict=True))


def compare_tables(
    a: EmbeddingTable,
    b: EmbeddingTable,
    k: int = 10,
    *,
    words: np.ndarray | None = None,
    progress: ProgressCallback | None = None,
) -> Comparison:
    """Compare every matched token (or the tokens of A named by ``words``) of ``a`` with ``b``.

    Raises ``QueryError`` for vocabularies with few tokens in common or a bad ``k``;
    ``progress`` may raise to stop the work between blocks.
    """
    started = time.perf_counter()
    report = progress or (lambda done, total, message: None)
    report(0, 0, "Matching the tokens")
    match = match_tokens(a, b)
    smaller = min(a.rows.shape[0], b.rows.shape[0])
    if len(match) < max(2, MIN_SHARED * smaller):
        raise QueryError(
            f"{a.name} and {b.name} have only {len(match):,} tokens in common (of {a.rows.shape[0]:,} and "
            f"{b.rows.shape[0]:,}): they are not one vocabulary, so their neighbours cannot be compared."
        )
    notes = _notes(a, b, match)
    # Rows pointing nowhere in either table have no neighbours and no row cosine: neither
    # queries nor candidates (their NaN would reach every score of a block).
    match, left_out = _pointing_somewhere(a, b, match)
    notes += left_out
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < len(match):
        raise QueryError(
            f"The number of neighbours must be a whole number from 1 to {max(1, len(match) - 1):,} (one less than "
            f"the {len(match):,} tokens compared), not {k!r}."
        )
    queries = _chosen(match, words)
    total = 2 * queries.size
    ids_a, ids_b = match.ids_a[queries], match.ids_b[queries]
    report(0, total, "Comparing the rows")
    row_cosine = relative_error = None
    if a.width == b.width:  # first, while both tables' pages are in from the check above
        row_cosine, relative_error = _row_changes(a, b, ids_a, ids_b)
    else:
        notes.append(
            f"The rows have different widths ({a.width:,} and {b.width:,} numbers), so they cannot be compared "
            "number by number: only the neighbours are compared."
        )
    # Each search holds one table's pages and one tile, not both tables' (the pages come back from
    # the page cache when the table is read again).
    _release_pages(b)
    _release_pages(a)
    a.check_files()
    rows_a = _float32_rows(a, match.ids_a)
    cores = _on_cores(planned_cores(rows_a)[0])
    near_a = nearest_of_all(
        rows_a, queries, k, step=lambda done: report(done, total, f"Nearest tokens in A ({a.name}), {cores}")
    )
    del rows_a
    _release_pages(a)
    b.check_files()
    rows_b = _float32_rows(b, match.ids_b)
    near_b = nearest_of_all(
        rows_b,
        queries,
        k,
        targets=near_a.ids[:, 0],
        step=lambda done: report(queries.size + done, total, f"Nearest tokens in B ({b.name}), {cores}"),
    )
    del rows_b
    _release_pages(b)
    notes.append(
        f"The {k} nearest of each compared token in A and in B: {_on_cores(near_a.threads)} "
        f"({near_a.product} products, exact float64 scores for the few that could win)."
    )
    report(total, total, "Comparing the neighbour lists")
    overlap = _overlaps(near_a.ids, near_b.ids)
    assert near_b.target_ranks is not None
    return Comparison(
        a=a.name,
        b=b.name,
        storage_a=a.storage_note(),
        storage_b=b.storage_note(),
        k=int(k),
        match=match,
        ids_a=ids_a,
        ids_b=ids_b,
        tokens_a=a.tokens,
        tokens_b=b.tokens,
        overlap=overlap,
        rank_in_b=near_b.target_ranks,
        near_a=match.ids_a[near_a.ids],
        near_b=match.ids_b[near_b.ids],
        cosines_a=near_a.cosines,
        cosines_b=near_b.cosines,
        row_cosine=row_cosine,
        relative_error=relative_error,
        widths=(a.width, b.width),
        seconds=time.perf_counter() - started,
        notes=tuple(notes),
        text_of_a=a.vocabulary.text_of,
    )


def _on_cores(threads: int) -> str:
    """``on 2 of 2 cores``: how many the products were split over, of the machine's."""
    return f"on {threads} of {os.cpu_count() or threads} cores"


def _chosen(match: TokenMatch, words: np.ndarray | None) -> np.ndarray:
    """Positions (in the matched list) of the tokens to compare: all, or those of ``words`` that B has too."""
    if words is None:
        return np.arange(len(match), dtype=np.int64)
    wanted = np.isin(match.ids_a, np.asarray(words, dtype=np.int64))
    positions = np.flatnonzero(wanted)
    if positions.size == 0:
        raise QueryError("None of the chosen words is a token of both tables.")
    return positions


def _pointing_somewhere(a: EmbeddingTable, b: EmbeddingTable, match: TokenMatch) -> tuple[TokenMatch, list[str]]:
    """``match`` without the pairs whose row points nowhere in A or in B, and a line for each table that had some."""
    keep = np.ones(len(match), dtype=bool)
    notes = []
    for side, table, ids in (("A", a, match.ids_a), ("B", b, match.ids_b)):
        usable = table.pointing_nowhere.usable(ids)
        if not usable.all():
            _, line = table.pointing_nowhere.left_out(ids, f"{side}'s matched rows")
            notes.append(line)
            keep &= usable
    if keep.all():
        return match, notes
    kept = replace(match, ids_a=match.ids_a[keep], ids_b=match.ids_b[keep])
    return kept, notes


def _notes(a: EmbeddingTable, b: EmbeddingTable, match: TokenMatch) -> list[str]:
    notes = [match.sentence()]
    files_a = {s.path.resolve() for s in a.mapped_files}
    if files_a and files_a == {s.path.resolve() for s in b.mapped_files}:
        notes.append("A and B are the same file: every overlap is k and every row cosine 1.000.")
    return notes


def _release_pages(table: EmbeddingTable) -> None:
    """Drop a float32 table's mapped pages from this process (read-only file maps; anything else is left)."""
    release = nb._page_releaser(table.rows)
    if isinstance(table.rows, np.ndarray):
        release(table.rows)


def _float32_rows(table: EmbeddingTable, ids: np.ndarray) -> np.ndarray:
    """The matched rows as float32: a float32 table itself when every row is matched, else a copy."""
    rows = table.rows
    if isinstance(rows, np.ndarray) and rows.dtype == np.float32 and np.array_equal(ids, np.arange(rows.shape[0])):
        return rows
    out = np.empty((ids.size, table.width), dtype=np.float32)
    step = 8192
    for start in range(0, ids.size, step):
        picked = ids[start : start + step]
        out[start : start + step] = rows[picked]
    return out


def _overlaps(near_a: np.ndarray, near_b: np.ndarray) -> np.ndarray:
    """How many ids of each row of ``near_a`` are in the same row of ``near_b`` (ids within a row are distinct)."""
    together = np.sort(np.concatenate([near_a, near_b], axis=1), axis=1)
    return (together[:, 1:] == together[:, :-1]).sum(axis=1).astype(np.int64)


def _row_changes(
    a: EmbeddingTable, b: EmbeddingTable, ids_a: np.ndarray, ids_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each token's cosine between its two rows and |a - b| / |a|, in float64."""
    cosine = np.empty(ids_a.size, dtype=np.float64)
    error = np.empty(ids_a.size, dtype=np.float64)
    step = 1024  # float64 copies of this many rows of each table: a few MB, not a table's worth
    for start in range(0, ids_a.size, step):
        row_a = np.asarray(a.rows[ids_a[start : start + step]], dtype=np.float64)
        row_b = np.asarray(b.rows[ids_b[start : start + step]], dtype=np.float64)
        length_a = np.linalg.norm(row_a, axis=1)
        length_b = np.linalg.norm(row_b, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cosine[start : start + step] = np.einsum("ij,ij->i", row_a, row_b) / (length_a * length_b)
            error[start : start + step] = np.linalg.norm(row_a - row_b, axis=1) / length_a
    # Rounding can put a row's cosine with itself a hair over 1.
    return np.clip(np.nan_to_num(cosine, nan=0.0), -1.0, 1.0), np.nan_to_num(error, nan=0.0, posinf=np.inf)
