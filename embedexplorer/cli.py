"""The command line: the engine's questions, answered as readable tables or JSON.

No Qt is imported here except by ``map --png``, which draws with pyqtgraph offscreen.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from .core.constants import MULTI_TOKEN_ACTIONS
from .core.errors import EmbedExplorerError

COMMANDS = ("tokens", "neighbours", "cosine", "analogy", "info", "map")


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    common = _OneLineParser(add_help=False)
    common.add_argument(
        "--model",
        default=None,
        help="model folder, Hugging Face id, or 'bundled' (default: GPT-2 if cached, else bundled MiniLM)",
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    common.add_argument(
        "--download", action="store_true", help="download a Hub model that is not in the local cache"
    )

    parser = _OneLineParser(
        prog="embedexplorer",
        description="Look inside a language model's token embedding table. "
        "Run without a command to open the window.",
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)

    tokens = commands.add_parser("tokens", parents=[common], help="split text into tokens and ids")
    tokens.add_argument("text", help="taken literally: a leading space is part of the text")
    tokens.add_argument(
        "--all",
        action="store_true",
        help="list every token, also those past the last position row (default: the ones that fit)",
    )

    neighbours = commands.add_parser("neighbours", parents=[common], help="nearest tokens by cosine")
    neighbours.add_argument("word", help="taken literally; its first token answers for it")
    neighbours.add_argument("-k", type=_positive_int, default=8, help="how many neighbours (default 8)")

    cosine = commands.add_parser("cosine", parents=[common], help="cosine of two tokens")
    cosine.add_argument("a")
    cosine.add_argument("b")

    analogy = commands.add_parser("analogy", parents=[common], help="tokens nearest to A - B + C")
    analogy.add_argument("a")
    analogy.add_argument("b")
    analogy.add_argument("c")
    analogy.add_argument("-k", type=_positive_int, default=8)

    commands.add_parser("info", parents=[common], help="size of the table and its share of the model")

    family_map = commands.add_parser("map", parents=[common], help="2-D map of the word families")
    family_map.add_argument("--families", default=None, help="families JSON file (default: the chapter's)")
    family_map.add_argument("--png", default=None, help="also draw the map into this PNG file")
    family_map.add_argument("--width", type=_positive_int, default=1600, help="PNG width in pixels")
    family_map.add_argument(
        "--multi-token",
        choices=MULTI_TOKEN_ACTIONS,
        default="average",
        help="what to do with a word that is several tokens (default: average its rows)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = _run(args)
    except EmbedExplorerError as exc:
        _end_progress()
        print(f"embedexplorer: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("embedexplorer: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - a person gets one line, never a traceback
        print(f"embedexplorer: unexpected error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    payload, text = result
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(text)
    return 0


def _run(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from .core.tables import open_table

    # Progress is for a person watching; piped stderr keeps to the one-line error.
    progress = _stderr_progress if args.download and sys.stderr.isatty() else None
    table = open_table(args.model, allow_download=args.download, progress=progress)
    header = f"model: {table.name}"

    if args.command == "tokens":
        from .core.errors import QueryError
        from .core.texts import MAX_SHOWN_TOKENS

        shown = None if args.all else MAX_SHOWN_TOKENS
        report = table.tokenize(args.text, only_fitting=not args.all, max_shown=shown)
        if report.count == 0:
            raise QueryError(report.note)
        tokens = report.tokens
        payload = {
            "model": table.name,
            "tokens": [{"id": t.id, "token": t.token} for t in tokens],
            "count": report.count,
            "fits": report.fits,
            "position_rows": report.position_rows,
        }
        if report.note:
            payload["note"] = report.note
        lines = [f"{t.token:<20} {t.id:>8}" for t in tokens]
        rows = report.position_rows
        if rows is not None and len(tokens) > rows:
            lines.insert(rows, f"-- no position row from position {rows + 1:,} on --")
        lines += [f"note: {report.note}"] if report.note else []
        return payload, "\n".join([header, f"{report.count} token(s)", *lines])

    if args.command in ("neighbours", "analogy"):
        if args.command == "neighbours":
            result = table.neighbours(args.word, args.k)
        else:
            result = table.analogy(args.a, args.b, args.c, args.k)
        query = result.query
        payload = {
            "model": table.name,
            "query": {"id": query.id, "token": query.token} if query else None,
            "neighbours": [{"id": n.id, "token": n.token, "cosine": n.cosine} for n in result.neighbours],
        }
        if result.note:
            payload["note"] = result.note
        lines = [header, f"query: {query.token if query else '?'}"]
        if result.note:
            lines.append(f"note: {result.note}")
        lines += [f"{n.token:<20} {n.id:>8}  {n.cosine:6.3f}" for n in result.neighbours]
        lines.append(f"(baseline for unrelated tokens here: {table.baseline_cosine:.3f})")
        return payload, "\n".join(lines)

    if args.command == "cosine":
        a, b = table.query(args.a), table.query(args.b)
        value = table.cosine(a.id, b.id)
        payload = {"model": table.name, "a": a.token, "b": b.token, "cosine": value}
        notes = [q.note for q in (a, b) if q.note]
        text = f"{header}\ncosine({a.token}, {b.token}) = {value:.3f}"
        text += f"\n(baseline for unrelated tokens here: {table.baseline_cosine:.3f})"
        return payload, "\n".join([text, *(f"note: {n}" for n in notes)])

    if args.command == "info":
        facts = table.facts()
        payload = {
            "model": facts.model,
            "rows": facts.rows,
            "width": facts.width,
            "table_weights": facts.table_weights,
            "model_weights": facts.model_weights,
            "share": facts.share,
            "position_rows": facts.position_rows,
            "position_note": facts.position_note,
            "baseline_cosine": facts.baseline_cosine,
            "vocabulary_size": facts.vocabulary_size,
            "neighbour_search": table.search_method(),
        }
        return payload, f"{facts.summary()}\nneighbour search: {payload['neighbour_search']}"

    if args.command == "map":
        from .core.maps import family_map, load_families

        drawn = family_map(table, load_families(args.families), args.multi_token)
        payload = drawn.to_dict(table.name)
        if args.png:
            from .ui.map_export import export_family_map_png

            export_family_map_png(drawn, table.name, args.png, width=args.width)
            payload["png"] = args.png
        lines = [header]
        lines += [f"{p.family:<10} {p.token:<16} {p.x:8.3f} {p.y:8.3f}" for p in drawn.points]
        lines += [
            f"the two axes keep {drawn.explained_variance:.1%} of the spread",
            f"mean cosine within a family {drawn.within_family_cosine:.3f}, "
            f"between families {drawn.between_family_cosine:.3f} (ratio {drawn.family_ratio:.1f})",
            *(f"note: {n}" for n in drawn.notes),
        ]
        if args.png:
            lines.append(f"map written to {args.png}")
        return payload, "\n".join(lines)

    raise EmbedExplorerError(f"Unknown command {args.command!r}.")  # argparse prevents this


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


_progress_open = False


def _stderr_progress(done: int, total: int, message: str) -> None:
    global _progress_open
    if total:
        _progress_open = done < total
        end = "" if _progress_open else "\n"
        print(f"\r{message}: {done / total:.0%}\033[K", end=end, file=sys.stderr, flush=True)


def _end_progress() -> None:
    """Finish an open progress line so an error starts on a line of its own."""
    global _progress_open
    if _progress_open:
        print(file=sys.stderr, flush=True)
        _progress_open = False


def _version() -> str:
    from . import __version__

    return f"embedexplorer {__version__}"
