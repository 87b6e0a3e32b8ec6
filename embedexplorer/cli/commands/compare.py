"""``embedexplorer compare A B``: two tables compared token by token, as a summary or JSON."""

from __future__ import annotations

import argparse

from ...core.common.constants import COMPARE_K
from ...core.common.terminal import one_line
from ..arguments import positive_int
from ..command import Answer, Asker, Command, ProgressReport


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help="the first model: folder, .gguf file, ollama:NAME, Hugging Face id or 'bundled'")
    parser.add_argument("b", nargs="?", default=None, help="the second model (left out with --output-head)")
    parser.add_argument("-k", type=positive_int, default=COMPARE_K, help=f"neighbours per token (default {COMPARE_K})")
    parser.add_argument(
        "--words",
        default="all",
        help="which tokens: 'all' (default), a regular expression matched against each token's text in A (a "
        "leading space is a space: GPT-2's ' Paris', which lists show as _Paris), or @FILE (one word a line)",
    )
    parser.add_argument(
        "--output-head", action="store_true", help="compare A's token table with its own output head (lm_head)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON: one entry per compared token")


def run(args: argparse.Namespace, progress: ProgressReport | None) -> Answer:
    """Open A here, then ask the window's request kind: it opens B, compares and closes B."""
    from ...core.common.errors import EmbedExplorerError
    from ...core.maps.word_sets import choose
    from ...core.tables.opening import open_table
    from ...jobs.base import Session
    from ...jobs.compare_jobs import COMPARE, CompareRequest

    if (args.b is None) == (not args.output_head):
        raise EmbedExplorerError("compare needs a second model B, or --output-head (and then no B).")
    quiet: ProgressReport = progress or (lambda done, total, message: None)
    session = Session()
    session.replace_table(open_table(args.a, progress=quiet, separate_tokenizer=True))
    try:
        asker = Asker(session, progress)
        words = None if args.words == "all" else tuple(int(i) for i in choose(asker.table, args.words, "skip").ids)
        comparison = asker.ask(COMPARE, CompareRequest(args.b or "", args.k, args.output_head, words))
    finally:
        session.replace_table(None)
    payload = comparison.to_dict()
    return payload, summary_text(payload)


def summary_text(payload: dict[str, object]) -> str:
    summary = payload["summary"]
    assert isinstance(summary, dict)
    k = payload["k"]
    lines = [
        f"A: {one_line(str(payload['a']))} ({summary['storage_a']})",
        f"B: {one_line(str(payload['b']))} ({summary['storage_b']})",
        *(one_line(note) for note in summary["notes"]),
        f"compared {summary['compared']:,} tokens, {k} neighbours each",
        f"neighbours kept (overlap@{k}): mean {summary['mean_overlap']:.2f}, median {summary['median_overlap']:g}",
        f"A's nearest still nearest in B: {summary['nearest_kept']:.1%}; its median rank in B "
        f"{summary['median_rank_in_b']:g}",
    ]
    if "mean_row_cosine" in summary:
        lines += [
            f"row cosine A-B: mean {summary['mean_row_cosine']:.4f}, median {summary['median_row_cosine']:.4f}",
            f"row error |a-b|/|a|: mean {summary['mean_relative_error']:.4f}, "
            f"median {summary['median_relative_error']:.4f}",
        ]
    histogram = summary["overlap_histogram"]
    lines.append("overlap  tokens")
    lines += [f"{shared:>7}  {count:,}" for shared, count in enumerate(histogram) if count]
    for title, key in (("most changed", "most_changed"), ("least changed", "least_changed")):
        lines.append(f"{title}:")
        for entry in summary[key]:
            cosine = "" if entry["row_cosine"] is None else f"  row cosine {entry['row_cosine']:.4f}"
            lines.append(f"  {one_line(entry['token']):<20} overlap {entry['overlap']}/{k}{cosine}")
    return "\n".join(lines)


COMMAND = Command(
    "compare",
    "compare two tables token by token (quantisation, training, another model)",
    arguments,
    run=run,
    description="Compare table A with table B token by token: each token's row cosine and how many of "
    "its k nearest tokens in A are among its k nearest in B.",
)
