"""Maps of any set of rows (up to the whole vocabulary), with the families coloured among them."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from ..common.constants import NO_FAMILY  # a point of no family (the window names it too)
from ..common.errors import FamiliesError
from ..tables.embedding_table import EmbeddingTable
from .family_map import Families, FamilyMap, FamilySums, family_sums
from .map_cache import MapCache
from .projections import SEED, Layout, Progress, ShouldStop, check_method, neighbour_layout, project
from .word_sets import WordSet

if TYPE_CHECKING:
    from .provenance import Provenance



@dataclass(frozen=True)
class WordMap:
    """Every point of a map as arrays, ready to draw and to describe.

    ``family_of[i]`` indexes ``families`` (or is -1 for a word in no family); ``texts`` are
    what a click looks up (the characters a token stands for, or the word as written).
    """

    model: str
    description: str
    labels: tuple[str, ...]
    texts: tuple[str, ...]
    pieces: tuple[tuple[int, ...], ...]
    family_of: np.ndarray
    families: tuple[str, ...]
    layout: Layout
    width: int
    within_family_cosine: float
    between_family_cosine: float
    notes: tuple[str, ...] = ()
    from_cache: bool = False
    seconds: float = 0.0
    seed: int | None = None  # t-SNE's and UMAP's; None for PCA and direction axes, which have no randomness
    provenance: Provenance | None = None  # where it came from, for exports (provenance.with_provenance)
    # The figures of any families shown (``FamilySums.cosines``): the caption's with some hidden.
    family_sums: FamilySums | None = field(default=None, compare=False)

    def family_cosines(self, hidden: Collection[str] = ()) -> tuple[float, float]:
        """(within, between) of the families shown; the whole map's when none is hidden or sums are missing."""
        if not hidden or self.family_sums is None:
            return self.within_family_cosine, self.between_family_cosine
        return self.family_sums.cosines(name for name in self.families if name not in hidden)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def coords(self) -> np.ndarray:
        return self.layout.coords

    @property
    def method(self) -> str:
        return self.layout.method

    @property
    def family_ratio(self) -> float:
        between = self.between_family_cosine
        return self.within_family_cosine / between if between else float("nan")

    def family_counts(self) -> dict[str, int]:
        counts = np.bincount(self.family_of[self.family_of >= 0], minlength=len(self.families))
        return {name: int(counts[i]) for i, name in enumerate(self.families)}

    def index_of(self, token_id: int) -> int | None:
        """The point that is row ``token_id`` on its own, if the map has one."""
        found = self._id_index.get(int(token_id))
        return found

    @property
    def _id_index(self) -> dict[int, int]:
        cached = self.__dict__.get("_ids")
        if cached is None:
            cached = {p[0]: i for i, p in enumerate(self.pieces) if len(p) == 1}
            object.__setattr__(self, "_ids", cached)
        return cached

    def locate(self, table: EmbeddingTable, ids: list[int]) -> list[tuple[float, float] | None]:
        """Where rows ``ids`` sit: PCA places any row; t-SNE and UMAP only the rows on the map."""
        if self.layout.pca is not None:
            coords = self.layout.pca.apply(table.rows_at(ids))
            return [(float(x), float(y)) for x, y in coords]
        found = []
        for token_id in ids:
            index = self.index_of(token_id)
            found.append(None if index is None else (float(self.coords[index, 0]), float(self.coords[index, 1])))
        return found

    def to_dict(self) -> dict[str, object]:
        names = list(self.families)
        return {
            "model": self.model,
            "words": self.description,
            "projection": self.method,
            "keeps": self.layout.keeps,
            "explained_variance": None if self.layout.pca is None else self.layout.pca.explained_variance,
            "points": [
                {
                    "token": label,
                    "ids": list(ids),
                    "family": names[f] if f >= 0 else None,
                    "x": float(x),
                    "y": float(y),
                }
                for label, ids, f, (x, y) in zip(
                    self.labels, self.pieces, self.family_of.tolist(), self.coords.tolist(), strict=True
                )
            ],
            "families": self.family_counts(),
            "within_family_cosine": self.within_family_cosine,
            "between_family_cosine": self.between_family_cosine,
            "from_cache": self.from_cache,
            "notes": list(self.notes),
        }


def from_family_map(family_map: FamilyMap, model: str) -> WordMap:
    """The 63-word (or the reader's own) family map in the same shape as a big map."""
    points = family_map.points
    families = tuple(family_map.families)
    index = {name: i for i, name in enumerate(families)}
    projection = family_map.projection
    coords = np.array([[p.x, p.y] for p in points], dtype=np.float64).reshape(-1, 2)
    layout = Layout(
        coords,
        "pca",
        projection,
        "the two directions in which they differ most; it keeps "
        f"{projection.explained_variance:.1%} of the spread",
    )
    return WordMap(
        model=model,
        description=f"{len(points)} words in {len(families)} families",
        labels=tuple(p.token for p in points),
        texts=tuple(p.word for p in points),
        pieces=tuple(p.ids for p in points),
        family_of=np.array([index[p.family] for p in points], dtype=np.int32),
        families=families,
        layout=layout,
        width=int(projection.axes.shape[1]),
        within_family_cosine=family_map.within_family_cosine,
        between_family_cosine=family_map.between_family_cosine,
        notes=family_map.notes,
        provenance=family_map.provenance,
        family_sums=family_map.sums,
    )


