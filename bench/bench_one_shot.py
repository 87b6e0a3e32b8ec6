"""One answer from the command line against a plain numpy script doing the same from the same files.

Whole processes, in turns: ``embedexplorer neighbours " Paris" -k 10 --json``, ``cosine`` and
``tokens`` on the GPT-2-shaped float32 folder, each beside a script that imports numpy,
safetensors and tokenizers, maps the same model.safetensors, loads the same tokenizer.json
and prints the same answer as JSON (the neighbours: the rows' lengths, one product with
the query's unit row, argpartition; the tokens: the ids, and how many fit the position
table, read from the header as the app reads it). The page cache is warm for both. Each figure is the
median of the rounds' paired ratios (app / script), with the load average of each round.
Goal: 1.0x or under.
Both sides start from compiled bytecode, as installed packages do (``common.compile_package``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.common import REPO, Row, compile_package, emit, gpt2_folder, median, warm_page_cache

ROUNDS = 9  # the machine is shared: more pairs steady the median

SCRIPT = r"""
import json, sys
import numpy as np
from safetensors import safe_open
from tokenizers import Tokenizer

folder, command, words = sys.argv[1], sys.argv[2], sys.argv[3:]
tokenizer = Tokenizer.from_file(folder + "/tokenizer.json")
if command == "tokens":  # the app says how many tokens have a position row: the header's shape
    encoding = tokenizer.encode(words[0], add_special_tokens=False)
    with safe_open(folder + "/model.safetensors", "np") as weights:
        positions = weights.get_slice("transformer.wpe.weight").get_shape()[0]
    count = len(encoding.ids)
    print(json.dumps({"tokens": [{"id": i, "token": t} for i, t in zip(encoding.ids, encoding.tokens)],
                      "count": count, "fits": min(count, positions), "position_rows": positions}))
    sys.exit()
with safe_open(folder + "/model.safetensors", "np") as weights:
    rows = weights.get_tensor("transformer.wte.weight")
ids = [tokenizer.encode(w, add_special_tokens=False).ids[0] for w in words]
if command == "cosine":
    a, b = rows[ids[0]].astype(np.float64), rows[ids[1]].astype(np.float64)
    print(json.dumps({"cosine": float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))}))
    sys.exit()
lengths = np.sqrt(np.einsum("ij,ij->i", rows, rows))
query = rows[ids[0]] / lengths[ids[0]]
scores = rows @ query / lengths
scores[ids[0]] = -np.inf
best = np.argpartition(scores, -10)[-10:]
best = best[np.argsort(-scores[best])]
print(json.dumps({"neighbours": [{"id": int(i), "token": tokenizer.id_to_token(int(i)), "cosine": float(scores[i])}
                                 for i in best]}))
"""

COMMANDS = {
    "neighbours": (["neighbours", " Paris", "-k", "10"], [" Paris"]),
    "cosine": (["cosine", " Paris", " France"], [" Paris", " France"]),
    "tokens": (["tokens", "The capital of France is Paris"], ["The capital of France is Paris"]),
}


def _timed(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    began = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env, cwd=str(REPO), timeout=600)
    return time.perf_counter() - began


def run(rounds: int = ROUNDS) -> list[Row]:
    folder = gpt2_folder()
    warm_page_cache(folder)
    compile_package()  # the bytecode an install would hold
    out = []
    for name, (app_args, script_args) in COMMANDS.items():
        app = [sys.executable, "-m", "embedexplorer", *app_args, "--model", str(folder), "--json"]
        script = [sys.executable, "-c", SCRIPT, str(folder), name, *script_args]
        _timed(app), _timed(script)  # warm both (imports, the tokenizer's files)
        apps, scripts, loads = [], [], []
        for i in range(rounds):
            if i % 2 == 0:
                apps.append(_timed(app))
                scripts.append(_timed(script))
            else:
                scripts.append(_timed(script))
                apps.append(_timed(app))
            loads.append(f"{os.getloadavg()[0]:.1f}")
        ratio = median([a / s for a, s in zip(apps, scripts, strict=True)])
        out.append(Row(f"`embedexplorer {name}` on the GPT-2-shaped float32 folder, whole process", median(apps),
                       "s", median(scripts), "a numpy script doing the same from the same files", ratio,
                       "<= 1.0x", ratio <= 1.0, f"median of {rounds} paired ratios; load per round "
                       + ", ".join(loads)))  # fmt: skip
    return out


if __name__ == "__main__":
    emit(run(), sys.argv)
