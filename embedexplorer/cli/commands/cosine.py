"""``embedexplorer cosine A B``: the cosine of two tokens."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ...core.common.terminal import one_line
from ..command import Answer, Command

if TYPE_CHECKING:
    from ...core.tables.embedding_table import EmbeddingTable


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a")
    parser.add_argument("b")


def answer(args: argparse.Namespace, table: EmbeddingTable) -> Answer:
    a, b = table.query(args.a), table.query(args.b)
    value = table.cosine(a.id, b.id)
    payload: dict[str, object] = {"model": table.name, "a": a.token, "b": b.token, "cosine": value}
    notes = [q.note for q in (a, b) if q.note]
    text = f"model: {one_line(table.name)}\ncosine({one_line(a.token)}, {one_line(b.token)}) = {value:.3f}"
    text += f"\n(baseline for unrelated tokens here: {table.baseline_cosine:.3f})"
    return payload, "\n".join([text, *(f"note: {one_line(n)}" for n in notes)])


COMMAND = Command("cosine", "cosine of two tokens", arguments, answer=answer)
