"""Run every benchmark, print one table and write bench/results/latest.json.

    python bench/run_all.py                  # everything (about 10 minutes)
    python bench/run_all.py --only query,startup

Each benchmark runs in its own process, one after another, so none of them
shares a BLAS pool, a Qt application or a page of memory with another.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make "bench" importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, RESULTS, Row, format_table, gpt2_folder, machine_note  # noqa: E402

BENCHMARKS = {
    "query": "bench.bench_query",
    "startup": "bench.bench_startup",
    "launch": "bench.bench_launch",
    "stall": "bench.bench_stall",
    "scatter": "bench.bench_scatter",
    "map_page": "bench.bench_map_page",
    "lanes": "bench.bench_lanes",
    # Qwen2-7B-shaped bfloat16 folder and Q4_K GGUF (1.4 GB of fixtures, built once)
    "large": "bench.bench_large",
    "direction": "bench.bench_direction",
    # t-SNE of 10,000 rows, twice (ours and openTSNE bare): several minutes on a busy machine
    "projections": "bench.bench_projections",
    "layers": "bench.bench_layers",
    "download": "bench.bench_download",
    # 500 fake models (HF cache, Ollama, LM Studio) listed by File > Local models
    "local_models": "bench.bench_local_models",
    # vocabulary health on the Qwen2-7B-shaped folder (built once with "large"): about 3 minutes
    "health": "bench.bench_health",
    # the check with the model: 20 repeat prompts 8 a pass against 1 a pass, GPT-2's shape
    "repeat_check": "bench.bench_repeat_check",
    # every token's neighbours and one query against faiss-cpu (a bench-only extra: .[bench])
    "faiss": "bench.bench_faiss",
    # `embedexplorer compare` of two GPT-2-shaped tables against a faiss script, whole processes (faiss-cpu)
    "compare_process": "bench.bench_compare_process",
    # `embedexplorer neighbours/cosine/tokens` against a numpy script, whole processes
    "one_shot": "bench.bench_one_shot",
}


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO)
    return done.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated subset of: " + ", ".join(BENCHMARKS))
    parser.add_argument("--output", default=str(RESULTS / "latest.json"), help="where to write the JSON")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()] or list(BENCHMARKS)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")

    gpt2_folder()  # build the fixture once, before any clock starts
    note = machine_note()
    rows: list[Row] = []
    failures: dict[str, str] = {}
    seconds: dict[str, float] = {}
    for name in chosen:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", BENCHMARKS[name], "--json"], capture_output=True, text=True, cwd=REPO
        )
        seconds[name] = round(time.perf_counter() - start, 1)
        lines = [line for line in done.stdout.strip().splitlines() if line.startswith("[")]
        if done.returncode != 0 or not lines:
            failures[name] = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            print(f"  {name} failed: {failures[name]}", file=sys.stderr)
            continue
        rows.extend(Row(**row) for row in json.loads(lines[-1]))

    print(f"Machine: {note}\n")
    print(format_table(rows))
    missed = [row.what for row in rows if row.met is False]
    print(f"\n{sum(row.met is True for row in rows)} goals met, {len(missed)} not met", end="")
    print(f", {len(failures)} benchmark(s) failed: {', '.join(failures)}" if failures else "")

    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(
        json.dumps(
            {
                "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "commit": _commit(),
                "machine": note,
                "seconds": seconds,
                "rows": [row.as_dict() for row in rows],
                "failures": failures,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"JSON written to {output}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
