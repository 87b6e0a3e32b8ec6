"""The command line: the engine's questions, answered as readable tables or JSON.

No Qt is imported here except by ``map --png/--svg``, which draw with pyqtgraph offscreen
(``map --html`` and ``--csv`` are written by the engine alone).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .cli_compare import add_compare_parser, run_compare
from .cli_health import add_health_parser, run_health
from .core.common.constants import EXPORT_WIDTH_RANGE, MAX_SEED, MULTI_TOKEN_ACTIONS
from .core.common.errors import EmbedExplorerError
from .core.common.terminal import finite_or_none, json_text_safe, one_line, terminal_safe

if TYPE_CHECKING:
    from .core.tables.embedding_table import EmbeddingTable

COMMANDS = (
    "tokens", "neighbours", "cosine", "analogy", "direction", "info", "map", "layers", "models", "compare", "health",
)  # fmt: skip
# They take no --model: they list and open nothing, or name their models themselves.
COMMANDS_WITHOUT_MODEL = ("models", "compare")
MAX_PNG_WIDTH = EXPORT_WIDTH_RANGE[1]
DOWNLOADS = ("table", "full")


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .core.readers import kinds_text

    common = _OneLineParser(add_help=False)
    common.add_argument(
        "--model",
        default=None,
        help=f"a {kinds_text()}, ollama:NAME[:TAG], a Hugging Face id, or 'bundled' "
        "(default: GPT-2 if it is here, else bundled MiniLM)",
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    common.add_argument(
        "--download",
        nargs="?",
        const="table",
        choices=DOWNLOADS,
        default=None,
        metavar="=full",
        help="download a Hub model that is not here: its embedding table only (the other weights stay "
        "on the Hub), or with --download=full every weight into the Hugging Face cache",
    )

    parser = _OneLineParser(
        prog="embedexplorer",
        description="Look inside a language model's token embedding table. Run without a command to open the window.",
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
    analogy.add_argument(
        "--include-inputs",
        action="store_true",
        help="let A, B and C themselves answer (default: left out, as most published results do)",
    )
    analogy.add_argument("--expect", default=None, help="a word you expect: print its rank and cosine")

    direction = commands.add_parser(
        "direction", parents=[common], help="a direction from word pairs or groups: its two ends against chance"
    )
    direction.add_argument(
        "--pair",
        nargs=2,
        action="append",
        metavar=("A", "B"),
        help="a pair A -> B (repeat it; default: he she, king queen, man woman)",
    )
    direction.add_argument("--groups", default=None, metavar="FILE", help='two groups: {"from": [...], "to": [...]}')
    direction.add_argument("--words", nargs="+", default=[], help="your words: their scores and percentiles")
    direction.add_argument("-k", type=_positive_int, default=20, help="tokens at each end (default 20)")
    direction.add_argument("--no-baseline", action="store_true", help="leave out the 100 random directions")

    commands.add_parser("info", parents=[common], help="size of the table and its share of the model")

    family_map = commands.add_parser("map", parents=[common], help="2-D map of the word families")
    family_map.add_argument("--families", default=None, help="families JSON file (default: the chapter's)")
    family_map.add_argument(
        "--words",
        default=None,
        help="map other rows: 'all' (the whole vocabulary), a regular expression matched against each "
        "token's text, or @FILE (one word a line); the families colour their words among them",
    )
    family_map.add_argument(
        "--projection",
        choices=("pca", "tsne", "umap"),
        default="pca",
        help="how the rows are flattened (default pca; tsne and umap need --words and are cached on disk)",
    )
    family_map.add_argument(
        "--seed", type=_seed, default=42, help=f"seed of t-SNE and UMAP, 0 to {MAX_SEED:,} (default 42)"
    )
    family_map.add_argument("--png", default=None, help="also draw the map into this PNG file")
    family_map.add_argument("--svg", default=None, help="also draw the map into this SVG file (every marker a shape)")
    family_map.add_argument(
        "--html",
        default=None,
        help="also write the map as one web page that works offline (zoom, pan, find, hover tips)",
    )
    family_map.add_argument("--csv", default=None, help="also write the points (token, id, family, x, y) as CSV")
    family_map.add_argument(
        "--width", type=_png_width, default=1600, help=f"PNG width in pixels (at most {MAX_PNG_WIDTH:,})"
    )
    family_map.add_argument(
        "--multi-token",
        choices=MULTI_TOKEN_ACTIONS,
        default="average",
        help="what to do with a word that is several tokens (default: average its rows)",
    )

    layers = commands.add_parser(
        "layers", parents=[common], help="one token of a text through every layer of the whole model"
    )
    layers.add_argument("text", help="the text the token stands in, taken literally")
    layers.add_argument("--place", type=_positive_int, required=True, help="which token, counted from 1")
    layers.add_argument("--compare", default=None, metavar="TEXT2", help="a second text to compare the token with")
    layers.add_argument(
        "--compare-place",
        type=_positive_int,
        default=None,
        metavar="M",
        help="the token of TEXT2 to compare with (default: the first with the same id)",
    )
    layers.add_argument(
        "-k", type=_positive_int, default=5, help="the model's guesses and nearest rows per layer (default 5)"
    )
    add_compare_parser(commands, _positive_int)
    add_health_parser(commands, common, _positive_int)

    models = commands.add_parser(
        "models",
        help="the models on this computer: Hugging Face cache, Ollama, LM Studio and recent files",
    )
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _quiet_libraries()
    args = build_parser().parse_args(_bare_download_is_table(sys.argv[1:] if argv is None else argv))
    try:
        result = _run(args)
    except EmbedExplorerError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        _end_progress()
        _say("interrupted")
        return 130
    except MemoryError:
        return _fail("ran out of memory; the model or the input is too large for this machine.")
    except RecursionError:
        return _fail("the input is nested too deeply to read.")
    except Exception as exc:  # noqa: BLE001 - a person gets one line, never a traceback
        return _fail(f"unexpected error: {type(exc).__name__}: {exc}")
    payload, text = result
    if args.json:
        # ``layers --json`` is a list with one object per layer; every other command one object.
        data = payload[args.command] if args.command in ("layers", "models") else payload
        return _print(json_text_safe(json.dumps(finite_or_none(data), ensure_ascii=False, indent=2)))
    return _print(terminal_safe(text))


def _quiet_libraries() -> None:
    """Keep stderr to our one line: no library warnings, log records or advice."""
    import logging
    import os
    import warnings

    warnings.simplefilter("ignore")  # numpy's overflow warnings, deprecations of other libraries
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    # Without a handler, logging prints warnings through its last-resort handler.
    logging.getLogger().addHandler(logging.NullHandler())
    # File names that were not UTF-8 reach us as surrogates: print them escaped, not as a crash.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _fail(message: str) -> int:
    _end_progress()
    _say(message)
    return 2


def _say(message: str) -> None:
    try:
        print(f"embedexplorer: {one_line(message)}", file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr itself is gone: there is nobody to tell


def _print(text: str) -> int:
    """Write the answer; a reader that went away ends us quietly, a full disk in one line."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped reading (``| head -1``): stop quietly, as coreutils do when
        # SIGPIPE ends them, with the status a shell reports for that.
        _discard_stdout()
        return 141
    except OSError as exc:
        _discard_stdout()
        return _fail(f"cannot write the output: {exc.strerror or exc}.")
    return 0


