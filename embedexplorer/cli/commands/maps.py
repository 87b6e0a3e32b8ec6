"""``embedexplorer map``: the word families' map, or any rows flattened by PCA, t-SNE or UMAP.

No Qt is imported here except by ``--png/--svg``, which draw with pyqtgraph offscreen
(``--html`` and ``--csv`` are written by the engine alone).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ...core.common.constants import K_DEFAULT, K_RANGE, MAX_SEED, MULTI_TOKEN_ACTIONS
from ...core.common.errors import EmbedExplorerError
from ...core.common.terminal import one_line
from ..arguments import MAX_PNG_WIDTH, png_width, seed, typed_text, window_k
from ..command import Answer, Asker, Command
from ..map_selection import check_select, chosen_token, marks_on, selected_lines, selected_payload

if TYPE_CHECKING:
    from ...core.maps.selection_marks import SelectionMarks
    from ...jobs.map_jobs import WordMapRequest


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--families", default=None, help="families JSON file (default: the chapter's)")
    parser.add_argument(
        "--words",
        default=None,
        help="map other rows: 'all' (the whole vocabulary), a regular expression matched against each "
        "token's text (a leading space is a space: GPT-2's ' Paris', which lists show as _Paris), or @FILE "
        "(one word a line); the families colour their words among them",
    )
    parser.add_argument(
        "--projection",
        choices=("pca", "tsne", "umap"),
        default="pca",
        help="how the rows are flattened (default pca; tsne and umap are cached on disk and, without --words, "
        "flatten the family words, as the window's Map > Projection does on the family map)",
    )
    parser.add_argument("--seed", type=seed, default=42, help=f"seed of t-SNE and UMAP, 0 to {MAX_SEED:,} (default 42)")
    parser.add_argument("--png", default=None, help="also draw the map into this PNG file")
    parser.add_argument("--svg", default=None, help="also draw the map into this SVG file (every marker a shape)")
    parser.add_argument(
        "--html",
        default=None,
        help="also write the map as one web page that works offline (zoom, pan, find, hover tips)",
    )
    parser.add_argument("--csv", default=None, help="also write the points (token, id, family, x, y) as CSV")
    parser.add_argument(
        "--width", type=png_width, default=1600, help=f"PNG width in pixels (default 1600; at most {MAX_PNG_WIDTH:,})"
    )
    parser.add_argument(
        "--multi-token",
        choices=MULTI_TOKEN_ACTIONS,
        default="average",
        help="what to do with a word that is several tokens (default: average its rows)",
    )
    parser.add_argument(
        "--select",
        type=typed_text,
        default=None,
        metavar="WORD",
        help="mark a token as the window marks the one selected in its Text box: a star, and rings at its k "
        "nearest rows with their names, in --png, --svg, --html and the JSON. WORD is read as the Text box reads "
        "it, a leading space included (on GPT-2 with one: _Paris, the word inside a sentence; without: Paris, the "
        "token that starts a text); a word of several tokens selects its first",
    )
    parser.add_argument(
        "-k",
        "--k",
        type=window_k,
        default=K_DEFAULT,
        help=f"how many nearest rows --select rings, {K_RANGE[0]} to {K_RANGE[1]} "
        f"(default {K_DEFAULT}, as the window's)",
    )


def check_targets(args: argparse.Namespace) -> None:
    """Refuse a --png/--svg/--html/--csv target that is not a regular file (or a link to one), and a --select
    with nothing to mark it on, before the work starts."""
    from ...core.common.files import write_target

    check_select(args)

    for path in (args.png, args.svg, args.html, args.csv):
        if path:
            try:
                write_target(path)
            except OSError as exc:
                raise EmbedExplorerError(f"Cannot write the map to {path}: {exc.strerror or exc}.") from exc


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    """The map the window draws for the same question, through the same request kinds."""
    if args.words is not None or args.projection != "pca":
        return _word_map(args, asker)
    from ...jobs.exercise_jobs import FAMILY_DISTANCES, DistancesRequest
    from ...jobs.table_jobs import MAP, MapRequest

    table = asker.table
    chosen = chosen_token(args, table)  # a mistake in the word is said before any map is drawn
    drawn = asker.ask(MAP, MapRequest(args.families, args.multi_token))
    marks = marks_on(args, asker, chosen, drawn)
    # Ranking families needs two of them; a single family still gets its map.
    distances = asker.ask(FAMILY_DISTANCES, DistancesRequest(family_map=drawn)) if len(drawn.families) >= 2 else None
    payload = drawn.to_dict(table.name)
    payload["family_distances"] = None if distances is None else distances.to_list()
    ranking = ["families from the furthest away, by mean cosine of whole rows to the other families:"]
    if distances is None:
        ranking = ["no ranking of families (family_distances is null): it needs at least two families"]
    else:
        ranking += distances.lines()
    payload["selected"] = selected_payload(args, chosen, marks)
    _draw_pictures(args, drawn, table.name, payload, marks)
    lines = [f"model: {one_line(table.name)}"]
    lines += [f"{one_line(p.family):<10} {one_line(p.token):<16} {p.x:8.3f} {p.y:8.3f}" for p in drawn.points]
    lines += [
        f"the two axes keep {drawn.explained_variance:.1%} of the spread",
        f"mean cosine within a family {_number(drawn.within_family_cosine, 3)}, "
        f"between families {_number(drawn.between_family_cosine, 3)} "
        f"(ratio {_number(drawn.family_ratio, 1)})",
        *ranking,
        *(f"note: {one_line(n)}" for n in drawn.notes),
    ]
    lines += selected_lines(chosen, marks, args.k)
    lines += _written(args)
    return payload, "\n".join(lines)


def word_map_request(args: argparse.Namespace) -> WordMapRequest:
    """``--words`` and ``--projection`` as the request the window's Map menu sends."""
    from ...jobs.map_jobs import WordMapRequest

    spec = args.words
    if spec is None:  # t-SNE or UMAP of the family map: its words, not the vocabulary
        words, text = "families", ""
    elif spec == "all":
        words, text = "all", ""
    elif spec.startswith("@"):
        words, text = "file", spec[1:]
    else:
        words, text = "regex", spec
    return WordMapRequest(
        words, text, families=args.families, method=args.projection, multi_token=args.multi_token, seed=args.seed
    )


