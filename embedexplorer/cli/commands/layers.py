"""``embedexplorer layers TEXT --place N``: one token of a text through every layer of the whole model."""

from __future__ import annotations

import argparse

from ...core.common.constants import LAYERS_K
from ...core.common.terminal import one_line
from ..arguments import positive_int, typed_text
from ..command import Answer, Asker, Command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", type=typed_text, help="the text the token stands in, taken literally")
    parser.add_argument("--place", type=positive_int, required=True, help="which token, counted from 1")
    parser.add_argument(
        "--compare", type=typed_text, default=None, metavar="TEXT2", help="a second text to compare the token with"
    )
    parser.add_argument(
        "--compare-place",
        type=positive_int,
        default=None,
        metavar="M",
        help="the token of TEXT2 to compare with (default: the first with the same id)",
    )
    parser.add_argument(
        "-k",
        type=positive_int,
        default=LAYERS_K,
        help=f"the model's guesses and nearest rows per layer (default {LAYERS_K}, as the window's)",
    )


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    """One token through every layer: one row per layer, the JSON a list of those rows."""
    from ...core.common.errors import IncompleteModelError, QueryError
    from ...core.layers.output_head import percent
    from ...core.layers.questions import check_layers_question
    from ...jobs.layer_jobs import LAYERS, LayersRequest

    table = asker.table
    if args.compare_place is not None and args.compare is None:
        raise QueryError("--compare-place needs --compare TEXT2.")
    # The window's check, told before the whole model loads, with the flag that chooses another place.
    check_layers_question(
        table, args.text, args.place, args.compare, args.compare_place, "say which token (--compare-place M)"
    )
    # The window's request kind: the model runs in its own process, closed with the session.
    reply = asker.ask(LAYERS, LayersRequest(args.text, args.place, args.compare, args.compare_place, args.k))
    if reply.missing is not None:
        raise IncompleteModelError(reply.missing.message)
    traced = reply.answer
    assert traced is not None  # a reply holds the answer or what is missing
    token, other = traced.token, traced.compare
    lines = [
        f"model: {one_line(table.name)}",
        f"token {token.token.token} (id {token.token.id}) at place {token.place} of {token.text!r}",
    ]
    if other is not None:
        shown = f"{other.token.token} (id {other.token.id})"
        lines.append(f"compared with {shown} at place {other.place} of {other.text!r}")
    lines += [f"note: {one_line(traced.guess_note)}", f"note: {one_line(traced.head_note)}"]
    lines.append(f"input: {one_line(traced.input.note)}")
    if traced.head_row_cosine is not None:
        lines.append(
            f"output head: its own table; cosine of {token.token.token}'s input row and output row "
            f"{traced.head_row_cosine:.3f}"
        )
    columns = "guess (probability) | nearest rows (cosine)"
    lines.append(f"{'layer':<7}{'length':>9}{'cos row':>9}{'cos other':>11}  {columns}")
    for step in traced.steps:
        name = "input" if step.layer == 0 else str(step.layer)
        versus = "" if step.cosine_to_compare is None else f"{step.cosine_to_compare:.3f}"
        guess = ", ".join(f"{g.token} {percent(g.prob)}" for g in step.guess) or "-"
        nearest = ", ".join(f"{n.token} {n.cosine:.2f}" for n in step.nearest)
        lines.append(f"{name:<7}{step.length:9.3f}{step.cosine_to_row:9.3f}{versus:>11}  {guess} | {nearest}")
    return {"layers": traced.as_rows()}, "\n".join(lines)


COMMAND = Command(
    "layers",
    "one token of a text through every layer of the whole model",
    arguments,
    answer=answer,
    json_key="layers",
)
