"""Families of words and the flat map: an exact 2-D PCA and family cosine statistics."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..resources import resource_path
from .constants import MULTI_TOKEN_ACTIONS
from .errors import FamiliesError
from .files import atomic_write_bytes
from .tables import EmbeddingTable

Families = dict[str, list[str]]


def default_families_path() -> Path:
    return resource_path("families.json")


def load_families(path: str | Path | None = None) -> Families:
    """Read a families file: {"families": {name: [word, ...]}} (a bare mapping works too)."""
    file = Path(path) if path else default_families_path()
    try:
        # utf-8-sig: files saved by Windows editors often start with a byte-order mark.
        data = json.loads(file.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise FamiliesError(f"Cannot read the families file {file}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise FamiliesError(f"The families file {file.name} is not valid JSON: {exc}") from exc
    families = data.get("families", data) if isinstance(data, dict) else None
    return _checked(families, file.name)


def _checked(families: object, source: str) -> Families:
    """Families with the right shape, or a FamiliesError naming ``source``."""
    if not isinstance(families, dict):
        raise FamiliesError(f"{source} must hold an object of family names and word lists.")
    clean: Families = {}
    for name, words in families.items():
        if str(name).startswith("_"):
            continue
        if (
            not isinstance(words, list)
            or not words
            or not all(isinstance(w, str) and w.strip() for w in words)
        ):
            raise FamiliesError(f"Family {name!r} in {source} must be a list of non-empty words.")
        clean[str(name)] = list(words)
    if not clean:
        raise FamiliesError(f"{source} has no families.")
    return clean


def save_families(families: Families, path: str | Path) -> None:
    """Write a families file atomically: readers see the old file or the new one, never half.

    Families that could not be read back are refused before anything is written, and a
    failed write (no space, no permission) is a FamiliesError with the old file untouched.
    """
    target = Path(path)
    clean = _checked(families, "The families to save")
    payload = json.dumps({"families": clean}, indent=2, ensure_ascii=False) + "\n"
    try:
        atomic_write_bytes(target, payload.encode("utf-8"))
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

    def apply(self, rows: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(rows)
        return np.vstack(
            [
                (np.asarray(rows[i : i + _PCA_BLOCK_ROWS], dtype=np.float64) - self.mean) @ self.axes.T
                for i in range(0, rows.shape[0], _PCA_BLOCK_ROWS)
            ]
        )


# Rows per block when a map covers many rows: 4,096 x 768 float64 is 25 MB, where a
# float64 copy of all 50,257 GPT-2 rows would be 300 MB.
_PCA_BLOCK_ROWS = 4096


def pca_2d(rows: np.ndarray) -> Projection:
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
        # adds up block by block.
        mean = np.zeros(width)
        for start in range(0, count, _PCA_BLOCK_ROWS):
            mean += np.asarray(rows[start : start + _PCA_BLOCK_ROWS], dtype=np.float64).sum(axis=0)
        mean /= count
        scatter = np.zeros((width, width))
        for start in range(0, count, _PCA_BLOCK_ROWS):
            block = np.asarray(rows[start : start + _PCA_BLOCK_ROWS], dtype=np.float64) - mean
            scatter += block.T @ block
        total = float(np.trace(scatter))
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
    """Mean cosine of pairs in the same family and of pairs in different families."""
    unit = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    unit = unit / np.where(norms == 0, 1, norms)
    cosines = unit @ unit.T
    names = np.asarray(labels)
    same = names[:, None] == names[None, :]
    upper = np.triu(np.ones_like(same, dtype=bool), k=1)
    within, between = cosines[same & upper], cosines[~same & upper]
    return (
        float(within.mean()) if within.size else float("nan"),
        float(between.mean()) if between.size else float("nan"),
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
            "within_family_cosine": self.within_family_cosine,
            "between_family_cosine": self.between_family_cosine,
            "family_ratio": self.family_ratio,
            "notes": list(self.notes),
        }


def family_map(table: EmbeddingTable, families: Families, multi_token: str = "average") -> FamilyMap:
    """Place every family word on the 2-D map of the table's rows.

    A word that is several tokens is averaged over its pieces or skipped, as
    ``multi_token`` says; either way the notes tell which words it was.
    """
    if multi_token not in MULTI_TOKEN_ACTIONS:
        raise FamiliesError(f"multi_token must be one of {MULTI_TOKEN_ACTIONS}, not {multi_token!r}.")
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
            words.append(word)
            labels.append(family)
            tokens.append(shown)
            ids_list.append(ids)
            rows.append(np.asarray(table.rows[list(ids)], dtype=np.float64).mean(axis=0))
    if len(rows) < 2:
        raise FamiliesError("Fewer than two family words could be placed on the map.")
    matrix = np.vstack(rows)
    projection = pca_2d(matrix)
    coords = projection.apply(matrix)
    within, between = family_cosines(matrix, labels)
    points = tuple(
        MapPoint(w, t, f, float(x), float(y), i)
        for w, t, f, i, (x, y) in zip(words, tokens, labels, ids_list, coords, strict=False)
    )
    return FamilyMap(points, projection, within, between, tuple(notes))
