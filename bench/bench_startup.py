"""Cold start to first neighbours and peak memory, each measured in new processes.

Cold start: wall time from launching ``python`` to printing the first
neighbours of " Paris", for the public API and for the chapter's way
(``GPT2LMHeadModel.from_pretrained`` and its tokenizer, then the table and the
snippet).  The two are launched alternately, the files are read once before so
the page cache is warm for both, and the medians are compared.

Peak memory: in a fresh process, the high-water mark of resident memory
(VmHWM, which counts mapped file pages too) after importing the engine is the
baseline; the high-water mark after ``open_table`` and the first query, minus
that baseline, is compared with the table's bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.common import QUERY, REPO, K, Row, alternating, emit, gpt2_folder, median, warm_page_cache

ROUNDS = 5

OURS = """
from embedexplorer import open_table
table = open_table({folder!r})
print([n.id for n in table.neighbours({query!r}, k={k}).neighbours])
"""

CHAPTER = """
import torch
from transformers import AutoTokenizer, GPT2LMHeadModel
tokenizer = AutoTokenizer.from_pretrained({folder!r})
model = GPT2LMHeadModel.from_pretrained({folder!r})
table = model.transformer.wte.weight.detach()
row = tokenizer.encode({query!r})[0]
with torch.no_grad():
    unit = table / table.norm(dim=1, keepdim=True)
    scores, ids = (unit @ unit[row]).topk({k} + 1)
print([int(i) for i in ids if int(i) != row][:{k}])
"""

MEMORY = """
import json

from bench.proc_memory import peak_bytes as hwm

from embedexplorer.core.tables.opening import open_table
before = hwm()
table = open_table({folder!r})
table.neighbours({query!r}, k={k})
print(json.dumps({{"before": before, "after": hwm(), "table_bytes": int(table.rows.nbytes)}}))
"""


def _launch(code: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(REPO), timeout=600
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"cold-start process failed:\n{done.stderr[-3000:]}")
    return elapsed, done.stdout.strip().splitlines()[-1]


def cold_start(rounds: int = ROUNDS) -> Row:
    folder = str(gpt2_folder())
    warm_page_cache(gpt2_folder())
    ours = OURS.format(folder=folder, query=QUERY, k=K)
    chapter = CHAPTER.format(folder=folder, query=QUERY, k=K)
    _, first_ours = _launch(ours)  # warm-up: bytecode caches, shared libraries
    _, first_chapter = _launch(chapter)
    if first_ours != first_chapter:
        raise RuntimeError(f"the two ways disagree: {first_ours} vs {first_chapter}")
    times = alternating({"ours": lambda: _launch(ours)[0], "chapter": lambda: _launch(chapter)[0]}, rounds)
    ratio = median(times["ours"]) / median(times["chapter"])
    return Row(
        "cold start to first neighbours, new process",
        median(times["ours"]),
        "s",
        median(times["chapter"]),
        "GPT2LMHeadModel.from_pretrained + tokenizer + snippet",
        ratio,
        "<= 0.35x",
        ratio <= 0.35,
        f"median of {rounds} alternating launches each, page cache warm",
    )


def peak_memory(rounds: int = 3) -> Row:
    import json

    code = MEMORY.format(folder=str(gpt2_folder()), query=QUERY, k=K)
    samples = [json.loads(_launch(code)[1]) for _ in range(rounds)]
    extra = median([s["after"] - s["before"] for s in samples])
    table_bytes = samples[0]["table_bytes"]
    before = median([s["before"] for s in samples])
    ratio = extra / table_bytes
    mib = 1024 * 1024
    return Row(
        "peak memory with the table loaded, above the process baseline",
        extra / mib,
        "MiB",
        table_bytes / mib,
        "table bytes",
        ratio,
        "<= 2.2x",
        ratio <= 2.2,
        f"VmHWM, fresh process; baseline after imports {before / mib:.0f} MiB; "
        f"peak {(before + extra) / mib:.0f} MiB",
    )


def run() -> list[Row]:
    return [cold_start(), peak_memory()]


if __name__ == "__main__":
    emit(run(), sys.argv)
