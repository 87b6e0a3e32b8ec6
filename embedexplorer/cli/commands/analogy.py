"""``embedexplorer analogy A B C``: the tokens nearest to A - B + C."""

from __future__ import annotations

import argparse

from ...core.common.terminal import one_line
from ..arguments import add_exact, positive_int, typed, typed_text
from ..command import Answer, Asker, Command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", type=typed_text, help="A of A - B + C: king in king - man + woman")
    parser.add_argument("b", type=typed_text, help="B, taken away")
    parser.add_argument("c", type=typed_text, help="C, added")
    parser.add_argument("-k", type=positive_int, default=8, help="how many answers (default 8, as the window's)")
    parser.add_argument(
        "--include-inputs",
        action="store_true",
        help="let A, B and C themselves answer (default: left out, as most published results do)",
    )
    parser.add_argument("--expect", type=typed_text, default=None, help="a word you expect: print its rank and cosine")
    add_exact(parser)


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    from ...core.exercises.analogies import NO_CLAIM
    from ...core.text.texts import fixed  # never "-0.000": the window and info print a tiny mean as 0.000
    from ...jobs.exercise_jobs import ANALOGY, AnalogyRequest

    table = asker.table
    a, b, c = (typed(args, word) for word in (args.a, args.b, args.c))
    expect = "" if args.expect is None else typed(args, args.expect)
    solved = asker.ask(ANALOGY, AnalogyRequest(a, b, c, args.k, args.include_inputs, expect))
    payload = {"model": table.name, **solved.to_dict()}
    lines = [f"model: {one_line(table.name)}", f"query: {one_line(solved.label)}"]
    if solved.note:
        lines.append(f"note: {one_line(solved.note)}")
    lines += [f"{one_line(n.token):<20} {n.id:>8}  {n.cosine:6.3f}" for n in solved.neighbours]
    if not args.json:  # JSON has no baseline: it reads 20,000 sampled rows only to be printed
        lines.append(f"(baseline for unrelated tokens here: {fixed(table.baseline_cosine, 3)})")
    lines.append(solved.inputs_line())
    if solved.expected is not None:
        lines.append(f"expected: {solved.expected_line()}")
    lines.append(NO_CLAIM)
    return payload, "\n".join(lines)


COMMAND = Command("analogy", "tokens nearest to A - B + C", arguments, answer=answer)