def _typed_text(table: EmbeddingTable, token_id: int) -> str:
    """What a person would type to get this token back (WordPiece's "##" is not typed)."""
    text = table.vocabulary.text_of(token_id)
    if not table.vocabulary.byte_level and text.startswith("##") and len(text) > 2:
        return text[2:]
    return text


def pointing_somewhere(table: EmbeddingTable, words: WordSet) -> WordSet:
    """``words`` without the rows that point nowhere (NaN, infinity, all zero): one such row makes every point nan."""
    nowhere = table.pointing_nowhere
    if not len(nowhere):
        return words
    ids, line = nowhere.left_out(words.ids, "the rows asked for")
    bad = set(nowhere.ids.tolist())
    extras = tuple((word, pieces) for word, pieces in words.extras if not bad & set(pieces))
    notes = words.notes + ((line,) if line else ())
    if len(extras) < len(words.extras):
        gone = len(words.extras) - len(extras)
        notes += (f"{gone:,} words of several tokens have a piece pointing nowhere: left out.",)
    if len(ids) == len(words.ids) and len(extras) == len(words.extras):
        return words
    return WordSet(ids, extras, f"{words.description}, {len(ids) + len(extras):,} pointing somewhere", notes)


def word_map(
    table: EmbeddingTable,
    words: WordSet,
    families: Families | None = None,
    method: str = "pca",
    *,
    seed: int = SEED,
    cache: MapCache | None = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    separate_process: bool = False,
    layout_of: Callable[[np.ndarray], Layout] | None = None,
) -> WordMap:
    """Map the rows of ``words``; the family words among them get their family's colour.

    t-SNE and UMAP maps are read from ``cache`` when it has this model, word set,
    projection and seed, and kept there when computed. ``layout_of`` places the rows
    itself instead of ``method`` (a map on two directions).
    """
    if layout_of is None:
        check_method(method)
    started = time.perf_counter()
    table.check_files()  # the rows are read from the mapped file below
    words = pointing_somewhere(table, words)
    ids = np.asarray(words.ids, dtype=np.int64)
    if words.is_whole_table(table.rows.shape[0]):
        # Memory-mapped (or stored rows that decode on reading): PCA reads it block by block, no copy.
        matrix = cast(np.ndarray, table.rows)
    else:
        parts = [np.asarray(table.rows[np.sort(ids)], dtype=np.float32)[np.argsort(np.argsort(ids))]]
        parts += [np.asarray(table.rows[list(p)], dtype=np.float64).mean(axis=0)[None, :] for _, p in words.extras]
        matrix = np.vstack(parts).astype(np.float32, copy=False) if words.extras else parts[0]
    if matrix.shape[0] < 2:
        raise FamiliesError("A map needs at least two rows.")
    tokens = table.tokens
    labels = tuple(tokens[i] for i in ids.tolist()) + tuple(
        " ".join(tokens[i] for i in p) for _, p in words.extras
    )
    texts = tuple(_typed_text(table, i) for i in ids.tolist()) + tuple(w for w, _ in words.extras)
    pieces = tuple((i,) for i in ids.tolist()) + tuple(p for _, p in words.extras)

    family_names = tuple(families or ())
    family_of = np.full(len(pieces), NO_FAMILY, dtype=np.int32)
    where = {p: i for i, p in enumerate(pieces)}
    notes = list(words.notes)
    for f, name in enumerate(family_names):
        for word in (families or {})[name]:
            found = where.get(tuple(t.id for t in table.encode(word)))
            if found is not None and family_of[found] == NO_FAMILY:
                family_of[found] = f
    missing = [name for f, name in enumerate(family_names) if not (family_of == f).any()]
    if missing:
        notes.append(f"No word of {', '.join(missing)} is among these rows.")

    coloured = np.flatnonzero(family_of >= 0)
    sums = None
    if coloured.size >= 2:
        sums = family_sums(matrix[coloured], [family_names[f] for f in family_of[coloured]])
        within, between = sums.cosines(sums.names)
    else:
        within = between = float("nan")

    layout: Layout | None = layout_of(matrix) if layout_of is not None else None
    from_cache = False
    key = ""
    if layout is None and method != "pca" and cache is not None:
        key = cache.key(table, words, method, seed)
        stored, cache_note = cache.checked(key, matrix.shape[0])
        if cache_note:
            notes.append(cache_note)
        if stored is not None:
            layout = neighbour_layout(stored, method)
            from_cache = True
    if layout is None:
        layout = project(
            matrix, method, seed=seed, progress=progress, should_stop=should_stop, separate_process=separate_process
        )
        if key and cache is not None:
            cache.store(key, layout.coords)
    return WordMap(
        model=table.name,
        description=words.description,
        labels=labels,
        texts=texts,
        pieces=pieces,
        family_of=family_of,
        families=family_names,
        layout=layout,
        width=int(table.rows.shape[1]),
        within_family_cosine=within,
        between_family_cosine=between,
        notes=tuple(notes),
        from_cache=from_cache,
        seconds=time.perf_counter() - started,
        seed=seed if layout.method in ("tsne", "umap") else None,
        family_sums=sums,
    )

