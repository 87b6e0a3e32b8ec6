"""``embedexplorer compare A B`` as a whole process against faiss doing the same two searches in a process of its own.

The pair: two GPT-2-shaped folders (``tests/gpt2_fixture.py``: GPT-2's real tokenizer, random
weights from seeds 1 and 2, 50,257 x 768 float32 each), built once under bench/.cache/.

- **The app**: ``python -m embedexplorer compare A B --json`` from its launch to its exit:
  imports, opening both folders (tokenizers included), matching the tokens, every token's 10
  nearest in A and in B (exact), the ranks, row cosines and the summary, printed.
- **faiss**: a plain script a user would write: ``safetensors`` reads ``wte.weight`` of each
  folder as float32, L2-normalises it, ``faiss.IndexFlatIP`` (exact) adds it and searches every
  row's 11 nearest (the row itself dropped), then the two lists' overlaps. The same two
  searches, without the tokenizers, the ranks or the row cosines.

They run in turns (the order flips each pair), after one warm-up launch of each (page cache);
the figure is the median of the pairs' ratios (>= 3 pairs). Both use every core (faiss's
OpenMP default, the app's BLAS default). Each launch's wall time, CPU seconds (its own and its
children's), peak resident set (VmHWM, mapped file pages counted; the largest of the process and
its children) and the load average before and after are printed. The two answers' overlap
histograms are printed side by side: exact float64 against faiss's float32 can differ only at
near ties.

Memory goal: the app's peak at most the two tables as float32 plus one tile of scores, over an
interpreter that has imported numpy (measured here too, as the floor both processes start from).

Options: ``--pairs N`` (default 3), ``--no-warm`` (no warm-up launches).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common import CACHE, REPO, Row, emit, machine_note, median

K = 10
SEEDS = (1, 2)

FAISS_SCRIPT = """
import json, sys, time
began = time.perf_counter()
import numpy as np
import faiss
from safetensors import safe_open

