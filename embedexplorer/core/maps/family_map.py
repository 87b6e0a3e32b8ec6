"""Families of words and the flat map: an exact 2-D PCA and family cosine statistics."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...resources import resource_path
from ..common.blas import limit_blas
from ..common.constants import MULTI_TOKEN_ACTIONS
from ..common.errors import FamiliesError
from ..common.files import FAMILIES_FILE_LIMIT, atomic_write_bytes, parse_json, read_regular
from ..search.stored_rows import StoredRows
from ..tables.embedding_table import EmbeddingTable

if TYPE_CHECKING:
    from .provenance import Provenance

Families = dict[str, list[str]]
# What one map shows at most: a legend of 1,000 families is already unreadable, and 20,000
# words (the whole of a small vocabulary) map in seconds with memory that grows linearly.
MAX_FAMILIES = 1_000
MAX_FAMILY_WORDS = 20_000
MAX_WORD_CHARS = 1_000


def default_families_path() -> Path:
    return resource_path("families.json")


def load_families(path: str | Path | None = None) -> Families:
    """Read a families file: {"families": {name: [word, ...]}} (a bare mapping works too)."""
    file = _path_of(path, "read") if path else default_families_path()
    raw = read_regular(file, "families file", FAMILIES_FILE_LIMIT, FamiliesError)
    # utf-8-sig: files saved by Windows editors often start with a byte-order mark.
    data = parse_json(raw, f"families file {file.name}", FamiliesError, encoding="utf-8-sig")
    families = data.get("families", data) if isinstance(data, dict) else None
    return _checked(families, file.name)


def _path_of(path: object, verb: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise FamiliesError(f"The families file to {verb} must be a path, not {type(path).__name__} ({path!r:.60}).")
    return Path(path)


def _checked(families: object, source: str) -> Families:
    """Families with the right shape, or a FamiliesError naming ``source``."""
    if not isinstance(families, dict):
        raise FamiliesError(f"{source} must hold an object of family names and word lists.")
    clean: Families = {}
    words_seen = 0
    for name, words in families.items():
        if not isinstance(name, str):
            raise FamiliesError(f"{source}: family names must be text, not {type(name).__name__}.")
        if name.startswith("_"):
            continue
        if (
            not isinstance(words, list)
            or not words
            or not all(isinstance(w, str) and w.strip() for w in words)
        ):
            raise FamiliesError(f"Family {name!r} in {source} must be a list of non-empty words.")
        for text in (name, *words):
            _check_text(text, name, source)
        clean[name] = list(words)
        words_seen += len(words)
        if len(clean) > MAX_FAMILIES or words_seen > MAX_FAMILY_WORDS:
            raise FamiliesError(
                f"{source} has more than {MAX_FAMILIES:,} families or {MAX_FAMILY_WORDS:,} words; a map "
                f"shows at most that many (split the families into several files)."
            )
    if not clean:
        raise FamiliesError(f"{source} has no families.")
    return clean


def _check_text(text: str, family: str, source: str) -> None:
    """Refuse text that is not text: lone surrogates (half a UTF-16 pair) and overlong words."""
    if len(text) > MAX_WORD_CHARS:
        raise FamiliesError(
            f"Family {family[:40]!r} in {source} has a name or word of {len(text):,} characters; "
            f"at most {MAX_WORD_CHARS:,} are allowed."
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FamiliesError(
            f"Family {family[:40]!r} in {source} has a lone surrogate (U+{ord(text[exc.start]):04X}) in "
            f"{text[:40]!r}: half of a character, which is not text."
        ) from None


def save_families(families: Families, path: str | Path) -> None:
    """Write a families file atomically: readers see the old file or the new one, never half.

    Families that could not be read back are refused before anything is written, and a
    failed write (no space, no permission) is a FamiliesError with the old file untouched.
    """
    target = _path_of(path, "save")
    clean = _checked(families, "The families to save")
    payload = json.dumps({"families": clean}, indent=2, ensure_ascii=False) + "\n"
    try:
        atomic_write_bytes(target, payload.encode("utf-8"), through_link=True)
    except OSError as exc:
        raise FamiliesError(
            f"Cannot save the families to {target}: {exc.strerror or exc}. The file there is unchanged."
        ) from exc


@dataclass(frozen=True)
class Projection:
    """An exact 2-D PCA: centre, the two axes and the share of the spread they keep."""

    mean: np.ndarray
    axes: np.ndarray  # (2, width)
    axis_variance: tuple[float, float]  # share of the total spread on each axis
    explained_variance: float

    def apply(self, rows: np.ndarray | StoredRows) -> np.ndarray:
        rows = np.atleast_2d(rows)
        if rows.shape[0] <= _PCA_BLOCK_ROWS:
            return (np.asarray(rows, dtype=np.float64) - self.mean) @ self.axes.T
        # Many rows: (row - mean) . axis = row . axis - mean . axis, so the rows are read once,
        # in their own float32, with no centred copy; the offset is taken in float64.
        work = _working_type(rows)
        axes = self.axes.T.astype(work)
        offset = self.mean @ self.axes.T
        out = np.empty((rows.shape[0], 2), dtype=np.float64)
        for i in range(0, rows.shape[0], _PCA_BLOCK_ROWS):
            out[i : i + _PCA_BLOCK_ROWS] = np.asarray(rows[i : i + _PCA_BLOCK_ROWS], dtype=work) @ axes
        return out - offset


# Rows per block when a map covers many rows: 4,096 x 768 float64 is 25 MB, where a
# float64 copy of all 50,257 GPT-2 rows would be 300 MB.
_PCA_BLOCK_ROWS = 4096


def _working_type(rows: np.ndarray | StoredRows) -> type[np.floating]:
    """float64 rows are worked on as they are; every other kind (float32, half, stored) in float32."""
    return np.float64 if rows.dtype == np.float64 else np.float32


def pca_2d(rows: np.ndarray | StoredRows) -> Projection:
    """The two directions in which ``rows`` differ most, with signs fixed for repeatable maps."""
    if rows.ndim != 2 or rows.shape[0] < 2:
        raise FamiliesError("A map needs at least two rows.")
    count, width = rows.shape
    if count < width:
        centred = np.asarray(rows, dtype=np.float64)
        mean = centred.mean(axis=0)
        centred = centred - mean
        total = float((centred**2).sum())
        _, singular, vt = np.linalg.svd(centred, full_matrices=False)
        variances, axes = singular[:2] ** 2, vt[:2]
    else:
        # Many rows: the width x width scatter matrix is far smaller than the rows, and it
        # adds up block by block. A float32 table's blocks multiply in float32 (half the time
        # of float64) and add up in float64, so the error stays that of 4,096 terms.
        work = _working_type(rows)
        mean = np.zeros(width)
        for start in range(0, count, _PCA_BLOCK_ROWS):
            mean += np.asarray(rows[start : start + _PCA_BLOCK_ROWS], dtype=work).sum(axis=0, dtype=np.float64)
        mean /= count
        centre = mean.astype(work)
        scatter = np.zeros((width, width))
        for start in range(0, count, _PCA_BLOCK_ROWS):
            block = np.asarray(rows[start : start + _PCA_BLOCK_ROWS], dtype=work) - centre
            scatter += block.T @ block
        total = float(np.trace(scatter))
        # One BLAS thread: LAPACK's eigh makes many small calls, and two threads spin-waiting
        # on each other took 40 s instead of 3 s for 768 x 768 on a busy 2-core machine.
        # numpy's eigh, not scipy's faster one for two vectors: scipy's LAPACK wrappers hold
        # Python's lock throughout (70 ms for 768 x 768), and this runs beside the window's thread.
        with limit_blas(1):
            values, vectors = np.linalg.eigh(scatter)
        variances, axes = values[::-1][:2], vectors[:, ::-1][:, :2].T
    axes = axes.copy()
    if axes.shape[0] < 2:  # one-dimensional data: the second axis carries nothing
        axes = np.vstack([axes, np.zeros_like(axes[0])])
        variances = np.append(variances, 0.0)
    for i, axis in enumerate(axes):
        if axis[np.argmax(np.abs(axis))] < 0:
            axes[i] = -axis
    shares = tuple(float(v / total) if total else 0.0 for v in variances[:2])
    return Projection(mean, axes, (shares[0], shares[1]), float(sum(shares)))


def family_cosines(rows: np.ndarray, labels: list[str]) -> tuple[float, float]:
    """Mean cosine of pairs in the same family and of pairs in different families (NaN: no such pair).

    The sum of u_i . u_j over the pairs of a set is (|sum u|^2 - sum |u_i|^2) / 2, so the
    means come from one sum per family: memory grows with the words, not their square
    (30,000 words would otherwise need a 7 GB matrix of cosines).
    """
    sums = family_sums(rows, labels)
    return sums.cosines(sums.names)


@dataclass(frozen=True, eq=False)
class FamilySums:
    """What the two mean cosines need, kept per family so that any subset of families has its own.

    ``gram[f, g]`` is S_f . S_g, S_f the sum of family f's unit rows; ``squares[f]`` is the sum
    of its rows' |u|^2 (1 each, 0 for a zero row). A map with some families hidden states the
    figures of the families shown, without the rows.
    """

    names: tuple[str, ...]
    gram: np.ndarray
    sizes: np.ndarray
    squares: np.ndarray

    def cosines(self, shown: Iterable[str]) -> tuple[float, float]:
        """(within, between) over the families named in ``shown`` (NaN where there is no such pair)."""
        wanted = set(shown)
        keep = np.array([name in wanted for name in self.names], dtype=bool)
        gram = self.gram[np.ix_(keep, keep)]
        sizes, squares = self.sizes[keep], self.squares[keep]
        within_sum = float((np.diag(gram) - squares).sum() / 2)
        within_pairs = float((sizes * (sizes - 1) / 2).sum())
        between_sum = float((gram.sum() - np.trace(gram)) / 2)
        count = float(sizes.sum())
        between_pairs = count * (count - 1) / 2 - within_pairs
        return (
            within_sum / within_pairs if within_pairs else float("nan"),
            between_sum / between_pairs if between_pairs else float("nan"),
        )


def family_sums(rows: np.ndarray, labels: list[str]) -> FamilySums:
    """Each family's sum of unit rows, as their dot products (see ``FamilySums``), in first-seen order."""
    unit = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    unit = unit / np.where(norms == 0, 1, norms)
    squares = np.einsum("ij,ij->i", unit, unit)
    names = list(dict.fromkeys(str(label) for label in labels))
    number = {name: i for i, name in enumerate(names)}
    index = np.array([number[str(label)] for label in labels], dtype=np.int64)
    sums = np.zeros((len(names), unit.shape[1]))
    np.add.at(sums, index, unit)
    return FamilySums(
        tuple(names),
        sums @ sums.T,
        np.bincount(index, minlength=len(names)).astype(np.float64),
        np.bincount(index, weights=squares, minlength=len(names)),
    )


