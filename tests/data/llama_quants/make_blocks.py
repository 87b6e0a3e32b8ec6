"""Write blocks.json.gz: token-table rows as llama.cpp's own quantizer stored them, and llama.cpp's dequantisation.

For each file bench/make_llama_quants.py makes (MiniLM's Q4_K_M with its table in Q8_0, its
--pure file in Q5_0, the GPT-2-shaped fixture's Q4_K_M in Q6_K and with its table in Q4_K), 32
rows of the token table: their stored blocks (base64), and the SHA-256 of the float32 rows
llama.cpp's C code gives for them (the quantizer asked for F32 with allow_requantize).
tests/core/test_llama_quant_blocks.py checks that the app reads the same numbers from them.

Needs llama-cpp-python 0.3.36 (installed; not in CI) and the files of a run of
``python3 -m bench.make_llama_quants``:

    python3 tests/data/llama_quants/make_blocks.py
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2])]  # this checkout's package and bench

from bench.make_llama_quants import OUT, quantize, token_table  # noqa: E402

FILES = ("minilm-Q4_K_M", "minilm-Q4_K_M-pure", "gpt2-Q4_K_M", "gpt2-Q4_K_M-token-embd-Q4_K")
ROWS = 32


def main() -> None:
    tables = {}
    for name in FILES:
        path = OUT / f"{name}.gguf"
        stored = token_table(path)
        raw = np.asarray(stored.data, dtype=np.uint8)
        ids = np.linspace(0, raw.shape[0] - 1, ROWS).round().astype(np.int64)
        by_llama = quantize(path, OUT / f"{name}.f32-by-llama.gguf", ftype="F32")
        f32_path = Path(str(by_llama["file"]))
        rows = np.asarray(token_table(f32_path).data, dtype="<f4")[ids]
        f32_path.unlink()
        tables[name] = {
            "type": stored.tensor_type.name,
            "width": int(stored.shape[0]),
            "ids": ids.tolist(),
            "blocks": base64.b64encode(np.ascontiguousarray(raw[ids]).tobytes()).decode(),
            "llama_cpp_f32_sha256": hashlib.sha256(np.ascontiguousarray(rows).tobytes()).hexdigest(),
        }
        print(name, tables[name]["type"], raw.shape)
    with gzip.open(HERE / "blocks.json.gz", "wt", encoding="utf-8") as out:
        json.dump({"llama_cpp_python": "0.3.36", "tables": tables}, out)


if __name__ == "__main__":
    main()