k = int(sys.argv[1])
lists = []
seconds = {"read": 0.0, "search": 0.0}
for folder in sys.argv[2:]:
    start = time.perf_counter()
    with safe_open(folder + "/model.safetensors", "np") as f:
        rows = np.ascontiguousarray(f.get_tensor("wte.weight"), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    seconds["read"] += time.perf_counter() - start
    start = time.perf_counter()
    index = faiss.IndexFlatIP(rows.shape[1])
    index.add(rows)
    _, found = index.search(rows, k + 1)
    del index, rows
    own = found == np.arange(found.shape[0])[:, None]
    # The row itself is dropped (wherever ties put it); otherwise the last of the k+1.
    own[~own.any(axis=1), k] = True
    lists.append(found[~own].reshape(found.shape[0], k))
    seconds["search"] += time.perf_counter() - start
both = np.sort(np.concatenate(lists, axis=1), axis=1)
overlap = (both[:, 1:] == both[:, :-1]).sum(axis=1)
print(json.dumps({"histogram": np.bincount(overlap, minlength=k + 1).tolist(), "threads": faiss.omp_get_max_threads(),
                  "seconds": seconds, "imports_to_end": time.perf_counter() - began}))
"""

# Its own VmHWM, read inside it: a child's ru_maxrss can carry the parent's size from before its exec.
BARE_SCRIPT = "import numpy\nfrom bench.proc_memory import peak_bytes\nprint(peak_bytes())"


def pair_folders() -> tuple[Path, Path]:
    """The two GPT-2-shaped folders (same tokenizer, different random seeds), built once."""
    folders = []
    for seed in SEEDS:
        folder = CACHE / f"gpt2-seed{seed}"
        if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
            from tests.gpt2_fixture import build_gpt2_folder

            print(f"building the GPT-2-shaped folder {folder} (once) ...", file=sys.stderr)
            build_gpt2_folder(folder, head=False, seed=seed)
        folders.append(folder)
    return folders[0], folders[1]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measured(argv: list[str]) -> dict[str, object]:
    """One whole process (os.wait4 for its rusage): CPU seconds and peak RSS of it and its reaped children."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    before = load()
    out_path = CACHE / "compare-process.out"
    err_path = CACHE / "compare-process.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        began = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, cwd=str(REPO), env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - began
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed ({child.returncode}):\n{err_path.read_text()[-3000:]}")
    return {
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak": usage.ru_maxrss * 1024,
        "stdout": out_path.read_text(),
        "stderr": err_path.read_text(),
        "load": f"{before} -> {load()}",
    }


def app_argv(a: Path, b: Path) -> list[str]:
    return [sys.executable, "-m", "embedexplorer", "compare", str(a), str(b), "-k", str(K), "--json"]


def faiss_argv(a: Path, b: Path) -> list[str]:
    return [sys.executable, "-c", FAISS_SCRIPT, str(K), str(a), str(b)]


def app_histogram(stdout: str) -> list[int]:
    return list(json.loads(stdout)["summary"]["overlap_histogram"])


def app_threads(stdout: str) -> str:
    """The app's own note on the cores its searches used."""
    notes = [n for n in json.loads(stdout)["summary"]["notes"] if " cores" in n]
    return notes[0] if notes else "(no note on cores)"


def run(argv: list[str]) -> list[Row]:
    pairs = max(3, int(argv[argv.index("--pairs") + 1]) if "--pairs" in argv else 3)
    try:
        import faiss  # noqa: F401
    except ImportError:
        print("faiss-cpu is NOT installed (pip install faiss-cpu): nothing to compare against.", file=sys.stderr)
        raise SystemExit(1) from None
    print(machine_note(), file=sys.stderr)
    a, b = pair_folders()
    sides = {"app": app_argv(a, b), "faiss": faiss_argv(a, b)}
    if "--no-warm" not in argv:
        for name, side in sides.items():
            print(f"  warm-up: {name} ...", file=sys.stderr, flush=True)
            measured(side)
    bare = [int(str(measured([sys.executable, "-c", BARE_SCRIPT])["stdout"]).split()[-1]) for _ in range(3)]
    floor = median([float(x) for x in bare])
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in sides}
    for pair in range(pairs):
        order = list(sides) if pair % 2 == 0 else list(sides)[::-1]
        for name in order:
            runs[name].append(measured(sides[name]))
            got = runs[name][-1]
            print(f"  pair {pair + 1}, {name}: {got['seconds']:.1f} s wall, {got['cpu']:.1f} CPU s, "
                  f"peak {got['peak'] / 1e6:.0f} MB (load {got['load']})", file=sys.stderr, flush=True)  # fmt: skip
    app, theirs = runs["app"], runs["faiss"]
    ratio = median([x["seconds"] / y["seconds"] for x, y in zip(app, theirs, strict=True)])  # type: ignore[operator]
    cpu_ratio = median([x["cpu"] / y["cpu"] for x, y in zip(app, theirs, strict=True)])  # type: ignore[operator]
    hist_app = app_histogram(str(app[0]["stdout"]))
    faiss_out = json.loads(str(theirs[0]["stdout"]).strip().splitlines()[-1])
    tables = 2 * 50257 * 768 * 4
    from embedexplorer.core.compare.every_neighbour import TILE_BYTES

    budget = tables + TILE_BYTES
    app_peak = median([float(x["peak"]) for x in app])  # type: ignore[arg-type]
    faiss_peak = median([float(x["peak"]) for x in theirs])  # type: ignore[arg-type]
    loads = "; ".join(str(x["load"]) for x in app + theirs)
    note = (
        f"CPU seconds app {median([float(x['cpu']) for x in app]):.1f} (its children's included), faiss "  # type: ignore[arg-type]
        f"{median([float(x['cpu']) for x in theirs]):.1f}, paired ratio {cpu_ratio:.2f}x; faiss on "  # type: ignore[arg-type]
        f"{faiss_out['threads']} threads (read {faiss_out['seconds']['read']:.1f} s, search "
        f"{faiss_out['seconds']['search']:.1f} s); app: {app_threads(str(app[-1]['stdout']))}; overlap histograms "
        f"(0..{K} shared): app {hist_app}, faiss {faiss_out['histogram']}; loads (1, 5, 15 min) before -> after: "
        f"{loads}; a machine shared with other work"
    )
    memory_note = (
        f"peak RSS (VmHWM, mapped file pages counted): app {app_peak / 1e6:.0f} MB, faiss {faiss_peak / 1e6:.0f} MB, "
        f"an interpreter with numpy alone {floor / 1e6:.0f} MB; the app over that floor {(app_peak - floor) / 1e6:.0f} "
        f"MB against two float32 tables plus one tile {budget / 1e6:.0f} MB"
    )
    grown = (app_peak - floor) / budget
    return [
        Row(f"`embedexplorer compare` of two GPT-2-shaped tables, k={K}, whole process", median(
            [float(x["seconds"]) for x in app]), "s", median([float(x["seconds"]) for x in theirs]),  # type: ignore[arg-type]
            "faiss IndexFlatIP exact, the same two searches, whole process", ratio, "<= 0.6x", ratio <= 0.6, note),
        Row("peak memory of that compare process over an interpreter with numpy", (app_peak - floor) / 1e6, "MB",
            budget / 1e6, "two float32 tables plus one tile", grown, "<= 1.0x", grown <= 1.0, memory_note),
    ]  # fmt: skip


if __name__ == "__main__":
    emit(run(sys.argv), sys.argv)
