"""Shared helpers for the benchmarks: the cached GPT-2-shaped folder, timers, subprocesses, rows.

Every figure is a ratio to a baseline measured in the same run, because the
machines these run on are shared and noisy.  Timings interleave the candidates
in a shuffled order each round and report medians.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CACHE = BENCH / ".cache"
RESULTS = BENCH / "results"
GPT2_FOLDER = CACHE / "gpt2-lmhead"
QUERY = " Paris"
K = 8

if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))


@dataclass
class Row:
    """One line of the results table: a figure, its same-run baseline, their ratio and the goal."""

    what: str
    figure: float
    unit: str
    baseline: float | None = None
    baseline_what: str = ""
    ratio: float | None = None
    goal: str = ""
    met: bool | None = None
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def gpt2_folder() -> Path:
    """The GPT-2-shaped fixture folder, built once (about 10 s) and reused by every benchmark."""
    marker = GPT2_FOLDER / "model.safetensors"
    if not marker.is_file() or not (GPT2_FOLDER / "tokenizer.json").is_file():
        from tests.gpt2_fixture import build_gpt2_folder

        print(f"building the GPT-2-shaped fixture in {GPT2_FOLDER} (once) ...", file=sys.stderr)
        build_gpt2_folder(GPT2_FOLDER, head=True)
    return GPT2_FOLDER


def compile_package() -> None:
    """Write the app's bytecode once, as installing it does, before timing new processes.

    pip compiles a wheel's modules as it installs them and the packaged app holds only
    bytecode; numpy, safetensors and tokenizers have theirs in site-packages. A checkout run
    where PYTHONDONTWRITEBYTECODE is set (this machine sets it) would compile about 70 of the
    app's modules from source at every start, 0.3-0.5 s that no installed app pays.
    """
    import compileall

    compileall.compile_dir(str(REPO / "embedexplorer"), quiet=1)


def warm_page_cache(folder: Path) -> None:
    """Read every file once so that cold-start runs compare process work, not the disk."""
    for file in folder.iterdir():
        if file.is_file():
            with open(file, "rb") as handle:
                while handle.read(16 << 20):
                    pass


def interleaved(
    candidates: dict[str, Callable[[], object]], rounds: int, warmup: int = 2, seed: int = 0
) -> dict[str, list[float]]:
    """Seconds per call of each candidate, run in a shuffled order every round."""
    rng = random.Random(seed)
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            start = time.perf_counter()
            candidates[name]()
            times[name].append(time.perf_counter() - start)
    return times


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def qt_env() -> dict[str, str]:
    """Environment for a child that opens Qt: this checkout, no Hub, offscreen without a display."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def alternating(launches: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Seconds of each launch, taking turns first so neither always runs on a warmer machine."""
    names = list(launches)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(rounds):
        for name in names if i % 2 == 0 else names[::-1]:
            times[name].append(launches[name]())
    return times


def timed_in_turns(
    runs: dict[str, Callable[[], object]], rounds: int, cpu: dict[str, list[float]] | None = None
) -> dict[str, list[float]]:
    """Seconds of each call in this process, two warm-up calls each (pages in, threads started, caches warm), then
    ``rounds`` rounds in turns, the order reversed every other round; ``cpu`` gets each call's CPU seconds."""
    for run in runs.values():
        run()
        run()
    times: dict[str, list[float]] = {key: [] for key in runs}
    if cpu is not None:
        cpu.update({key: [] for key in runs})
    for i in range(rounds):
        for key in runs if i % 2 == 0 else list(runs)[::-1]:
            began, began_cpu = time.perf_counter(), time.process_time()
            runs[key]()
            times[key].append(time.perf_counter() - began)
            if cpu is not None:
                cpu[key].append(time.process_time() - began_cpu)
    return times


def paired_ratio(times: dict[str, list[float]], subject: str, baseline: str) -> float:
    """Median over rounds of subject/baseline: a noisy round hurts both sides of its own ratio."""
    return median([a / b for a, b in zip(times[subject], times[baseline], strict=True)])


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 600) -> dict[str, object]:
    """Run ``code`` in a new interpreter; it prints one JSON object on its last line of stdout."""
    done = _run_python([sys.executable, "-c", code], "benchmark subprocess", env, timeout)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_script(path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    return _run_python([sys.executable, str(path), *args], path.name, env, timeout).stdout


def _run_python(
    argv: list[str], what: str, env: dict[str, str] | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """A new interpreter that sees this checkout, offline; a failure raises with its stderr."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", **(env or {})}
    done = subprocess.run(argv, capture_output=True, text=True, env=full_env, cwd=str(REPO), timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def machine_note() -> str:
    """CPU model, core count and memory, for the README's note on the machine."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.0f} GB RAM"
    except OSError:
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load {os.getloadavg()[0]:.2f} at start"
    import numpy as np

    return (
        f"{cpu}, {os.cpu_count()} cores{memory}{load}; Python {sys.version.split()[0]}, "
        f"numpy {np.__version__}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}"
    )


def format_table(rows: list[Row]) -> str:
    """The results as a Markdown table (the same text goes into the README)."""
    lines = [
        "| what | figure | baseline (same run) | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        figure = f"{row.figure:.4g} {row.unit}"
        baseline = "-" if row.baseline is None else f"{row.baseline:.4g} {row.unit} ({row.baseline_what})"
        if row.baseline is None and row.baseline_what:
            baseline = row.baseline_what
        ratio = "-" if row.ratio is None else f"{row.ratio:.3g}x"
        met = {True: "yes", False: "**no**", None: "-"}[row.met]
        what = row.what + (f" ({row.note})" if row.note else "")
        lines.append(f"| {what} | {figure} | {baseline} | {ratio} | {row.goal or '-'} | {met} |")
    return "\n".join(lines)


def emit(rows: list[Row], argv: list[str]) -> None:
    """Print the rows as a table, or as JSON with --json (how run_all.py collects them)."""
    if "--json" in argv:
        print(json.dumps([row.as_dict() for row in rows]))
    else:
        print(format_table(rows))
