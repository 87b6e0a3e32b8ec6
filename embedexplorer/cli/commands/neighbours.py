"""``embedexplorer neighbours WORD``: the nearest tokens by cosine."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ...core.common.terminal import one_line
from ..arguments import positive_int
from ..command import Answer, Command

if TYPE_CHECKING:
    from ...core.tables.embedding_table import EmbeddingTable


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("word", help="taken literally; its first token answers for it")
    parser.add_argument("-k", type=positive_int, default=8, help="how many neighbours (default 8)")


def answer(args: argparse.Namespace, table: EmbeddingTable) -> Answer:
    result = table.neighbours(args.word, args.k)
    query = result.query
    payload: dict[str, object] = {
        "model": table.name,
        "query": {"id": query.id, "token": query.token} if query else None,
        "neighbours": [{"id": n.id, "token": n.token, "cosine": n.cosine} for n in result.neighbours],
    }
    if result.note:
        payload["note"] = result.note
    lines = [f"model: {one_line(table.name)}", f"query: {one_line(query.token) if query else '?'}"]
    if result.note:
        lines.append(f"note: {one_line(result.note)}")
    lines += [f"{one_line(n.token):<20} {n.id:>8}  {n.cosine:6.3f}" for n in result.neighbours]
    lines.append(f"(baseline for unrelated tokens here: {table.baseline_cosine:.3f})")
    return payload, "\n".join(lines)


COMMAND = Command("neighbours", "nearest tokens by cosine", arguments, answer=answer)