def _discard_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush at exit cannot fail again."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


def _run(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from .core.sources.resolve import resolve_source
    from .core.tables.embedding_table import load_table

    if args.command == "models":
        return _local_models()
    if args.command == "map":
        for target in (args.png, args.svg, args.html, args.csv):
            if target:
                _check_png_target(target)
    # Progress is for a person watching; piped stderr keeps to the one-line error.
    progress = _after_a_second(_stderr_progress) if sys.stderr.isatty() else None
    if args.command == "compare":
        try:
            return run_compare(args, progress)
        finally:
            _end_progress()
    source = resolve_source(
        args.model, allow_download=bool(args.download), progress=progress, whole_model=args.download == "full"
    )
    _end_progress()
    for note in source.notes:
        print(f"embedexplorer: note: {note}", file=sys.stderr)
    # The tokenizer runs in a child process: a tokenizer file built to hang or to blow up
    # memory is stopped there (time and memory limits) and named in one line.
    table = load_table(source, progress or (lambda done, total, message: None), separate_tokenizer=True)
    try:
        if args.command == "health":
            try:
                return run_health(args, table, progress)
            finally:
                _end_progress()
        return _answer(args, table)
    finally:
        table.close()


def _local_models() -> tuple[dict[str, object], str]:
    """The models File > Local models lists (without the window's recent files: they are its settings, in Qt)."""
    from .core.common.files import size_text
    from .core.sources.discovery import local_models

    models = local_models()
    rows = [("NAME", "SOURCE", "FORMAT", "STORAGE", "SIZE", "WHERE")]
    for model in models:
        where = f"MISSING: {model.missing} ({model.location})" if model.missing else model.location
        size = size_text(model.size_bytes) if model.size_bytes else "-"
        rows.append((model.name, model.kind, model.file_format or "-", model.storage or "-", size, where))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)) + "  " + row[5] for row in rows]
    if not models:
        lines = ["No models found (looked in the Hugging Face cache, Ollama's and LM Studio's folders)."]
    return {"models": [model.as_json() for model in models]}, "\n".join(lines)


