"""A map's points as CSV or JSON (token, id, family, x, y), each file opening with where the map came from.

CSV: the facts as ``# key: value`` lines, then a header and one row per point; text is
quoted, numbers are not, so a reader that skips ``#`` lines (``pandas.read_csv(...,
comment="#")``) reads the points. ``x`` and ``y`` are written exactly (the shortest text
that reads back as the same float64). A word of several tokens has its ids joined by spaces.
Text a spreadsheet would run as a formula (a token "=1+1") starts with an apostrophe
(``core/common/csv_cells.py``; ``original`` takes it off again).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..common.csv_cells import csv_cell, csv_comment
from ..common.files import atomic_write_bytes
from .family_map import FamilyMap
from .provenance import stamped
from .word_maps import WordMap, from_family_map

COLUMNS = ("token", "id", "family", "x", "y")


def _shown(the_map: FamilyMap | WordMap, model_name: str) -> WordMap:
    return the_map if isinstance(the_map, WordMap) else from_family_map(the_map, model_name)


def point_rows(the_map: FamilyMap | WordMap, model_name: str) -> list[dict[str, object]]:
    """One dict per point: token, id (a number, or a list for a word of several tokens), family, x, y."""
    shown = _shown(the_map, model_name)
    names = shown.families
    return [
        {
            "token": label,
            "id": ids[0] if len(ids) == 1 else list(ids),
            "family": names[f] if f >= 0 else None,
            "x": float(x),
            "y": float(y),
        }
        for label, ids, f, (x, y) in zip(
            shown.labels, shown.pieces, shown.family_of.tolist(), shown.coords.tolist(), strict=True
        )
    ]


def points_csv(the_map: FamilyMap | WordMap, model_name: str, date: str | None = None) -> str:
    facts = stamped(_shown(the_map, model_name).provenance, date)
    out = io.StringIO()
    out.write("# EmbedExplorer map points\n")
    for key, value in facts.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        out.write(csv_comment(f"# {key}: {' '.join(str(text).split())}") + "\n")
    writer = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in point_rows(the_map, model_name):
        ids = row["id"]
        writer.writerow([
            csv_cell(str(row["token"])),
            ids if isinstance(ids, int) else " ".join(map(str, ids)),  # type: ignore[call-overload]
            csv_cell(str(row["family"] or "")),
            row["x"],
            row["y"],
        ])
    return out.getvalue()


def points_json(the_map: FamilyMap | WordMap, model_name: str, date: str | None = None) -> dict[str, object]:
    shown = _shown(the_map, model_name)
    return {"provenance": stamped(shown.provenance, date), "points": point_rows(the_map, model_name)}


def write_points(path: str | Path, the_map: FamilyMap | WordMap, model_name: str, date: str | None = None) -> None:
    """CSV for a ``.csv`` name, JSON otherwise; written atomically."""
    if str(path).lower().endswith(".csv"):
        text = points_csv(the_map, model_name, date)
    else:
        text = json.dumps(points_json(the_map, model_name, date), ensure_ascii=False, indent=1) + "\n"
    atomic_write_bytes(path, text.encode("utf-8", "replace"), through_link=True)  # a file the user named
