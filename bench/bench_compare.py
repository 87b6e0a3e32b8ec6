"""Every token of a GPT-2-sized pair compared (50,257 x 768 each, k=10) against the plain floor of the same run.

The floor is what any exact comparison has to do: for each table, the unit rows times
themselves in blocks (``unit[block] @ unit.T``, float32 BLAS) keeping each row's top k
with numpy's ``argpartition``; the unit copies are made before the clock starts. The
engine (``core/compare``) does that and everything else: matching the tokens, the
overlaps, the rank in B of A's nearest, the row cosines and errors in float64.
Goal: at most 1.5x the floor.

Memory: the peak resident set of a new process that opens the two tables and compares
them, over its imports, against the two tables as float32 (what the floor holds) and one
block of scores; goal at most 1.3x. (It is measured apart from the timing, whose process
also holds the floor's float32 copies.) ``--qwen`` runs the
same on a Qwen2-7B-sized pair (152,064 x 3,584), which takes hours on two cores.
``--queries N`` compares only the first N tokens (each still searched among all rows),
in the floor and in the engine alike, for a shorter run on a busy machine.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench.common import CACHE, Row, emit, gpt2_folder, machine_note, run_python

K = 10


def floor_rows(count: int) -> int:
    """Query rows per block of the floor: 96 MB of float32 scores (what the engine's blocks were before tiles)."""
    return int(max(16, min(2048, (96 << 20) // (4 * count))))


def floor(rows_a: np.ndarray, rows_b: np.ndarray, k: int, per_block: int, queries: int) -> float:
    """Seconds for the two plain passes (unit copies made first, off the clock)."""
    units = [r / np.linalg.norm(r, axis=1, keepdims=True) for r in (rows_a, rows_b)]
    began = time.perf_counter()
    for unit in units:
        for start in range(0, queries, per_block):
            scores = unit[start : min(start + per_block, queries)] @ unit.T
            lines = np.arange(scores.shape[0])
            scores[lines, lines + start] = -np.inf
            np.argpartition(scores, -k, axis=1)[:, -k:]
    return time.perf_counter() - began


# The comparison alone in a new process: its peak resident set over its imports.
MEMORY_CHILD = """
import json
import numpy as np
from bench.proc_memory import peak_bytes, resident_bytes
from embedexplorer import open_table
from embedexplorer.core.compare.comparison import compare_tables

before = resident_bytes()
a, b = open_table({a!r}), open_table({b!r})
count = {count}
words = None if count == a.rows.shape[0] else np.arange(count)
result = compare_tables(a, b, {k}, words=words)
print(json.dumps({{"grown": peak_bytes() - before, "overlap": float(result.overlap.mean())}}))
"""


def pair_paths(qwen: bool) -> tuple[str, str]:
    """Table A (a model folder) and table B (A plus noise, as an F32 GGUF of the same vocabulary)."""
    from tests.gguf_fixture import gpt2_vocabulary, write_gguf

    if qwen:
        from bench.large_fixture import qwen_folder

        folder = qwen_folder()
    else:
        folder = gpt2_folder()
    from embedexplorer import open_table

    table = open_table(str(folder))
    target = CACHE / f"{folder.name}-noisy.gguf"
    if not target.is_file():
        from gguf.constants import GGMLQuantizationType

        rows = np.asarray(table.rows[:], dtype=np.float32)
        rng = np.random.default_rng(0)
        noisy = rows + 0.3 * rows.std() * rng.standard_normal(rows.shape, dtype=np.float32)
        tokens = list(table.vocabulary.facts.raw_tokens)
        merges = gpt2_vocabulary()[1] if not qwen else None
        write_gguf(target, noisy, GGMLQuantizationType.F32, tokens=tokens, merges=merges)
    table.close()
    return str(folder), str(target)


def run(qwen: bool = False, queries: int | None = None) -> list[Row]:
    from embedexplorer import open_table
    from embedexplorer.core.compare.comparison import compare_tables
    from embedexplorer.core.compare.every_neighbour import TILE_BYTES

    path_a, path_b = pair_paths(qwen)
    a, b = open_table(path_a), open_table(path_b)
    rows_a, rows_b = np.asarray(a.rows[:], dtype=np.float32), np.asarray(b.rows[:], dtype=np.float32)
    tables = rows_a.nbytes + rows_b.nbytes
    block = TILE_BYTES  # one tile of scores
    count = min(queries or rows_a.shape[0], rows_a.shape[0])
    words = None if count == rows_a.shape[0] else np.arange(count)
    floor_seconds = [floor(rows_a, rows_b, K, floor_rows(rows_a.shape[0]), count)]
    began = time.perf_counter()
    result = compare_tables(a, b, K, words=words)
    engine_seconds = time.perf_counter() - began
    floor_seconds.append(floor(rows_a, rows_b, K, floor_rows(rows_a.shape[0]), count))
    base = float(np.median(floor_seconds))
    shape = f"{rows_a.shape[0]:,} x {rows_a.shape[1]:,}" + ("" if words is None else f", first {count:,} tokens")
    del rows_a, rows_b
    storages = f"storage {a.storage_note()} and {b.storage_note()}"
    a.close()
    b.close()
    alone = run_python(MEMORY_CHILD.format(a=path_a, b=path_b, count=count, k=K), timeout=6 * 3600)
    grown = int(alone["grown"])  # type: ignore[call-overload]
    memory_ratio = grown / (tables + block)
    note = f"mean overlap@{K} {result.overlap.mean():.2f}; {machine_note()}"
    return [
        Row(f"compare every token, {shape} pair, k={K}", engine_seconds, "s", base, "plain floor (two passes)",
            engine_seconds / base, "<= 1.5x", engine_seconds / base <= 1.5, note),
        Row("peak memory of a process that opens both and compares", grown / 1e6, "MB", (tables + block) / 1e6,
            "two float32 tables plus one block", memory_ratio, "<= 1.3x", memory_ratio <= 1.3,
            storages),
    ]  # fmt: skip


if __name__ == "__main__":
    queries = int(sys.argv[sys.argv.index("--queries") + 1]) if "--queries" in sys.argv else None
    emit(run(qwen="--qwen" in sys.argv, queries=queries), sys.argv)