def _check_png_target(path: str) -> None:
    """Refuse a --png target that is not a regular file (or a link to one) before the work starts."""
    from .core.common.files import write_target

    try:
        write_target(path)
    except OSError as exc:
        raise EmbedExplorerError(f"Cannot write the map to {path}: {exc.strerror or exc}.") from exc


def _answer(args: argparse.Namespace, table: EmbeddingTable) -> tuple[dict[str, object], str]:
    header = f"model: {table.name}"

    if args.command == "tokens":
        from .core.common.errors import QueryError
        from .core.text.texts import MAX_SHOWN_TOKENS

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

    if args.command == "analogy":
        return _analogy(table, args)

    if args.command == "direction":
        return _direction(table, args)

    if args.command == "neighbours":
        result = table.neighbours(args.word, args.k)
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
            "storage": facts.storage,
            "memory_bytes": facts.memory_bytes,
            "neighbour_search": table.search_method(),
        }
        head = _output_head(table)
        payload["output_head"] = None if head is None else head.kind
        payload["output_head_note"] = None if head is None else head.sentence
        lines = [facts.summary(), f"neighbour search: {payload['neighbour_search']}"]
        return payload, "\n".join(lines + ([] if head is None else [head.sentence]))

    if args.command == "layers":
        return _layers(args, table)

    if args.command == "map" and (args.words is not None or args.projection != "pca"):
        return _word_map(args, table, header)

    if args.command == "map":
        from .core.exercises.family_distances import family_distances
        from .core.maps.family_map import family_map, load_families
        from .core.maps.map_origin import with_provenance

        drawn = family_map(table, load_families(args.families), args.multi_token)
        drawn = with_provenance(drawn, table, args.multi_token)
        # Ranking families needs two of them; a single family still gets its map.
        distances = family_distances(table, drawn) if len(drawn.families) >= 2 else None
        payload = drawn.to_dict(table.name)
        payload["family_distances"] = None if distances is None else distances.to_list()
        ranking = ["families from the furthest away, by mean cosine of whole rows to the other families:"]
        if distances is None:
            ranking = ["no ranking of families (family_distances is null): it needs at least two families"]
        else:
            ranking += distances.lines()
        _draw_pictures(args, drawn, table.name, payload)
        lines = [header]
        lines += [f"{p.family:<10} {p.token:<16} {p.x:8.3f} {p.y:8.3f}" for p in drawn.points]
        lines += [
            f"the two axes keep {drawn.explained_variance:.1%} of the spread",
            f"mean cosine within a family {_number(drawn.within_family_cosine, 3)}, "
            f"between families {_number(drawn.between_family_cosine, 3)} "
            f"(ratio {_number(drawn.family_ratio, 1)})",
            *ranking,
            *(f"note: {n}" for n in drawn.notes),
        ]
        lines += _written(args)
        return payload, "\n".join(lines)

    raise EmbedExplorerError(f"Unknown command {args.command!r}.")  # argparse prevents this


def _draw_pictures(args: argparse.Namespace, drawn: Any, model_name: str, payload: dict[str, object]) -> None:
    """``--png`` and ``--svg``: the map drawn as the window draws it, through the same module;
    ``--html`` and ``--csv``: the page and the points, written by the engine (no Qt).
    Every one says where the map came from, and so does the JSON."""
    from .core.maps.points_export import write_points
    from .core.maps.provenance import export_date, stamped
    from .core.maps.web_page import write_map_page

    date = export_date()
    payload["provenance"] = stamped(drawn.provenance, date)
    for key in ("png", "svg"):
        target = getattr(args, key)
        if target:
            from .map_pictures import write_map_picture

            write_map_picture(drawn, model_name, target, width=args.width, date=date)
            payload[key] = target
    if args.html:
        write_map_page(args.html, drawn, model_name, date=date)
        payload["html"] = args.html
    if args.csv:
        try:
            write_points(args.csv, drawn, model_name, date=date)
        except OSError as exc:
            raise EmbedExplorerError(f"Cannot write the points to {args.csv}: {exc.strerror or exc}.") from exc
        payload["csv"] = args.csv


