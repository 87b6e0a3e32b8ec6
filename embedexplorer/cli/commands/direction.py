"""``embedexplorer direction``: a direction from word pairs or groups, its two ends against chance."""

from __future__ import annotations

import argparse

from ..arguments import add_exact, positive_int, typed, typed_text
from ..command import Answer, Asker, Command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pair",
        nargs=2,
        type=typed_text,
        action="append",
        metavar=("A", "B"),
        help="a pair A -> B (repeat it; default: he she, king queen, man woman)",
    )
    parser.add_argument("--groups", default=None, metavar="FILE", help='two groups: {"from": [...], "to": [...]}')
    parser.add_argument(
        "--words", nargs="+", type=typed_text, default=[], help="your words: their scores and percentiles"
    )
    parser.add_argument("-k", type=positive_int, default=20, help="tokens at each end (default 20)")
    parser.add_argument("--no-baseline", action="store_true", help="leave out the 100 random directions")
    add_exact(parser)


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    from ...core.common.errors import EmbedExplorerError
    from ...core.directions.direction import DEFAULT_PAIRS, DirectionSpec, load_groups
    from ...jobs.direction_jobs import DIRECTION, DirectionRequest

    if args.groups and args.pair:
        raise EmbedExplorerError("Give --pair or --groups, not both.")

    def read(words: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        return tuple(typed(args, word) for word in words)

    if args.groups:
        first, second = load_groups(args.groups)
        spec = DirectionSpec(groups=(read(first), read(second)))
    else:
        spec = DirectionSpec(pairs=tuple((typed(args, a), typed(args, b)) for a, b in (args.pair or DEFAULT_PAIRS)))
    report = asker.ask(DIRECTION, DirectionRequest(spec, read(args.words), args.k, baseline=not args.no_baseline))
    return report.to_dict(), "\n".join(report.text_lines())


COMMAND = Command(
    "direction",
    "a direction from word pairs or groups: its two ends against chance",
    arguments,
    answer=answer,
)
