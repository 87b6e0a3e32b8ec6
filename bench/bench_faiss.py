"""The app's neighbour searches against faiss-cpu's exact IndexFlatIP, side by side in one run.

faiss is what a user would reach for instead; it is a bench-only extra
(``pip install -e .[bench]``), never a dependency of the app. Without it this prints so
and measures only the app against the plain floors.

1. **Every token's k=10 nearest** on the GPT-2-shaped table (50,257 x 768, float32),
   what ``compare`` runs per table: ``core/compare/every_neighbour.nearest_of_all``
   (exact: float32 tiles screened, float64 for the rows that could win) against
   faiss ``IndexFlatIP.search`` of every L2-normalised row (float32, exact up to its
   float32 rounding), on 1 and on 2 threads. The two run in turns, each pair in the
   same minute; the figure is the median of the pairs' ratios (>= 3 pairs). The answers
   are compared: the share of neighbour lists that are the same.
2. **One query** (k=10) through the app (``table.neighbours_of_vector``) against faiss's
   search of one row and against one plain read of the table's stored bytes (numpy's
   sum of them as 64-bit integers, one thread: every byte read once, nothing else; the
   goal's floor), on
   the GPT-2-shaped table in float32, bfloat16 and as a GGUF file of every type the app reads
   (F16, Q8_0, Q4_K, Q6_K, then the rest: ``readable_types``; the types the gguf package cannot
   quantise to are random blocks with finite scales: the same bytes to read, which is what is
   timed); ``--qwen`` adds the Qwen2-7B-sized table (152,064 x 3,584) in bfloat16 and as GGUF of
   every one of those types (random blocks; built under
   bench/.cache/ once), without faiss unless ``--qwen-faiss`` (its float32 copy is 2.2 GB).
   The app's scan shares its rows between the machine's cores, so the same read split over two
   threads (each half summed by one, as the scan's helper does) is timed too and printed beside the
   one-thread floor: the ratio to it says how far the app is from what two cores can read; and the
   app kept to one thread (``own_thread_only``, what ``EMBEDEXPLORER_SCAN_THREADS=1`` does), against
   the one-thread read: one core's speed. Where the query scans a copy of the rows sixteen at a time
   instead of the stored bytes, that copy read once on two threads is timed too (numpy's sum of each
   half: the scan's own C threads, which ask for lines ahead, can read it faster still). Handing half
   a read to a Python thread and waiting for it costs ~40 us of its own (timed alike on 16 words and
   taken off both two-thread reads): a tenth to a third of a read of a GPT-2-shaped table, which the
   app's C helpers do not pay (``bench_query_floors`` splits a query's time further). The two-thread
   reads take turns of their own, with a one-thread read of their own: a Python thread woken between
   the app's queries slowed whatever ran next.

Each side's CPU seconds (the process's, over the call) are printed too: on a machine
shared with other work, a 1-thread run's CPU time is what the load changes least. The app's
scan helpers stay awake for 2 ms after each pass (``scan_common.h``), and that time counts in
the CPU seconds of whatever runs next in the process: the read's CPU time includes it.

Options: ``--rows N`` makes the table the first N rows (every token of it, still the
symmetric search: a shorter run on a busy machine); ``--queries N`` searches the
neighbours of the first N tokens only (no symmetry); ``--pairs N`` (default 3); ``--threads N`` runs part 1 on N
threads only; ``--skip-all`` or ``--skip-one`` leave a part out; ``--rounds N`` (default 31; 9 on the
Qwen-sized tables) sets part 2's pairs; ``--only NAME,...`` keeps the part 2 tables whose names hold
one of the words; ``--no-faiss`` leaves faiss out of part 2's turns (its float32 copy of the table and
its OpenMP threads, which spin on after each search, then neither evict the cache nor hold the other
core: the app and the read as on a machine doing nothing else). The load average is printed with every
figure.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from bench.common import Row, emit, gpt2_folder, machine_note, median, timed_in_turns

K = 10


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def faiss_module():  # type: ignore[no-untyped-def]
    try:
        import faiss
    except ImportError:
        print(
            "faiss-cpu is NOT installed: the faiss columns are left out (pip install -e .[bench] adds it).",
            file=sys.stderr,
        )
        return None
    return faiss


def gpt2_rows() -> np.ndarray:
    from embedexplorer import open_table

    table = open_table(str(gpt2_folder()))
    rows = np.array(table.rows[:], dtype=np.float32)
    table.close()
    return rows


def every_token(rows: np.ndarray, queries: int | None, pairs: int, thread_counts: tuple[int, ...]) -> list[Row]:
    """Rows of part 1: the app's all-tokens search against faiss on 1 and 2 threads, in turns."""
    import torch

    from embedexplorer.core.compare.every_neighbour import nearest_of_all

    faiss = faiss_module()
    count = rows.shape[0] if queries is None else min(queries, rows.shape[0])
    picked = np.arange(count)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    index = None
    if faiss is not None:
        index = faiss.IndexFlatIP(unit.shape[1])
        index.add(unit)
    shape = f"{rows.shape[0]:,} x {rows.shape[1]:,}" + ("" if queries is None else f", first {count:,} tokens")
    out: list[Row] = []
    for threads in thread_counts:
        app_times: list[float] = []
        faiss_times: list[float] = []
        app_cpu: list[float] = []
        faiss_cpu: list[float] = []
        loads: list[str] = []
        same = float("nan")
        used = ""
        for pair in range(pairs):
            began, cpu = time.perf_counter(), time.process_time()
            found = nearest_of_all(rows, picked, K, threads=threads)
            app_times.append(time.perf_counter() - began)
            app_cpu.append(time.process_time() - cpu)
            used = f"{found.threads} thread(s), {found.product} product"
            if index is not None:
                faiss.omp_set_num_threads(threads)
                began, cpu = time.perf_counter(), time.process_time()
                _, theirs = index.search(unit[:count], K + 1)
                faiss_times.append(time.perf_counter() - began)
                faiss_cpu.append(time.process_time() - cpu)
                if pair == 0:
                    theirs = np.array([[j for j in line if j != i][:K] for i, line in enumerate(theirs)])
                    same = float(np.mean((np.sort(theirs, 1) == np.sort(found.ids, 1)).all(axis=1)))
            loads.append(load())
            print(f"  {threads} thread(s), pair {pair + 1}: app {app_times[-1]:.2f} s ({app_cpu[-1]:.1f} CPU s)"
                  + (f", faiss {faiss_times[-1]:.2f} s ({faiss_cpu[-1]:.1f} CPU s)" if faiss_times else "")
                  + f" ({loads[-1]})", file=sys.stderr, flush=True)  # fmt: skip
        torch.set_num_threads(os.cpu_count() or 1)
        app = median(app_times)
        note = f"{used}; loads per pair: {'; '.join(loads)}"
        if faiss_times:
            ratio = median([a / f for a, f in zip(app_times, faiss_times, strict=True)])
            cpu_ratio = median([a / f for a, f in zip(app_cpu, faiss_cpu, strict=True)])
            note += (
                f"; CPU seconds: app {median(app_cpu):.1f}, faiss {median(faiss_cpu):.1f}, median paired ratio "
                f"{cpu_ratio:.2f}x; same neighbour sets as faiss for {same:.2%} of tokens"
            )
            out.append(Row(f"every token's {K} nearest, {shape}, {threads} thread(s)", app, "s",
                           median(faiss_times), f"faiss IndexFlatIP, {threads} thread(s)", ratio, "<= 0.6x",
                           ratio <= 0.6, note))  # fmt: skip
        else:
            out.append(Row(f"every token's {K} nearest, {shape}, {threads} thread(s)", app, "s", None,
                           "faiss not installed", None, "<= 0.6x", None, note))  # fmt: skip
    return out


