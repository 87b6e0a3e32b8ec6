"""``embedexplorer cosine A B``: the cosine of two tokens."""

from __future__ import annotations

import argparse

from ...core.common.terminal import one_line
from ..arguments import add_exact, typed, typed_text
from ..command import Answer, Asker, Command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", type=typed_text, help="a word, read as the window reads a typed word")
    parser.add_argument("b", type=typed_text)
    add_exact(parser)


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    from ...core.text.texts import fixed  # never "-0.000": the window and info print a tiny mean as 0.000
    from ...jobs.table_jobs import COSINE, CosineRequest

    table = asker.table
    cosine = asker.ask(COSINE, CosineRequest(typed(args, args.a), typed(args, args.b), with_baseline=not args.json))
    payload: dict[str, object] = {
        "model": table.name,
        "a": cosine.a,
        "a_id": cosine.a_id,
        "b": cosine.b,
        "b_id": cosine.b_id,
        "cosine": cosine.cosine,
        "note": cosine.note or "",  # always there, "" when there is nothing to say: scripts read the same keys
    }
    lines = [
        f"model: {one_line(table.name)}",
        f"cosine({one_line(cosine.a)}, {one_line(cosine.b)}) = {cosine.cosine:.3f}",
    ]
    if not args.json:  # JSON has no baseline: it reads 20,000 sampled rows only to be printed
        lines.append(f"(baseline for unrelated tokens here: {fixed(table.baseline_cosine, 3)})")
    return payload, "\n".join(lines + ([f"note: {one_line(cosine.note)}"] if cosine.note else []))


COMMAND = Command("cosine", "cosine of two tokens", arguments, answer=answer, names_rows_pointing_nowhere=False)
