"""The check with the model: 20 candidates run forward 8 at a time against one at a time, on GPT-2's shape.

    python bench/bench_repeat_check.py

Every repeat prompt has the same length, so the prompts run forward together without padding
(``repeat_check.BATCH``). The baseline asks the same 20 tokens one forward pass each; both give
the same probabilities. Pairs run interleaved; the ratio is the median of the pairs' ratios,
printed with the load average. In-process (the window's model process does the same work).
"""

from __future__ import annotations

import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from bench.common import Row, emit, gpt2_folder, machine_note

PAIRS = 3
CANDIDATES = 20


def main(argv: list[str]) -> None:
    from embedexplorer import open_table
    from embedexplorer.core.health.repeat_check import BATCH, repeat_prompts
    from embedexplorer.core.layers.loading import load_layer_model

    folder = gpt2_folder()
    table = open_table(str(folder))
    model = load_layer_model(folder)
    ids = list(range(1000, 1000 + CANDIDATES))
    prompts = repeat_prompts(lambda text: [t.id for t in table.encode(text)], model.prefix, ids)
    load_before = os.getloadavg()[0]
    batched, single, ratios = [], [], []
    for pair in range(PAIRS):
        order = [("batched", BATCH), ("single", 1)] if pair % 2 == 0 else [("single", 1), ("batched", BATCH)]
        found: dict[str, np.ndarray] = {}
        taken: dict[str, float] = {}
        for name, batch in order:
            start = time.perf_counter()
            found[name] = model.repeat_probabilities(prompts, ids, batch)
            taken[name] = time.perf_counter() - start
        assert np.allclose(found["batched"], found["single"], rtol=1e-4)
        batched.append(taken["batched"])
        single.append(taken["single"])
        ratios.append(taken["batched"] / taken["single"])
    load_after = os.getloadavg()[0]
    pairs = ", ".join(f"{r:.2f}" for r in ratios)
    note = f"load {load_before:.1f} -> {load_after:.1f}; {machine_note()}; pairs {pairs}"
    emit(
        [
            Row(
                f"repeat check, {CANDIDATES} tokens, {BATCH} a pass",
                float(np.median(batched)),
                "s",
                baseline=float(np.median(single)),
                baseline_what="one pass a token",
                ratio=float(np.median(ratios)),
                note=note,
            )
        ],
        argv,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