def _written(args: argparse.Namespace) -> list[str]:
    lines = [f"map written to {target}" for target in (args.png, args.svg, args.html) if target]
    return lines + ([f"points written to {args.csv}"] if args.csv else [])


def _bare_download_is_table(argv: Sequence[str]) -> list[str]:
    """``--download`` alone means the table: it must never take the next word as its value."""
    words = list(argv)
    end = words.index("--") if "--" in words else len(words)
    return [("--download=table" if w == "--download" and i < end else w) for i, w in enumerate(words)]


def _word_map(args: argparse.Namespace, table: EmbeddingTable, header: str) -> tuple[dict[str, object], str]:
    """``map --words ... --projection ...``: any rows of the table, flattened by PCA, t-SNE or UMAP."""
    from .core.maps.family_map import load_families
    from .core.maps.map_cache import MapCache
    from .core.maps.map_origin import with_provenance
    from .core.maps.word_maps import word_map
    from .core.maps.word_sets import choose

    words = choose(table, args.words or "all", args.multi_token)
    progress = _stderr_progress if sys.stderr.isatty() else None
    drawn = word_map(
        table, words, load_families(args.families), args.projection, seed=args.seed, cache=MapCache(), progress=progress
    )
    drawn = with_provenance(drawn, table, args.multi_token)
    _end_progress()
    payload = drawn.to_dict()
    _draw_pictures(args, drawn, table.name, payload)
    counts = ", ".join(f"{name} {count}" for name, count in drawn.family_counts().items() if count)
    lines = [
        header,
        f"{drawn.description}, flattened by {drawn.layout.name}"
        + (" (read from the cache)" if drawn.from_cache else f" in {drawn.seconds:.1f} s"),
        f"the map keeps {drawn.layout.keeps}",
        f"family words among them: {counts or 'none'}",
    ]
    shown = min(len(drawn), 20)
    pairs = zip(drawn.labels[:shown], drawn.coords[:shown].tolist(), strict=True)
    lines += [f"{terminal_safe(label):<20} {x:9.3f} {y:9.3f}" for label, (x, y) in pairs]
    if len(drawn) > shown:
        lines.append(f"... and {len(drawn) - shown:,} more points (--json lists them all)")
    lines += [f"note: {terminal_safe(n)}" for n in drawn.notes]
    lines += _written(args)
    return payload, "\n".join(lines)


