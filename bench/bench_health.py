"""Vocabulary health on a Qwen2-7B-sized bfloat16 table, against one plain read plus one round trip.

    python bench/bench_health.py            # the Qwen2-7B-sized folder (1.09 GB, built once in bench/.cache)
    python bench/bench_health.py --gpt2     # the GPT-2-shaped fixture, quicker

The baseline is what any health check must do at least once: read every row of the
table as float32 numbers (block by block, as the engine does, summing them so nothing is
skipped) and round-trip every token through the tokenizer's child process. The subject
is ``vocabulary_health``: both of those, the second pass over the rows, the principal
component and the duplicate search. Pairs run interleaved; the ratio is the median of
the pairs' ratios, printed with the load average (goal: 1.5x).
"""

from __future__ import annotations

import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from bench.common import Row, emit, gpt2_folder, machine_note, warm_page_cache

PAIRS = 3


def plain_read(table) -> float:  # type: ignore[no-untyped-def]
    """One read of every row as float32, block by block; the sum keeps numpy from skipping any."""
    from embedexplorer.core.health.row_pass import blocks

    total = 0.0
    for _start, block in blocks(table.rows):
        total += float(block.sum(dtype=np.float64))
    return total


def baseline(table) -> float:  # type: ignore[no-untyped-def]
    from embedexplorer.core.health.reachability import check_reachability

    began = time.perf_counter()
    plain_read(table)
    check_reachability(table, lambda done, total: None)
    return time.perf_counter() - began


def subject(table) -> float:  # type: ignore[no-untyped-def]
    from embedexplorer.core.health.vocabulary_health import vocabulary_health

    began = time.perf_counter()
    vocabulary_health(table)
    return time.perf_counter() - began


def run(qwen: bool) -> list[Row]:
    from embedexplorer import open_table

    if qwen:
        from bench.large_fixture import qwen_folder

        folder = qwen_folder()
    else:
        folder = gpt2_folder()
    warm_page_cache(folder)
    note = machine_note()
    table = open_table(str(folder))
    try:
        shape = f"{table.rows.shape[0]:,} x {table.rows.shape[1]:,} {table.dtype}"
        subject(table)  # once to warm the code paths (imports, the tokenizer's first build)
        ratios, bases, subjects = [], [], []
        for _ in range(PAIRS):
            base, got = baseline(table), subject(table)
            ratios.append(got / base)
            bases.append(base)
            subjects.append(got)
    finally:
        table.close()
    ratio = float(np.median(ratios))
    load = f"load {os.getloadavg()[0]:.2f} at end" if hasattr(os, "getloadavg") else ""
    return [
        Row(f"vocabulary health, {shape}", float(np.median(subjects)), "s", float(np.median(bases)),
            "one plain read + one round trip", ratio, "<= 1.5x", ratio <= 1.5,
            f"median of {PAIRS} interleaved pairs, ratios {', '.join(f'{r:.2f}' for r in ratios)}; {note}; {load}"),
    ]  # fmt: skip


if __name__ == "__main__":
    emit(run(qwen="--gpt2" not in sys.argv), sys.argv)
