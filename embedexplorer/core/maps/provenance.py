"""Where a map came from, for every export: model, table file, storage, word set, projection, app, date.

A map carries its ``Provenance`` (``map_origin.with_provenance`` attaches it, in the window's
map requests and in the command line); each export writes ``stamped(...)``: the same facts
in the same order and the export's date last, so the same map exported twice differs only
in that date.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# The first hex digits of the table file's SHA-256 that exports show: enough to tell two files apart.
SHA_DIGITS = 12
DATE_KEY = "exported"


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