GGUF_TYPES = ("F16", "Q8_0", "Q4_K", "Q6_K")


def readable_types() -> tuple[str, ...]:
    """Every GGUF storage type the app reads (what the installed gguf package dequantises; float32 and
    bfloat16 have rows of their own): the four above first, then the rest in the package's order."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize

    readable = []
    for qtype in GGMLQuantizationType:
        if qtype.name in ("F32", "BF16") or qtype.name in GGUF_TYPES:
            continue
        try:
            dequantize(np.zeros((1, GGML_QUANT_SIZES[qtype][1]), dtype=np.uint8), qtype)
        except NotImplementedError:
            continue
        readable.append(qtype.name)
    return GGUF_TYPES + tuple(readable)


def one_query(
    pairs: int, qwen: bool, rounds: int | None, only: list[str], qwen_faiss: bool, with_faiss: bool = True
) -> list[Row]:
    """Rows of part 2: one query against faiss and against one plain read of the stored bytes."""
    faiss = faiss_module() if with_faiss else None
    # Each folder is made (once, under bench/.cache/) only when its row is run.
    folders: dict[str, Callable[[], str]] = {
        "GPT-2 float32": lambda: str(gpt2_folder()),
        "GPT-2 bfloat16": lambda: str(bf16_copy(gpt2_folder())),
    }
    types = readable_types()
    folders.update({f"GPT-2 GGUF {name}": lambda name=name: str(gguf_copy(gpt2_folder(), name)) for name in types})
    if qwen:
        from bench.large_fixture import qwen_folder, qwen_gguf

        folders["Qwen2-7B-sized bfloat16"] = lambda: str(qwen_folder())
        folders.update({f"Qwen2-7B-sized GGUF {name}": lambda name=name: str(qwen_gguf(name)) for name in types})
    out = []
    for name, make_folder in folders.items():
        if only and not any(_named(word, name) for word in only):
            continue
        folder = make_folder()
        large = name.startswith("Qwen")
        rounds_here = rounds if rounds is not None else (9 if large else 31)
        out.append(_one_table(name, folder, faiss if (qwen_faiss or not large) else None, max(pairs, rounds_here)))
    return out


def _named(word: str, name: str) -> bool:
    """True when ``word`` of ``--only`` picks the row ``name``: a type name (Q4_K) picks that type
    alone (not Q4_K's neighbours), any other word every row that contains it."""
    word = word.strip().lower()
    if word.upper() in readable_types():
        return name.lower().endswith(f"gguf {word}")
    return word in name.lower()


def _one_table(name: str, folder: str, faiss, rounds: int) -> Row:  # type: ignore[no-untyped-def]
    from embedexplorer import open_table
    from embedexplorer.core.search.scan_threads import own_thread_only

    table = open_table(folder)
    stored = table.rows.raw if table.stored else table.rows
    words = np.asarray(stored).reshape(-1).view(np.uint8)
    words = words[: words.size // 8 * 8].view(np.uint64)
    query = np.array(table.unit[1000], dtype=np.float32)
    halves = (words[: words.size // 2], words[words.size // 2 :])
    helper = ThreadPoolExecutor(1)

    def two_threads(parts: tuple[np.ndarray, np.ndarray]) -> None:  # numpy's sum lets go of the GIL
        other = helper.submit(parts[1].sum)
        parts[0].sum()
        other.result()

    def read_on_two_threads() -> None:  # the halves are read at once
        two_threads(halves)

    def app_on_one_thread() -> None:
        with own_thread_only():
            table.neighbours_of_vector(query, K, exclude=(1000,))

    runs = {
        "app": lambda: table.neighbours_of_vector(query, K, exclude=(1000,)),
        "read": lambda: words.sum(),
        "app1": app_on_one_thread,
    }
    # The two-thread reads take turns of their own, with a read of their own: a Python thread woken between
    # the app's queries (and the scan's helper, awake for 2 ms after each) slowed whatever ran next.
    reads = {
        "read": lambda: words.sum(),
        "read2": read_on_two_threads,
        # the pool's hand-over alone (16 words): taken off every two-thread read
        "pool": lambda: two_threads((words[:8], words[8:16])),
    }
    copy = _scanned_copy(table)
    if copy is not None:  # reading that copy's bytes once, on two threads, as the goal's read reads the stored
        copy_halves = (copy[: copy.size // 2], copy[copy.size // 2 :])
        reads["copy2"] = lambda: two_threads(copy_halves)
    if faiss is not None:
        faiss.omp_set_num_threads(os.cpu_count() or 1)
        unit = np.asarray(table.unit[:], dtype=np.float32)
        index = faiss.IndexFlatIP(unit.shape[1])
        index.add(unit)
        del unit
        runs["faiss"] = lambda: index.search(query[None, :], K + 1)
    loads = [os.getloadavg()[0]]
    cpu: dict[str, list[float]] = {}
    times = timed_in_turns(runs, rounds, cpu)
    read_times = timed_in_turns(reads, rounds)
    loads.append(os.getloadavg()[0])
    ratio = median([a / r for a, r in zip(times["app"], times["read"], strict=True)])
    read2 = [r - p for r, p in zip(read_times["read2"], read_times["pool"], strict=True)]
    ratio2 = median(times["app"]) / median(read2)  # the two sets of turns' medians
    ratio1 = median([a / r for a, r in zip(times["app1"], times["read"], strict=True)])
    helper.shutdown()
    cpu_ratio = median([a / r for a, r in zip(cpu["app"], cpu["read"], strict=True)])
    shape = f"{table.rows.shape[0]:,} x {table.rows.shape[1]:,}"
    note = (
        f"{words.nbytes / 1e6:,.0f} MB stored; {rounds} pairs; {table.search_method()}; "
        f"1-min load {min(loads):.1f}-{max(loads):.1f} over the pairs; CPU time (all threads) app "
        f"{median(cpu['app']) * 1e3:.1f} ms, read {median(cpu['read']) * 1e3:.1f} ms, median paired ratio "
        f"{cpu_ratio:.2f}x; the read on two threads {median(read2) * 1e3:.2f} ms, app/that "
        f"{ratio2:.2f}x; the app on one thread {median(times['app1']) * 1e3:.2f} ms, that/read {ratio1:.2f}x"
    )
    if "copy2" in read_times:
        copy2 = [c - p for c, p in zip(read_times["copy2"], read_times["pool"], strict=True)]
        floor = median([c / r for c, r in zip(copy2, read_times["read"], strict=True)])
        note += (
            f"; its scan's copy ({copy.nbytes / 1e6:,.0f} MB) read on two threads {median(copy2) * 1e3:.2f} "
            f"ms, that/read {floor:.2f}x"
        )
    note += f"; each two-thread read less the pool's hand-over, {median(read_times['pool']) * 1e6:.0f} us"
    if "faiss" in times:
        versus = median([a / f for a, f in zip(times["app"], times["faiss"], strict=True)])
        note += f"; faiss (all cores, float32 unit copy) {median(times['faiss']) * 1e3:.1f} ms, app/faiss {versus:.2f}x"
    table.close()
    print(f"  {name}: app {median(times['app']) * 1e3:.2f} ms, read {median(times['read']) * 1e3:.2f} ms, "
          f"ratio {ratio:.2f}x ({note})", file=sys.stderr, flush=True)  # fmt: skip
    return Row(f"one query k={K}, {name} {shape}", median(times["app"]) * 1e3, "ms", median(times["read"]) * 1e3,
               "one plain read of the stored bytes", ratio, "<= 1.15x", ratio <= 1.15, note)  # fmt: skip


def _scanned_copy(table) -> np.ndarray | None:  # type: ignore[no-untyped-def]
    """The copy sixteen rows at a time a stored table's query scans (as uint64 words), or None: it reads the
    stored bytes themselves (or a float32 table)."""
    if not table.stored or table.stored_screen.groups is None:
        return None
    words = np.asarray(table.stored_screen.groups).reshape(-1).view(np.uint8)
    return words[: words.size // 8 * 8].view(np.uint64)


def bf16_copy(folder):  # type: ignore[no-untyped-def]
    """The GPT-2-shaped folder with its table stored in bfloat16 (built once under bench/.cache/)."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    target = folder.parent / f"{folder.name}-bf16"
    if (target / "model.safetensors").is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    for file in folder.iterdir():
        if file.is_file() and file.name != "model.safetensors":
            shutil.copy(file, target / file.name)
    tensors = load_file(str(folder / "model.safetensors"))
    save_file({k: v.to(torch.bfloat16) for k, v in tensors.items()}, str(target / "model.safetensors"))
    return target


def gguf_copy(folder, type_name: str):  # type: ignore[no-untyped-def]
    """The GPT-2-shaped table as a GGUF of ``type_name`` with its tokenizer (built once under bench/.cache/).

    F16, Q8_0 and Q4_0 are the gguf package's quantisation of the rows; Q4_K, Q5_K and Q6_K random blocks with
    finite scales (``tests.gguf_fixture.quantised_rows``): the same bytes to read, which is what is timed."""
    from gguf.constants import GGMLQuantizationType

    from embedexplorer import open_table
    from tests.gguf_fixture import gpt2_vocabulary, quantised_rows, write_gguf

    qtype = GGMLQuantizationType[type_name]
    target = folder.parent / f"{folder.name}-{type_name.lower()}.gguf"
    if not target.is_file():
        table = open_table(str(folder))
        rows = np.asarray(table.rows[:], dtype=np.float32)
        tokens = list(table.vocabulary.facts.raw_tokens)
        table.close()
        stored = rows.astype(np.float16) if type_name == "F16" else quantised_rows(rows, qtype)
        write_gguf(target, stored, qtype, tokens=tokens, merges=gpt2_vocabulary()[1])
    return target


def run(argv: list[str]) -> list[Row]:
    queries = int(argv[argv.index("--queries") + 1]) if "--queries" in argv else None
    pairs = max(3, int(argv[argv.index("--pairs") + 1]) if "--pairs" in argv else 3)
    print(machine_note(), file=sys.stderr)
    rows: list[Row] = []
    if "--skip-all" not in argv:
        table = gpt2_rows()
        if "--rows" in argv:
            table = np.ascontiguousarray(table[: int(argv[argv.index("--rows") + 1])])
        threads = (int(argv[argv.index("--threads") + 1]),) if "--threads" in argv else (1, 2)
        rows += every_token(table, queries, pairs, threads)
    if "--skip-one" not in argv:
        rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else None
        only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else []
        rows += one_query(pairs, "--qwen" in argv, rounds, only, "--qwen-faiss" in argv, "--no-faiss" not in argv)
    return rows


if __name__ == "__main__":
    emit(run(sys.argv), sys.argv)
