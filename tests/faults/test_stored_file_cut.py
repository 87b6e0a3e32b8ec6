"""A table searched as stored (a GGUF file's blocks, a safetensors file's bfloat16) whose file another program cuts
short while it is open: each question is refused in words, never a SIGBUS.

The table's questions check its files once before the search reads them (the first pass leaves its own check out
when it reads one of those files): this is what that single check must still catch, in a process of its own since
a missed check kills the process.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from gguf.constants import GGMLQuantizationType as Q
from safetensors.torch import save_file

from ..gguf_fixture import quantised_rows, write_gguf
from .helpers import word_level_tokenizer

ROWS, WIDTH = 4096, 256

ASK_AFTER_THE_CUT = """
import os, sys
import numpy as np
from embedexplorer import open_table
from embedexplorer.core.common.errors import EmbedExplorerError
table = open_table(sys.argv[1])
assert table.stored, "this test is about tables searched as stored"
table.neighbours(3, k=4)  # the first pass and its copies are made while the file is whole
os.truncate(sys.argv[2], 4096)
questions = {
    "neighbours": lambda: table.neighbours(5, k=4),
    "vector": lambda: table.neighbours_of_vector(np.ones(table.width, dtype=np.float32), k=4),
    "analogy": lambda: table.analogy(1, 2, 3, k=4),
    "raw": lambda: float(np.asarray(table.rows.raw).reshape(-1)[-4096:].astype(np.float64).sum()),
}
for name in sys.argv[3].split(","):
    try:
        questions[name]()
        print(name, "answered")
    except EmbedExplorerError as exc:
        print(name, "refused:", exc)
"""


def tokens() -> list[str]:
    return [f"t{i}" for i in range(ROWS)]


def bf16_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    rows = torch.from_numpy(np.random.default_rng(5).standard_normal((ROWS, WIDTH), dtype=np.float32))
    save_file({"model.embed_tokens.weight": rows.to(torch.bfloat16)}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": ROWS}), encoding="utf-8")
    spec = word_level_tokenizer({token: i for i, token in enumerate(tokens())})
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    return folder


def gguf_file(path: Path, qtype: Q) -> Path:
    rows = np.random.default_rng(6).standard_normal((ROWS, WIDTH)).astype(np.float32)
    return write_gguf(path, quantised_rows(rows, qtype), qtype, tokens=tokens())


def ask(model: Path, cut: Path, questions: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ASK_AFTER_THE_CUT, str(model), str(cut), questions],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("kind", ["bfloat16", "Q8_0", "IQ2_XXS"])
def test_every_question_on_a_cut_stored_table_is_refused_in_words(tmp_path: Path, kind: str) -> None:
    if kind == "bfloat16":
        model = bf16_folder(tmp_path / "model")
        cut = model / "model.safetensors"
    else:
        model = cut = gguf_file(tmp_path / "table.gguf", Q[kind])
    result = ask(model, cut, "neighbours,vector,analogy")
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])  # -7 would be SIGBUS
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["neighbours", "vector", "analogy"]
    for line in lines:
        assert "refused:" in line and f"{cut.name} changed on disk since the model was opened" in line, line


def test_the_trap_is_real_a_read_past_the_cut_kills_the_process(tmp_path: Path) -> None:
    """Without a check first, reading the map past the file's new end ends the process: what the checks prevent."""
    model = gguf_file(tmp_path / "table.gguf", Q.Q8_0)
    result = ask(model, model, "raw")
    assert result.returncode == -signal.SIGBUS, (result.returncode, result.stdout, result.stderr[-2000:])
