"""``embedexplorer tokens TEXT``: the text split into tokens and ids."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ...core.common.terminal import one_line
from ..arguments import typed_text
from ..command import Answer, Asker, Command

if TYPE_CHECKING:
    from ...core.tables.embedding_table import EmbeddingTable
    from ...core.tables.token_only import TokensOnly


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", type=typed_text, help="taken literally: a leading space is part of the text")
    parser.add_argument(
        "--all",
        action="store_true",
        help="list every token, also those past the last position row (default: the ones that fit)",
    )


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    return answer_about(args, asker.table)


def answer_about(args: argparse.Namespace, table: EmbeddingTable | TokensOnly) -> Answer:
    """The answer from a whole table or from a folder's tokenizer alone: the same report either way."""
    from ...core.common.errors import QueryError
    from ...core.text.texts import MAX_SHOWN_TOKENS

    shown = None if args.all else MAX_SHOWN_TOKENS
    report = table.tokenize(args.text, only_fitting=not args.all, max_shown=shown)
    if report.count == 0:
        raise QueryError(report.note)
    tokens = report.tokens
    payload: dict[str, object] = {
        "model": table.name,
        "tokens": [{"id": t.id, "token": t.token} for t in tokens],
        "count": report.count,
        "fits": report.fits,
        "position_rows": report.position_rows,
        "note": report.note,  # always there, "" when there is nothing to say: scripts read the same keys
    }
    lines = [f"{one_line(t.token):<20} {t.id:>8}" for t in tokens]
    rows = report.position_rows
    if rows is not None and len(tokens) > rows:
        lines.insert(rows, f"-- no position row from position {rows + 1:,} on --")
    lines += [f"note: {one_line(report.note)}"] if report.note else []
    return payload, "\n".join([f"model: {one_line(table.name)}", f"{report.count} token(s)", *lines])


COMMAND = Command(
    "tokens",
    "split text into tokens and ids",
    arguments,
    answer=answer,
    names_rows_pointing_nowhere=False,
    answer_without_rows=answer_about,
)