def _word_map(args: argparse.Namespace, asker: Asker) -> Answer:
    """``map --words ... --projection ...``: any rows of the table, flattened by PCA, t-SNE or UMAP."""
    from ...jobs.map_jobs import WORD_MAP

    table = asker.table
    chosen = chosen_token(args, table)  # said before a t-SNE map is computed for nothing
    drawn = asker.ask(WORD_MAP, word_map_request(args))
    marks = marks_on(args, asker, chosen, drawn)
    payload = drawn.to_dict()
    payload["selected"] = selected_payload(args, chosen, marks)
    _draw_pictures(args, drawn, table.name, payload, marks)
    counts = ", ".join(f"{one_line(name)} {count}" for name, count in drawn.family_counts().items() if count)
    lines = [
        f"model: {one_line(table.name)}",
        f"{one_line(drawn.description)}, flattened by {drawn.layout.name}"
        + (" (read from the cache)" if drawn.from_cache else f" in {drawn.seconds:.1f} s"),
        f"the map keeps {drawn.layout.keeps}",
        f"family words among them: {counts or 'none'}",
    ]
    shown = min(len(drawn), 20)
    pairs = zip(drawn.labels[:shown], drawn.coords[:shown].tolist(), strict=True)
    lines += [f"{one_line(label):<20} {x:9.3f} {y:9.3f}" for label, (x, y) in pairs]
    if len(drawn) > shown:
        lines.append(f"... and {len(drawn) - shown:,} more points (--json lists them all)")
    lines += [f"note: {one_line(n)}" for n in drawn.notes]
    lines += selected_lines(chosen, marks, args.k)
    lines += _written(args)
    return payload, "\n".join(lines)


def _draw_pictures(
    args: argparse.Namespace, drawn: Any, model_name: str, payload: dict[str, object], marks: SelectionMarks | None
) -> None:
    """``--png`` and ``--svg``: the map drawn as the window draws it, through the same module;
    ``--html`` and ``--csv``: the page and the points, written by the engine (no Qt).
    Every one says where the map came from, and so does the JSON; with ``marks``, the selected
    token's star and rings are in the pictures and the page, as in the window's exports."""
    from ...core.maps.points_export import write_points
    from ...core.maps.provenance import export_date, stamped
    from ...core.maps.web_page import write_map_page

    date = export_date()
    payload["provenance"] = stamped(drawn.provenance, date)
    for key in ("png", "svg"):
        target = getattr(args, key)
        if target:
            from ...map_pictures import write_map_picture

            write_map_picture(drawn, model_name, target, width=args.width, date=date, marks=marks)
            payload[key] = target
    if args.html:
        write_map_page(args.html, drawn, model_name, date=date, selected=None if marks is None else marks.selected())
        payload["html"] = args.html
    if args.csv:
        try:
            write_points(args.csv, drawn, model_name, date=date)
        except OSError as exc:
            raise EmbedExplorerError(f"Cannot write the points to {args.csv}: {exc.strerror or exc}.") from exc
        payload["csv"] = args.csv


def _written(args: argparse.Namespace) -> list[str]:
    lines = [f"map written to {one_line(target)}" for target in (args.png, args.svg, args.html) if target]
    return lines + ([f"points written to {one_line(args.csv)}"] if args.csv else [])


def _number(value: float, digits: int) -> str:
    """A statistic for the table output; one without pairs to average (NaN) is "n/a"."""
    return f"{value:.{digits}f}" if value == value else "n/a"


COMMAND = Command("map", "2-D map of the word families", arguments, answer=answer, before=check_targets)
