"""Table-only download against a full download of the GPT-2-shaped fixture, through a loopback Hub.

The Hub look-alike of the tests (``tests/faults/helpers.py``) serves the fixture as
``openai-community/gpt2``: small files from the Hub, weights by a redirect to a
second loopback host, ranges answered with 206. It counts every body byte it
sends, so the byte figures are measured on the server's side.

- Bytes: ``embedexplorer info --download`` (the table only) against
  ``--download=full`` (every safetensors file and the small files), each into an
  empty cache; both are also set against the checkpoint's size.
- Shards: the same model saved as four shards; which shards were read beyond their
  header (the goal: only those holding the tables).
- Time to first neighbours, opening excluded: in new processes, ``open_table`` on
  the table-only folder and on the full download, then the clock runs for the
  first ``neighbours`` call. The two take turns, the files are read once before,
  and the median of the per-round ratios is reported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import CACHE, QUERY, REPO, K, Row, alternating, emit, gpt2_folder, median, paired_ratio

GPT2 = "openai-community/gpt2"
ROUNDS = 9
SHARDED_FOLDER = CACHE / "gpt2-lmhead-4-shards"

FIRST_NEIGHBOURS = """
import json, time
from embedexplorer import open_table
table = open_table({repo!r})
start = time.perf_counter()
table.neighbours({query!r}, k={k})
print(json.dumps({{"seconds": time.perf_counter() - start, "folder": str(table.folder)}}))
"""


def sharded_folder() -> Path:
    """The fixture saved as four shards (built once, reused)."""
    if not (SHARDED_FOLDER / "model.safetensors.index.json").is_file():
        from tests.gpt2_fixture import build_gpt2_folder

        print(f"building the four-shard fixture in {SHARDED_FOLDER} (once) ...", file=sys.stderr)
        build_gpt2_folder(SHARDED_FOLDER, max_shard_size="150MB")
    return SHARDED_FOLDER


def download(folder: Path, home: Path, how: str) -> tuple[dict[str, int], float]:
    """Bytes the Hub sent per file and the seconds ``embedexplorer info --download[=full]`` took."""
    from tests.faults.helpers import fake_hub

    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(home / "hf"),
        "EMBEDEXPLORER_CACHE_DIR": str(home / "app"),
    }
    flag = "--download" if how == "table" else "--download=full"
    with fake_hub(GPT2, folder) as hub:
        env["HF_ENDPOINT"] = hub.url
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "embedexplorer", "info", "--json", "--model", GPT2, flag],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(REPO),
            timeout=900,
        )
        seconds = time.perf_counter() - start
        sent = dict(hub.sent)
    if done.returncode != 0:
        raise RuntimeError(f"download ({how}) failed: {done.stderr.strip()}")
    facts = json.loads(done.stdout)
    if facts["model_weights"] != 124439808:
        raise RuntimeError(f"download ({how}) counts {facts['model_weights']:,} weights, not 124,439,808")
    return sent, seconds


def header_bytes(file: Path) -> int:
    with open(file, "rb") as handle:
        return 8 + int.from_bytes(handle.read(8), "little")


def first_neighbours(homes: dict[str, Path]) -> dict[str, list[float]]:
    code = FIRST_NEIGHBOURS.format(repo=GPT2, query=QUERY, k=K)

    def launch(home: Path, expect: str) -> float:
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(home / "hf"),
            "EMBEDEXPLORER_CACHE_DIR": str(home / "app"),
        }
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(REPO), timeout=600
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        if expect not in answer["folder"]:  # each side must open its own download
            raise RuntimeError(f"opened {answer['folder']}, expected a folder under {expect}")
        return float(answer["seconds"])

    return alternating(
        {
            "table": lambda: launch(homes["table"], str(homes["table"] / "app")),
            "full": lambda: launch(homes["full"], str(homes["full"] / "hf")),
        },
        ROUNDS,
    )


def main(argv: list[str]) -> None:
    folder = gpt2_folder()
    checkpoint = (folder / "model.safetensors").stat().st_size
    scratch = Path(tempfile.mkdtemp(prefix="ee-bench-download-"))
    rows: list[Row] = []
    try:
        homes = {how: scratch / how for how in ("table", "full")}
        table_sent, table_seconds = download(folder, homes["table"], "table")
        full_sent, full_seconds = download(folder, homes["full"], "full")
        table_total, full_total = sum(table_sent.values()), sum(full_sent.values())
        rows.append(
            Row(
                "bytes sent by the Hub, table-only download of GPT-2 (server side)",
                table_total / 1e6,
                "MB",
                full_total / 1e6,
                "--download=full",
                table_total / full_total,
                "<= 0.33x",
                table_total <= 0.33 * full_total,
                note=f"{table_total / checkpoint:.3f}x the {checkpoint / 1e6:.0f} MB checkpoint",
            )
        )
        rows.append(
            Row(
                "download time through the loopback Hub, table-only",
                table_seconds,
                "s",
                full_seconds,
                "--download=full",
                table_seconds / full_seconds,
                "report",
                None,
            )
        )

        for file in folder.glob("*"):  # both sides read the weights from the page cache
            if file.is_file():
                file.read_bytes()
        times = first_neighbours(homes)
        ratio = paired_ratio(times, "table", "full")
        rounds = [a / b for a, b in zip(times["table"], times["full"], strict=True)]
        rows.append(
            Row(
                "first neighbours after opening, table-only folder (opening excluded)",
                median(times["table"]) * 1e3,
                "ms",
                median(times["full"]) * 1e3,
                "the full download's folder",
                ratio,
                "<= 1.2x",
                ratio <= 1.2,
                note=f"per-round ratios {min(rounds):.2f}x-{max(rounds):.2f}x",
            )
        )

        shards = sharded_folder()
        sharded_sent, _ = download(shards, scratch / "shards", "table")
        names = sorted(p.name for p in shards.glob("model-*.safetensors"))
        beyond = [n for n in names if sharded_sent.get(n, 0) > header_bytes(shards / n)]
        index = json.loads((shards / "model.safetensors.index.json").read_text())["weight_map"]
        holding = sorted({index["transformer.wte.weight"], index["transformer.wpe.weight"]})
        rows.append(
            Row(
                "four-shard GPT-2, shards read beyond their header",
                len(beyond),
                "of 4",
                None,
                f"shards holding the token / position table: {', '.join(holding)}",
                None,
                "only those",
                beyond == holding,
                note=f"{sum(sharded_sent.values()) / 1e6:.1f} MB sent in all",
            )
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    emit(rows, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
