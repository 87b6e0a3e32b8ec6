"""``embedexplorer health``: the tokens of a table that look untrained, ranked, as a table or JSON."""

from __future__ import annotations

import argparse

from ...core.common.terminal import one_line
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


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    from ...jobs.health_jobs import HEALTH, HealthRequest

    # The window's Health tab asks the same request kind; the round trip and two passes over a
    # large table take seconds, and a person watching sees where it is (the asker's progress).
    report = asker.ask(HEALTH, HealthRequest())
    payload = report.as_json(args.top)
    return payload, health_text(report.model, payload, report.table_header(), report.table_rows(args.top))


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
