"""A map as one self-contained web page: points, colours, labels, tips, zoom, find, family toggles.

The page is ``resources/map_page.html`` with the map's numbers put in: every script and
style is inside it and it loads nothing (its Content-Security-Policy forbids any request),
so a student opens it offline in any browser. Drawn on a 2-D canvas: the grey rows of a
whole vocabulary are stamped into the pixels directly, which keeps 50,257 points fluid
without WebGL (see docs/sharing.md for the figures).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Protocol

import numpy as np

from ...resources import resource_path
from ..common.errors import EmbedExplorerError
from ..common.files import atomic_write_bytes, read_regular
from .colours import ACCENT_ON_LIGHT, FAMILY_COLOURS, change_hex
from .family_map import FamilyMap
from .map_caption import caption_lines
from .provenance import stamped
from .word_maps import WordMap, from_family_map

TEMPLATE = "map_page.html"
_TEMPLATE_LIMIT = 1 << 20
# Characters text in a page cannot hold (a token may stand for any byte): shown as the replacement character.
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# Where the template takes the map: all four put in by one pass, so text that looks like a mark stays text.
_MARKS = re.compile("__(MAP_DATA|TITLE|CAPTION|FACTS)__")


class PageError(EmbedExplorerError):
    """The page could not be written."""


class ChangeColouring(Protocol):
    """How much each token changed between two tables (core/compare/map_change.py's ``MapChange``)."""

    @property
    def measure(self) -> str: ...  # "overlap" or "row cosine"

    @property
    def low(self) -> float: ...  # the value drawn as the most changed

    @property
    def high(self) -> float: ...

    @property
    def k(self) -> int: ...

    @property
    def legend(self) -> tuple[str, ...]: ...  # another scale's texts (vocabulary health); empty for a comparison

    def value_of(self, ids: tuple[int, ...]) -> float | None: ...

    def share(self, value: float) -> float: ...

    def sentence(self) -> str: ...

    def key_heading(self) -> str: ...


@dataclass(frozen=True)
class Selected:
    """The selected token as the window marks it: a star at ``at`` and a ring at each nearest row's place, named."""

    token: str
    at: tuple[float, float]
    rings: tuple[tuple[tuple[float, float], str], ...] = ()


def clean(text: str) -> str:
    return _NOT_TEXT.sub("\ufffd", text)


def _packed(values: np.ndarray, dtype: str) -> str:
    """Numbers as base64 of their little-endian bytes: a fifth of the size of JSON numbers."""
    return base64.b64encode(np.ascontiguousarray(values, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()).decode()


def page_data(
    shown: WordMap,
    model_name: str,
    hidden: Collection[str],
    facts: dict[str, object],
    change: ChangeColouring | None = None,
    selected: Selected | None = None,
) -> dict[str, object]:
    """What the page's script reads: the points packed, the words, families, caption and facts;
    with ``change``, each point's colour on the change scale (the window's own colours) and its value;
    with ``selected``, the star and rings."""
    labels = [clean(label) for label in shown.labels]
    texts = [None if clean(t) == label else clean(t) for t, label in zip(shown.texts, labels, strict=True)]
    return {
        "model": clean(model_name),
        "projection": shown.layout.name,
        "axes": [clean(shown.layout.axis_title(0)), clean(shown.layout.axis_title(1))],
        "count": len(shown),
        "x": _packed(shown.coords[:, 0], "float32"),
        "y": _packed(shown.coords[:, 1], "float32"),
        "family": _packed(shown.family_of, "int16"),
        "labels": labels,
        "texts": texts,
        "ids": [p[0] if len(p) == 1 else list(p) for p in shown.pieces],
        "families": [clean(name) for name in shown.families],
        "colours": [FAMILY_COLOURS[i % len(FAMILY_COLOURS)] for i in range(len(shown.families))],
        "hidden": sorted(clean(name) for name in hidden if name in shown.families),
        "caption": [clean(line) for line in caption_lines(shown, model_name, hidden)]
        + ([clean(change.sentence())] if change is not None else []),
        "provenance": facts,
        "change": None if change is None else change_data(shown, change),
        "selected": None if selected is None else selected_data(shown, selected),
    }


def selected_data(shown: WordMap, selected: Selected) -> dict[str, object]:
    """The star and rings with the map dot each sits on (-1: none), so that the page's tip names that dot
    and a ring goes with its family when the reader hides it, as in the window."""
    span = float(np.ptp(shown.coords, axis=0).max()) if len(shown) else 0.0

    def dot_at(place: tuple[float, float]) -> int:
        if not len(shown):
            return -1
        gaps = np.hypot(shown.coords[:, 0] - place[0], shown.coords[:, 1] - place[1])
        best = int(np.argmin(gaps))
        return best if gaps[best] <= 1e-5 * max(span, 1e-9) else -1  # the same row: placed by the same numbers

    return {
        "token": clean(selected.token),
        "at": [float(selected.at[0]), float(selected.at[1]), dot_at(selected.at)],
        "rings": [[float(x), float(y), dot_at((x, y))] for (x, y), _name in selected.rings],
        "names": [clean(name) for _place, name in selected.rings],
        "accent": ACCENT_ON_LIGHT,  # the page is drawn on white, as the window in a light theme
    }


def change_data(shown: WordMap, change: ChangeColouring) -> dict[str, object]:
    """Each point's colour (an index into a palette of the colours used) and value (NaN: not compared),
    with the scale's legend, as the window colours its map."""
    values = [change.value_of(tuple(pieces)) for pieces in shown.pieces]
    shares = [None if value is None else change.share(value) for value in values]
    colours = [change_hex(share) for share in shares]
    # The page draws the rows colour by colour in this order: grey, then unchanged to most changed on top.
    order = {colour: 2.0 if share is None else share for colour, share in zip(colours, shares, strict=True)}
    palette = sorted(order, key=lambda colour: -order[colour])
    index = {colour: i for i, colour in enumerate(palette)}
    if change.legend:
        ends = list(change.legend[:3])
    elif change.measure == "overlap":
        ends = [f"{change.low:g} of {change.k} neighbours kept", f"{(change.low + change.high) / 2:g}",
                f"{change.high:g} of {change.k} (unchanged)"]
    else:
        middle = (change.low + change.high) / 2
        ends = [f"row cosine {change.low:.3f}", f"{middle:.4f}", f"{change.high:.3f} (unchanged)"]
    legend = [[change_hex(share), text] for share, text in zip((0.0, 0.5, 1.0), ends, strict=True)]
    return {
        "heading": clean(change.key_heading()),  # the key's title: what the colours are
        "measure": change.measure,
        "k": change.k,
        "palette": palette,
        "colour": _packed(np.array([index[c] for c in colours]), "uint16"),
        "value": _packed(np.array([np.nan if v is None else v for v in values]), "float32"),
        "legend": legend + [[change_hex(None), change.legend[3] if change.legend else "not compared (not in B)"]],
    }


def map_page(
    the_map: FamilyMap | WordMap,
    model_name: str,
    hidden: Collection[str] = (),
    date: str | None = None,
    change: ChangeColouring | None = None,
    selected: Selected | None = None,
) -> str:
    """The page's text. ``date`` (ISO 8601) is the export's; now when not given. ``change``: the map
    coloured by how much each token changed between two tables, as the window shows it. ``selected``:
    the selected token's star and its nearest rows' rings, as the window shows them."""
    shown = the_map if isinstance(the_map, WordMap) else from_family_map(the_map, model_name)
    facts = stamped(shown.provenance, date)
    data = page_data(shown, model_name, hidden, facts, change, selected)
    # "<" escaped: no "</script>" or "<!--" in a token can end the data early.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    template = read_regular(resource_path(TEMPLATE), "page template", _TEMPLATE_LIMIT, PageError).decode("utf-8")
    caption = "\n".join(f"<p>{escape(line)}</p>" for line in data["caption"])  # type: ignore[attr-defined]
    rows = "\n".join(
        f"<dt>{escape(str(key))}</dt><dd>{escape(_fact_text(value))}</dd>" for key, value in facts.items()
    )
    title = escape(f"{clean(model_name)}: {shown.layout.name} map of {clean(shown.description)}")
    values = {"MAP_DATA": text, "TITLE": title, "CAPTION": caption, "FACTS": rows}
    return _MARKS.sub(lambda mark: values[mark.group(1)], template)


def _fact_text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return ", ".join(clean(str(v)) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return clean(str(value))


def write_map_page(
    path: str | Path,
    the_map: FamilyMap | WordMap,
    model_name: str,
    hidden: Collection[str] = (),
    date: str | None = None,
    change: ChangeColouring | None = None,
    selected: Selected | None = None,
) -> None:
    """Write the page atomically: a failed write leaves no half page."""
    page = map_page(the_map, model_name, hidden, date, change, selected)
    try:
        atomic_write_bytes(path, page.encode("utf-8"), through_link=True)  # a file the user named
    except OSError as exc:
        raise PageError(f"Cannot write the page to {path}: {exc.strerror or exc}.") from exc
