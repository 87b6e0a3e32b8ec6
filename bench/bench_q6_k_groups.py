"""A Q6_K table's first pass over its blocks as stored against its grouped copy (``quants_groups_q6k.h``).

``python3 -m bench.bench_q6_k_groups [--qwen] [--rounds N]``: the GPT-2-shaped GGUF Q6_K table that
``bench_faiss`` builds under bench/.cache/ (``--qwen``: the Qwen2-7B-sized one too). In one process,
in turns (the order reversed every other round): ``quant_scores`` over the stored blocks, over the
grouped copy, and one plain read of the stored bytes, each on one thread and on the threads a query
uses; the median of the paired ratios (grouped / stored, each / read), the load average around them,
and the time and bytes of making the copy. Then a person's queries one after another, 20 with the copy
and 20 without in turns (``queries_in_turn``). This is what decides whether a table of that size gets
the copy (``stored_screen._GROUPS_MAX_BYTES``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from bench.common import Row, emit, median, timed_in_turns

ROUNDS = 15


def _ratio(times: dict[str, list[float]], top: str, bottom: str) -> float:
    return median([a / b for a, b in zip(times[top], times[bottom], strict=True)])


def one_table(name: str, path: str, rounds: int) -> list[Row]:
    from embedexplorer import open_table
    from embedexplorer.core.search import _quants
    from embedexplorer.core.search.q6_k_groups import q6_k_groups
    from embedexplorer.core.search.scan_threads import own_thread_only, shared_pass

    table = open_table(path)
    screen = table.screen
    assert screen.quantised and screen.kind == 3, "not a Q6_K table scanned as stored"
    count, width = screen.shape
    began = time.perf_counter()
    groups = q6_k_groups(screen.bits, width, _quants)
    copy_ms = (time.perf_counter() - began) * 1e3
    query = np.array(table.unit[1000], dtype=np.float32)
    out = np.empty(count, dtype=np.float32)
    flat = np.asarray(screen.bits).reshape(-1)
    words = flat[: flat.size // 8 * 8].view(np.uint64)
    halves = (words[: words.size // 2], words[words.size // 2 :])
    helper = ThreadPoolExecutor(1)

    def scan(copy: np.ndarray | None, progress: np.ndarray) -> None:
        extra = () if copy is None else (copy,)
        _quants.quant_scores(screen.bits, screen.kind, query, screen.scale, out, progress, True, *extra)

    def shared(copy: np.ndarray | None) -> None:
        shared_pass(count * width, partial(scan, copy))

    def alone(copy: np.ndarray | None) -> None:
        with own_thread_only():
            shared(copy)

    def read_on_two_threads() -> None:
        other = helper.submit(halves[1].sum)
        halves[0].sum()
        other.result()

    runs: dict[str, Callable[[], object]] = {
        "stored": partial(shared, None),
        "grouped": partial(shared, groups),
        "read2": read_on_two_threads,
        "stored1": partial(alone, None),
        "grouped1": partial(alone, groups),
        "read": words.sum,
    }
    load = os.getloadavg()[0]
    times = timed_in_turns(runs, rounds)
    helper.shutdown()
    loads = f"1-min load {min(load, os.getloadavg()[0]):.1f}-{max(load, os.getloadavg()[0]):.1f}"
    ms = {key: median(values) * 1e3 for key, values in times.items()}
    note = (
        f"{screen.bits.nbytes / 1e6:,.0f} MB stored, copy {groups.nbytes / 1e6:,.0f} MB made in {copy_ms:.0f} ms; "
        f"{rounds} rounds; {loads}; one thread: stored {ms['stored1']:.2f} ms, grouped {ms['grouped1']:.2f} ms, "
        f"read {ms['read']:.2f} ms (grouped/stored {_ratio(times, 'grouped1', 'stored1'):.2f}x, "
        f"/read {_ratio(times, 'stored1', 'read'):.2f}x and {_ratio(times, 'grouped1', 'read'):.2f}x); "
        f"the query's threads: stored {ms['stored']:.2f} ms, grouped {ms['grouped']:.2f} ms, read on two "
        f"threads {ms['read2']:.2f} ms (/that {_ratio(times, 'stored', 'read2'):.2f}x and "
        f"{_ratio(times, 'grouped', 'read2'):.2f}x)"
    )
    table.close()
    print(f"  {name}: {note}", file=sys.stderr, flush=True)
    ratio = _ratio(times, "grouped", "stored")
    return [Row(f"Q6_K first pass by groups, {name}", ms["grouped"], "ms", ms["stored"],
                "the same pass over the blocks as stored", ratio, "< 1.0x", ratio < 1.0, note)]  # fmt: skip


def queries_in_turn(name: str, path: str, rounds: int) -> list[Row]:
    """A person's queries one after another (20 tokens' neighbours, k=10, a round), the table's copy used and
    not (``_GROUPS_MAX_BYTES`` set to 0 for the second) in turns: the median ms and CPU ms a query."""
    from embedexplorer import open_table
    from embedexplorer.core.search import stored_screen

    limit = stored_screen._GROUPS_MAX_BYTES
    table = open_table(path)
    table.neighbours(5, k=10)
    table.neighbours(6, k=10)  # the copy is made here
    assert table.screen.groups is not None, "no grouped copy here (no AVX-512 VNNI?)"
    wall: dict[str, list[float]] = {"grouped": [], "stored": []}
    cpu: dict[str, list[float]] = {"grouped": [], "stored": []}
    load = os.getloadavg()[0]
    try:
        for i in range(rounds):
            for key in ("grouped", "stored") if i % 2 == 0 else ("stored", "grouped"):
                stored_screen._GROUPS_MAX_BYTES = limit if key == "grouped" else 0
                first = 1000 + 40 * i + (20 if key == "stored" else 0)  # answers are remembered: new tokens
                for token in range(first, first + 20):
                    began, began_cpu = time.perf_counter(), time.process_time()
                    table.neighbours(token, k=10)
                    wall[key].append(time.perf_counter() - began)
                    cpu[key].append(time.process_time() - began_cpu)
    finally:
        stored_screen._GROUPS_MAX_BYTES = limit
        table.close()
    ms = {key: median(values) * 1e3 for key, values in wall.items()}
    cpu_ms = {key: sum(values) / len(values) * 1e3 for key, values in cpu.items()}
    note = (
        f"{20 * rounds} queries each way in turns; 1-min load {min(load, os.getloadavg()[0]):.1f}-"
        f"{max(load, os.getloadavg()[0]):.1f}; CPU a query: grouped {cpu_ms['grouped']:.2f} ms, stored "
        f"{cpu_ms['stored']:.2f} ms"
    )
    print(f"  {name}, queries in turn: grouped {ms['grouped']:.2f} ms, stored {ms['stored']:.2f} ms ({note})",
          file=sys.stderr, flush=True)  # fmt: skip
    ratio = ms["grouped"] / ms["stored"]
    return [Row(f"Q6_K neighbours by groups, {name}", ms["grouped"], "ms", ms["stored"],
                "the same queries over the blocks as stored", ratio, "< 1.0x", ratio < 1.0, note)]  # fmt: skip


def run(argv: list[str]) -> list[Row]:
    from bench.bench_faiss import gguf_copy
    from bench.common import gpt2_folder

    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else ROUNDS
    gpt2 = str(gguf_copy(gpt2_folder(), "Q6_K"))
    rows = one_table("GPT-2-shaped", gpt2, rounds) + queries_in_turn("GPT-2-shaped", gpt2, rounds)
    if "--qwen" in argv:
        from bench.large_fixture import qwen_gguf

        rows += one_table("Qwen2-7B-sized", str(qwen_gguf("Q6_K")), max(3, rounds // 3))
    return rows


if __name__ == "__main__":
    emit(run(sys.argv), sys.argv)
