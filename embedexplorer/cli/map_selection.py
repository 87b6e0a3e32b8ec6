"""``map --select WORD``: the selected token's star and rings, marked as the window's map marks them.

The word is read as the window's Text box reads it and its marks come from the request the
map pane sends (``core/maps/selection_marks.py`` decides them for both doors); this module
turns them into the JSON, the text lines and the one sentence of each mistake.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..core.common.errors import EmbedExplorerError
from ..core.common.terminal import one_line

if TYPE_CHECKING:
    from ..core.maps.family_map import FamilyMap
    from ..core.maps.selection_marks import SelectionMarks
    from ..core.maps.word_maps import WordMap
    from ..core.tables.answers import Query
    from ..core.tables.embedding_table import EmbeddingTable
    from .command import Asker


def check_select(args: argparse.Namespace) -> None:
    """Refuse a --select with nothing to mark it on (the points alone), before anything opens."""
    if args.select is not None and args.csv and not (args.png or args.svg or args.html):
        raise EmbedExplorerError(
            "--select marks a token on a picture or a page: add --png, --svg or --html (--csv writes the points alone)."
        )


def chosen_token(args: argparse.Namespace, table: EmbeddingTable) -> Query | None:
    """The token ``--select`` names, read as the window's Text box reads a word; None without --select."""
    if args.select is None:
        return None
    from ..core.maps.selection_marks import selected_token

    return selected_token(table, args.select)


def marks_on(
    args: argparse.Namespace, asker: Asker, chosen: Query | None, drawn: FamilyMap | WordMap
) -> SelectionMarks | None:
    """The star and rings on ``drawn``, asked with the request the window's map pane sends; a token the map
    cannot place is refused in the sentence the window's status bar gives (nothing is written)."""
    if chosen is None:
        return None
    from ..jobs.table_jobs import NEIGHBOURS, NeighboursRequest

    request = NeighboursRequest(chosen.id, args.k, on_map=drawn, with_baseline=False)
    marks = asker.ask(NEIGHBOURS, request).marks
    if marks is None or marks.at is None:
        raise EmbedExplorerError(marks.missing if marks is not None else "The map cannot place the selected token.")
    return marks


def selected_payload(args: argparse.Namespace, chosen: Query | None, marks: SelectionMarks | None) -> object:
    if chosen is None or marks is None or marks.at is None:
        return None  # the key is always there: scripts read the same keys
    return {
        "text": args.select,
        "id": marks.token_id,
        "token": marks.token,
        "k": args.k,
        "star": [marks.at[0], marks.at[1]],
        "rings": [{"id": r.token_id, "token": r.token, "x": r.at[0], "y": r.at[1]} for r in marks.rings],
        "note": chosen.note,
    }


def selected_lines(chosen: Query | None, marks: SelectionMarks | None, k: int) -> list[str]:
    if chosen is None or marks is None or marks.at is None:
        return []
    x, y = marks.at
    lines = [f"selected: {one_line(marks.token)} (id {marks.token_id:,}), its star at ({x:.3f}, {y:.3f})"]
    names = ", ".join(one_line(name) for name in marks.names)
    count = len(marks.rings)
    if count == k:
        lines.append(f"rings at its {k} nearest rows on the map: {names}")
    elif count:
        lines.append(f"rings at {count} of its {k} nearest rows (the others are not on this map): {names}")
    else:
        lines.append(f"no rings: none of its {k} nearest rows is on this map")
    return lines + ([f"note: {one_line(chosen.note)}"] if chosen.note else [])
