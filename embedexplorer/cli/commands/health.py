"""``embedexplorer health``: the tokens of a table that look untrained, ranked, as a table or JSON."""

from __future__ import annotations

import argparse

from ...core.common.terminal import one_line
from ...core.health.check_counts import DEFAULT_CANDIDATES, MAX_CANDIDATES
from ..arguments import positive_int
from ..command import Answer, Asker, Command

DEFAULT_TOP = 100
# Characters of a token shown in the text table (the JSON always has the whole token).
_TOKEN_WIDTH = 24


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--top",
        type=positive_int,
        default=DEFAULT_TOP,
        help=f"how many tokens to list, most suspicious first (default {DEFAULT_TOP}; "
        "a number at least the vocabulary's size lists every token)",
    )
    parser.add_argument(
        "--verify",
        nargs="?",
        type=_verify_count,
        const=DEFAULT_CANDIDATES,
        default=None,
        metavar="N",
        help=f"ask the whole model to repeat each of the N most suspicious tokens (default {DEFAULT_CANDIDATES}, "
        f"at most {MAX_CANDIDATES}) and report the probability it gives the token (docs/health.md)",
    )


def _verify_count(text: str) -> int:
    value = positive_int(text)
    if value > MAX_CANDIDATES:
        raise argparse.ArgumentTypeError(f"at most {MAX_CANDIDATES} (each token is one pass of the whole model)")
    return value


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    from ...core.health.repeat_check import candidates
    from ...jobs.health_jobs import HEALTH, HEALTH_VERIFY, HealthRequest, VerifyRequest

    # The window's Health tab asks the same request kind; the round trip and two passes over a
    # large table take seconds, and a person watching sees where it is (the asker's progress).
    report = asker.ask(HEALTH, HealthRequest())
    repeat = None
    if args.verify is not None:
        # The same model process as the layers question; without the whole model, one sentence.
        repeat = asker.ask(HEALTH_VERIFY, VerifyRequest(tuple(candidates(report.order, args.verify))))
    payload = report.as_json(args.top, repeat)
    header, rows = report.table_header(repeat), report.table_rows(args.top, repeat)
    return payload, health_text(report.model, payload, header, rows)


def health_text(model: str, payload: dict[str, object], header: list[str], rows: list[list[str]]) -> str:
    """A readable table: the summary, then one line per token (every cell one safe line)."""
    summary = payload["summary"]
    assert isinstance(summary, dict)
    reasons = summary["reasons"]
    assert isinstance(reasons, dict)
    lines = [
        f"model: {one_line(model)}",
        f"{summary['tokens']:,} tokens, {summary['flagged']:,} flagged (score >= {summary['threshold']:g}); "
        f"{summary['reference_tokens']:,} unreachable tokens are the reference"
        + ("; the output head was read too" if summary["output_head"] else ""),
        "reasons: " + ", ".join(f"{name} {count:,}" for name, count in reasons.items() if count),
        *(f"note: {one_line(note)}" for note in summary["notes"]),
        *_repeat_lines(summary.get("repeat_check")),
        f"rule: {summary['rule']}",
        "",
    ]
    shown = [[_cell(c, _TOKEN_WIDTH if i == 2 else 40) for i, c in enumerate(row)] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in shown) for i in range(len(header))]
    right = {0, 1, 3} | set(range(5, len(header)))
    for row in shown:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _repeat_lines(check: object) -> list[str]:
    """What the check with the model asked, or the one sentence why it could not."""
    if not isinstance(check, dict):
        return []
    if check.get("unavailable"):
        return [f"check with the model: not available. {one_line(str(check['unavailable']))}"]
    chance = check.get("chance")
    told = f"; 1 / vocabulary = {chance:.3g}" if isinstance(chance, float) else ""
    return [
        f"check with the model: {check['checked']} tokens; repeat_p is the probability the model gives the token "
        f"after the prompt {check['prompt']}{told}"
    ]


def _cell(text: str, width: int) -> str:
    safe = one_line(text)
    return safe if len(safe) <= width else safe[: width - 1] + "…"


COMMAND = Command(
    "health",
    "tokens whose rows look untrained (unreachable, short, like the unreachable, duplicated, broken)",
    arguments,
    answer=answer,
    description="Rank every token by how untrained its row looks: the row's length, its cosine to the mean of "
    "the tokens the tokenizer can never produce (after removing the first principal component), duplicate "
    "rows and broken rows. docs/health.md gives the rule and the threshold.",
)
