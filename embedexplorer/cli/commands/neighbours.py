"""``embedexplorer neighbours WORD``: the nearest tokens by cosine."""

from __future__ import annotations

import argparse

from ...core.common.terminal import one_line
from ..arguments import add_exact, positive_int, typed, typed_text
from ..command import Answer, Asker, Command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "word", type=typed_text, help="read as the window reads a typed word; a word of several tokens: its first"
    )
    parser.add_argument("-k", type=positive_int, default=8, help="how many neighbours (default 8)")
    add_exact(parser)


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    from ...core.tables.spelling import word_or_first_token
    from ...core.text.texts import fixed  # never "-0.000": the window and info print a tiny mean as 0.000
    from ...jobs.table_jobs import NEIGHBOURS, NeighboursRequest

    table = asker.table
    # The word becomes its token as the window reads it; the neighbours are the selected token's.
    query = word_or_first_token(table, typed(args, args.word))
    # The text's baseline line reads the table's own (computed only there); --json shows none.
    result = asker.ask(NEIGHBOURS, NeighboursRequest(query.id, args.k, with_baseline=False)).result
    note = " ".join(n for n in (query.note, result.note) if n)
    payload: dict[str, object] = {
        "model": table.name,
        "query": {"id": query.id, "token": query.token},
        "neighbours": [{"id": n.id, "token": n.token, "cosine": n.cosine} for n in result.neighbours],
        "note": note,  # always there, "" when there is nothing to say: scripts read the same keys
    }
    lines = [f"model: {one_line(table.name)}", f"query: {one_line(query.token)}"]
    if note:
        lines.append(f"note: {one_line(note)}")
    lines += [f"{one_line(n.token):<20} {n.id:>8}  {n.cosine:6.3f}" for n in result.neighbours]
    if not args.json:  # JSON has no baseline: it reads 20,000 sampled rows only to be printed
        lines.append(f"(baseline for unrelated tokens here: {fixed(table.baseline_cosine, 3)})")
    return payload, "\n".join(lines)


COMMAND = Command("neighbours", "nearest tokens by cosine", arguments, answer=answer)