def _analogy(table: EmbeddingTable, args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from .core.exercises.analogies import NO_CLAIM, solve_analogy

    answer = solve_analogy(
        table, args.a, args.b, args.c, args.k, include_inputs=args.include_inputs, expect=args.expect
    )
    payload = {"model": table.name, **answer.to_dict()}
    lines = [f"model: {table.name}", f"query: {answer.label}"]
    if answer.note:
        lines.append(f"note: {answer.note}")
    lines += [f"{n.token:<20} {n.id:>8}  {n.cosine:6.3f}" for n in answer.neighbours]
    lines.append(f"(baseline for unrelated tokens here: {table.baseline_cosine:.3f})")
    lines.append(answer.inputs_line())
    if answer.expected is not None:
        lines.append(f"expected: {answer.expected_line()}")
    lines.append(NO_CLAIM)
    return payload, "\n".join(lines)


def _direction(table: EmbeddingTable, args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from .core.directions.direction import DEFAULT_PAIRS, DirectionSpec, load_groups
    from .core.directions.report import direction_report

    if args.groups and args.pair:
        raise EmbedExplorerError("Give --pair or --groups, not both.")
    spec = (
        DirectionSpec(groups=load_groups(args.groups))
        if args.groups
        else DirectionSpec(pairs=tuple((a, b) for a, b in (args.pair or DEFAULT_PAIRS)))
    )
    report = direction_report(table, spec, tuple(args.words), args.k, baseline=not args.no_baseline)
    return report.to_dict(), "\n".join(report.text_lines())


def _number(value: float, digits: int) -> str:
    """A statistic for the table output; one without pairs to average (NaN) is "n/a"."""
    return f"{value:.{digits}f}" if value == value else "n/a"


def _png_width(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_PNG_WIDTH:
        raise argparse.ArgumentTypeError(f"at most {MAX_PNG_WIDTH:,} pixels")
    return value


def _output_head(table: EmbeddingTable) -> Any:
    """Whether the model's output head is the table itself (a model folder only; None for a GGUF file)."""
    from .core.layers.output_head import describe

    folder = table.folder
    return describe(folder) if folder is not None and Path(folder).is_dir() else None


def _layers(args: argparse.Namespace, table: EmbeddingTable) -> tuple[dict[str, object], str]:
    """One token through every layer: one row per layer, the JSON a list of those rows."""
    from .core.common.errors import QueryError
    from .core.layers.output_head import percent
    from .core.layers.questions import check_layers_question
    from .core.layers.trace import load_layer_model, trace

    if args.compare_place is not None and args.compare is None:
        raise QueryError("--compare-place needs --compare TEXT2.")
    # Mistakes in the texts are told before the whole model loads, as the window tells them.
    _chosen, compare = check_layers_question(
        table, args.text, args.place, args.compare, args.compare_place, "say which token (--compare-place M)"
    )
    model = load_layer_model(table.folder or table.name, name=table.name)
    answer = trace(table, model, args.text, args.place, compare=compare, k=args.k)
    token, other = answer.token, answer.compare
    lines = [
        f"model: {table.name}",
        f"token {token.token.token} (id {token.token.id}) at place {token.place} of {token.text!r}",
    ]
    if other is not None:
        shown = f"{other.token.token} (id {other.token.id})"
        lines.append(f"compared with {shown} at place {other.place} of {other.text!r}")
    lines += [f"note: {answer.guess_note}", f"note: {answer.head_note}", f"input: {answer.input.note}"]
    if answer.head_row_cosine is not None:
        lines.append(
            f"output head: its own table; cosine of {token.token.token}'s input row and output row "
            f"{answer.head_row_cosine:.3f}"
        )
    columns = "guess (probability) | nearest rows (cosine)"
    lines.append(f"{'layer':<7}{'length':>9}{'cos row':>9}{'cos other':>11}  {columns}")
    for step in answer.steps:
        name = "input" if step.layer == 0 else str(step.layer)
        versus = "" if step.cosine_to_compare is None else f"{step.cosine_to_compare:.3f}"
        guess = ", ".join(f"{g.token} {percent(g.prob)}" for g in step.guess) or "-"
        nearest = ", ".join(f"{n.token} {n.cosine:.2f}" for n in step.nearest)
        lines.append(f"{name:<7}{step.length:9.3f}{step.cosine_to_row:9.3f}{versus:>11}  {guess} | {nearest}")
    return {"layers": answer.as_rows()}, "\n".join(lines)


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_SEED:,}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


_progress_open = False
# An open that takes longer than this shows its progress on stderr (when stderr is a terminal).
PROGRESS_AFTER_SECONDS = 1.0


def _stderr_progress(done: int, total: int, message: str) -> None:
    global _progress_open
    if total:
        _progress_open = done < total
        end = "" if _progress_open else "\n"
        # Downloads count bytes: say how many, not only the share.
        amount = f" ({done / 1e6:,.1f} of {total / 1e6:,.1f} MB)" if total >= 1_000_000 else ""
        print(f"\r{message}: {done / total:.0%}{amount}\033[K", end=end, file=sys.stderr, flush=True)


def _after_a_second(report: Callable[[int, int, str], None]) -> Callable[[int, int, str], None]:
    """``report``, silent for the first second: a quick open prints nothing, a slow one shows where it is."""
    began = time.monotonic()

    def maybe(done: int, total: int, message: str) -> None:
        if _progress_open or time.monotonic() - began >= PROGRESS_AFTER_SECONDS:
            report(done, total, message)

    return maybe


def _end_progress() -> None:
    """Finish an open progress line so an error starts on a line of its own."""
    global _progress_open
    if _progress_open:
        print(file=sys.stderr, flush=True)
        _progress_open = False


def _version() -> str:
    from . import __version__

    return f"embedexplorer {__version__}"
