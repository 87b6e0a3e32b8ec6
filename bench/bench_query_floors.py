"""Where one query's time goes on a table scanned through a copy, and the least this design can take.

``python3 -m bench.bench_query_floors [--only TYPE,...] [--rounds N] [--qwen]``: the GPT-2-shaped GGUF
tables that ``bench_faiss`` builds under bench/.cache/ (``--qwen``: the Qwen2-7B-sized ones), of the
types whose query reads a copy of the rows sixteen at a time, made at open or at a second query (by
default the 1-2-bit types, IQ3_XXS and TQ2_0). Goal 2 of ``bench_faiss`` holds a query to 1.15x one plain read of the
stored bytes on one thread; this prints, per table, as medians of paired ratios to that read (two rounds of
turns, each with its own read, the order reversed every other round):

- ``read2``, ``copy2``: the stored bytes, and the scan's copy, read once on two threads by numpy's sum (the
  Python pool's hand-over, timed alike on 16 words, taken off);
- ``scan2``: the copy's scan alone (``bounded_scores``: the scan a query runs), on the threads a query uses;
  ``app``: the whole query;
- ``glue``: the query less its scan (paired differences): picking candidates, the exact pass, the
  answer's tokens and the Python around them;
- ``kernel``: one core's scan of the first 3,072 rows again and again (its copy in that core's
  cache: the arithmetic alone, no wait for memory), less a scan of the first 1,024 (what a call costs
  whatever its size), the fastest of 501 each, scaled to the table and halved for two cores.

``least`` = kernel + glue: what a query would take if its scan were its arithmetic alone, split evenly over two
cores, with nothing to wait for from memory, and the rest as it is. Where that is above 1.15x, no tuning of how
this scan reads its copy meets the goal; only less arithmetic a number, or less work around the scan, can.
(``copy2`` is printed, not added: numpy's sum of a Python thread's half reads slower than the scan's own C
threads do, so it bounds nothing.) Run it when the machine is quiet; the load is printed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from bench.common import Row, emit, gpt2_folder, machine_note, median, timed_in_turns

DEFAULT_TYPES = ("IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "TQ1_0", "TQ2_0", "IQ3_XXS")
ROUNDS = 41
# Rows scanned again and again for ``kernel``, and as many less: IQ2_S's copy of 3,072 GPT-2-shaped rows is 0.9 MB,
# within one core's 1 MB second-level cache.
KERNEL_ROWS = 3072
KERNEL_LESS = 2048
GOAL = 1.15


def _words(array: np.ndarray) -> np.ndarray:
    raw = np.asarray(array).reshape(-1).view(np.uint8)
    return raw[: raw.size // 8 * 8].view(np.uint64)


def _kernel_seconds(screen, query: np.ndarray) -> float:  # type: ignore[no-untyped-def]
    """The whole table's scan on one core with its copy in that core's cache, without a call's fixed cost."""
    from embedexplorer.core.search.scan_threads import own_thread_only
    from embedexplorer.core.search.stored_screen import StoredScreen

    count, width = screen.shape
    group_bytes = screen.groups.nbytes // -(-count // 16)

    def first(rows: int) -> StoredScreen:
        return StoredScreen(
            screen.bits[:rows],
            screen.kind,
            screen.lengths[:rows],
            screen.rounding,
            quantised_width=width,
            spread=screen.spread if screen.spread != 1.0 else None,
            groups=np.asarray(screen.groups).reshape(-1)[: rows // 16 * group_bytes],
        )

    more, fewer = first(KERNEL_ROWS), first(KERNEL_ROWS - KERNEL_LESS)
    length = float(np.linalg.norm(query.astype(np.float64)))
    with own_thread_only():
        times = timed_in_turns(
            {"more": lambda: more.bounded_scores(query, length), "fewer": lambda: fewer.bounded_scores(query, length)},
            501,
        )
    # The fastest of many: a few microseconds each, which anything else the machine does only lengthens.
    per_row = (min(times["more"]) - min(times["fewer"])) / KERNEL_LESS
    return per_row * count


def one_table(name: str, path: str, rounds: int) -> Row:
    from embedexplorer import open_table

    table = open_table(path)
    screen = table.stored_screen if table.stored else None
    if screen is not None and screen.groups is None:  # Q8_0, Q4_0, Q4_K, Q6_K: the copy comes with a second query
        table.neighbours(1000, k=10), table.neighbours(1001, k=10)
    if screen is None or screen.groups is None:
        table.close()
        raise SystemExit(f"{name}: its query reads the stored bytes, not a copy: nothing to split here")
    query = np.array(table.unit[1000], dtype=np.float32)
    length = float(np.linalg.norm(query.astype(np.float64)))
    stored, copy = _words(table.rows.raw), _words(screen.groups)
    helper = ThreadPoolExecutor(1)

    def two_threads(words: np.ndarray) -> Callable[[], None]:
        halves = (words[: words.size // 2], words[words.size // 2 :])

        def read() -> None:  # numpy's sum lets go of the GIL
            other = helper.submit(halves[1].sum)
            halves[0].sum()
            other.result()

        return read

    loads = [os.getloadavg()[0]]
    # Two rounds of turns, each with its own read: the scan's helper thread spins for 2 ms after a scan
    # (scan_common.h) and would slow a two-thread read that followed it in the same turns.
    reads = timed_in_turns(
        {
            "read": stored.sum,
            "read2": two_threads(stored),
            "copy2": two_threads(copy),
            "pool": two_threads(stored[:16]),
        },
        rounds,
    )
    queries = timed_in_turns(
        {
            "read": stored.sum,
            "scan2": lambda: screen.bounded_scores(query, length),
            "app": lambda: table.neighbours_of_vector(query, 10, exclude=(1000,)),
        },
        rounds,
    )
    kernel = _kernel_seconds(screen, query) / 2
    loads.append(os.getloadavg()[0])
    helper.shutdown()
    table.close()
    read = queries["read"]

    def ratio(times: dict[str, list[float]], key: str, less: str | None = None) -> float:
        """The median over the rounds of ``key``'s time (less ``less``'s in the same round) over the read's."""
        taken = times[key] if less is None else [a - b for a, b in zip(times[key], times[less], strict=True)]
        return median([t / r for t, r in zip(taken, times["read"], strict=True)])

    # A two-thread read pays the pool's hand-over too (timed alike on 16 words): left out of its figure.
    parts = {"read2": ratio(reads, "read2", "pool"), "copy2": ratio(reads, "copy2", "pool")}
    parts |= {"scan2": ratio(queries, "scan2"), "app": ratio(queries, "app")}
    glue = ratio(queries, "app", "scan2")
    least = kernel / median(read) + glue
    note = (
        f"read {median(read) * 1e3:.3f} ms; "
        + ", ".join(f"{key} {value:.2f}x" for key, value in parts.items())
        + f", glue {glue:.2f}x, kernel {kernel / median(read):.2f}x; the pool's hand-over "
        f"{median(reads['pool']) * 1e6:.0f} us; copy {copy.nbytes / stored.nbytes:.2f}x the stored bytes; "
        f"{rounds} rounds; 1-min load {min(loads):.1f}-{max(loads):.1f}"
    )
    print(f"  {name}: least {least:.2f}x, app {parts['app']:.2f}x ({note})", file=sys.stderr, flush=True)
    return Row(f"least one query can take through its copy, {name}", least, "x read", None,
               "one plain read of the stored bytes", least, f"<= {GOAL}x possible", least <= GOAL, note)  # fmt: skip


def run(argv: list[str]) -> list[Row]:
    from bench.bench_faiss import gguf_copy

    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else ROUNDS
    types = argv[argv.index("--only") + 1].upper().split(",") if "--only" in argv else list(DEFAULT_TYPES)
    print(machine_note(), file=sys.stderr)
    rows = [one_table(f"GPT-2 GGUF {t}", str(gguf_copy(gpt2_folder(), t)), rounds) for t in types]
    if "--qwen" in argv:
        from bench.large_fixture import qwen_gguf

        rows += [one_table(f"Qwen2-7B-sized GGUF {t}", str(qwen_gguf(t)), max(9, rounds // 4)) for t in types]
    return rows


if __name__ == "__main__":
    emit(run(sys.argv), sys.argv)
