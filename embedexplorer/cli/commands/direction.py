"""``embedexplorer direction``: a direction from word pairs or groups, its two ends against chance."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..arguments import positive_int
from ..command import Answer, Command

if TYPE_CHECKING:
    from ...core.tables.embedding_table import EmbeddingTable


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pair", nargs=2, action="append", metavar=("A", "B"), help="a pair A -> B (repeat it; default: "
        "he she, king queen, man woman)"
    )
    parser.add_argument("--groups", default=None, metavar="FILE", help='two groups: {"from": [...], "to": [...]}')
    parser.add_argument("--words", nargs="+", default=[], help="your words: their scores and percentiles")
    parser.add_argument("-k", type=positive_int, default=20, help="tokens at each end (default 20)")
    parser.add_argument("--no-baseline", action="store_true", help="leave out the 100 random directions")


def answer(args: argparse.Namespace, table: EmbeddingTable) -> Answer:
    from ...core.common.errors import EmbedExplorerError
    from ...core.directions.direction import DEFAULT_PAIRS, DirectionSpec, load_groups
    from ...core.directions.report import direction_report

    if args.groups and args.pair:
        raise EmbedExplorerError("Give --pair or --groups, not both.")
    spec = (
        DirectionSpec(groups=load_groups(args.groups))
        if args.groups
        else DirectionSpec(pairs=tuple((a, b) for a, b in (args.pair or DEFAULT_PAIRS)))
    )
    report = direction_report(table, spec, tuple(args.words), args.k, baseline=not args.no_baseline)
    return report.to_dict(), "\n".join(report.text_lines())


COMMAND = Command(
    "direction",
    "a direction from word pairs or groups: its two ends against chance",
    arguments,
    answer=answer,
)