@dataclass(frozen=True)
class MapPoint:
    word: str
    token: str
    family: str
    x: float
    y: float
    ids: tuple[int, ...]


@dataclass(frozen=True)
class FamilyMap:
    points: tuple[MapPoint, ...]
    projection: Projection
    within_family_cosine: float
    between_family_cosine: float
    notes: tuple[str, ...]
    provenance: Provenance | None = None  # where it came from, for exports (provenance.with_provenance)
    # The figures of any families shown (a map with some hidden); None for a map made elsewhere.
    sums: FamilySums | None = field(default=None, compare=False)

    @property
    def explained_variance(self) -> float:
        return self.projection.explained_variance

    @property
    def family_ratio(self) -> float:
        return (
            self.within_family_cosine / self.between_family_cosine
            if self.between_family_cosine
            else float("nan")
        )

    @property
    def families(self) -> list[str]:
        return list(dict.fromkeys(p.family for p in self.points))

    def to_dict(self, model: str) -> dict[str, object]:
        return {
            "model": model,
            "points": [
                {"token": p.token, "word": p.word, "family": p.family, "x": p.x, "y": p.y, "ids": list(p.ids)}
                for p in self.points
            ],
            "explained_variance": self.explained_variance,
            "axis_variance": list(self.projection.axis_variance),
            # JSON has no NaN: a statistic without pairs to average is null, and a note says why.
            "within_family_cosine": _finite_or_none(self.within_family_cosine),
            "between_family_cosine": _finite_or_none(self.between_family_cosine),
            "family_ratio": _finite_or_none(self.family_ratio),
            "notes": list(self.notes),
        }


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def family_map(table: EmbeddingTable, families: Families, multi_token: str = "average") -> FamilyMap:
    """Place every family word on the 2-D map of the table's rows.

    A word that is several tokens is averaged over its pieces or skipped, as
    ``multi_token`` says; either way the notes tell which words it was.
    """
    if multi_token not in MULTI_TOKEN_ACTIONS:
        raise FamiliesError(f"multi_token must be one of {MULTI_TOKEN_ACTIONS}, not {multi_token!r}.")
    families = _checked(families, "The families to map")
    table.check_files()  # before the tokenizer's work; each word's rows are checked again when read
    words, labels, tokens, ids_list, rows, notes = [], [], [], [], [], []
    for family, members in families.items():
        for word in members:
            pieces = table.encode(word)
            if not pieces:
                notes.append(f"{word!r} ({family}) has no tokens and was skipped.")
                continue
            ids = tuple(p.id for p in pieces)
            shown = " ".join(p.token for p in pieces)
            if len(pieces) > 1:
                if multi_token == "skip":
                    notes.append(f"{word!r} ({family}) is {len(pieces)} tokens ({shown}) and was skipped.")
                    continue
                notes.append(
                    f"{word!r} ({family}) is {len(pieces)} tokens ({shown}); their rows were averaged."
                )
            row = np.asarray(table.rows_at(list(ids)), dtype=np.float64).mean(axis=0)
            if not np.isfinite(row).all() or not np.any(row):
                what = "holding NaN or infinity" if not np.isfinite(row).all() else "that is all zero"
                notes.append(f"{word!r} ({family}) has a row {what} (it points nowhere) and was skipped.")
                continue
            words.append(word)
            labels.append(family)
            tokens.append(shown)
            ids_list.append(ids)
            rows.append(row)
    if len(rows) < 2:
        raise FamiliesError("Fewer than two family words could be placed on the map.")
    matrix = np.vstack(rows)
    projection = pca_2d(matrix)
    coords = projection.apply(matrix)
    sums = family_sums(matrix, labels)
    within, between = sums.cosines(sums.names)
    if math.isnan(within):
        notes.append("No family has two words on the map, so there is no within-family cosine (null).")
    if math.isnan(between):
        notes.append(
            "Every word on the map is in one family, so there is no between-family cosine and no ratio (null)."
        )
    points = tuple(
        MapPoint(w, t, f, float(x), float(y), i)
        for w, t, f, i, (x, y) in zip(words, tokens, labels, ids_list, coords, strict=False)
    )
    return FamilyMap(points, projection, within, between, tuple(notes), sums=sums)
