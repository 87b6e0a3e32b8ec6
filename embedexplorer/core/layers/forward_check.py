"""A check that the model runs forward here: BERT's own classes over the bundled MiniLM.

The frozen app carries torch and transformers' modelling code for the layers; this proves
they load and compute offline (``EmbedExplorer --self-test-forward`` prints one JSON line).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

SENTENCES = ("the river bank", "my bank account")
WORD = "bank"


def _cosine(a: Any, b: Any) -> float:
    return float((a @ b) / (math.sqrt(float(a @ a)) * math.sqrt(float(b @ b))))


def run() -> dict[str, object]:
    """Load the bundled MiniLM with BertModel (safetensors only) and compare "bank" in two sentences."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertModel
    from transformers.utils import logging as transformers_logging

    from ..sources.resolve import bundled_model_dir
    from .loading import no_hub_kernels

    started = time.perf_counter()
    folder = bundled_model_dir()
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    torch.set_num_threads(1)
    transformers_logging.disable_progress_bar()  # stdout carries one JSON line; stderr stays quiet
    no_hub_kernels()  # the model's own layers, never kernels from the Hub
    model = BertModel.from_pretrained(
        str(folder), use_safetensors=True, local_files_only=True, trust_remote_code=False
    )
    model.eval()
    vectors = []
    ids_of_word = []
    for sentence in SENTENCES:
        encoding = tokenizer.encode(sentence)
        place = encoding.tokens.index(WORD)
        ids_of_word.append(encoding.ids[place])
        with torch.inference_mode():
            out = model(torch.tensor([encoding.ids]), output_hidden_states=True)
        vectors.append([h[0, place].double() for h in out.hidden_states])
    cosines = [_cosine(a, b) for a, b in zip(vectors[0], vectors[1], strict=True)]
    return {
        "torch": torch.__version__,
        "layers": len(cosines) - 1,
        "same_id": ids_of_word[0] == ids_of_word[1],
        "cosine_input": round(cosines[0], 6),
        "cosine_last": round(cosines[-1], 6),
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> int:
    report: dict[str, object]
    try:
        report = run()
        last, first = float(str(report["cosine_last"])), float(str(report["cosine_input"]))
        # MiniLM has six layers; the context pulls the two "bank"s apart by the last one.
        report["ok"] = bool(report["layers"] == 6 and report["same_id"] and last < first)
    except Exception as exc:  # noqa: BLE001 - the check reports what failed, as JSON
        report = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(report), flush=True)
    return 0 if report["ok"] else 1
