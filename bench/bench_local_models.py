"""Listing the models on a machine with 500 of them (File > Local models, ``embedexplorer models``).

A fake machine is built under bench/.cache once: 150 Hugging Face cache repos (100 safetensors
snapshots, 50 GGUF repos), 200 Ollama models (manifests, config layers, blobs) and 150
LM Studio files (some split in three parts), each GGUF a real header with a 32,000-token
vocabulary (hard links to one file, so the fixture stays small).  The listing runs in a new
process, its imports not counted, timed in turns with the baseline: a bare ``os.walk`` and
``stat`` of the same folders, in a process of its own.  Goal: under 1 s.

    python -m bench.bench_local_models
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from pathlib import Path

from bench.common import CACHE, Row, emit, median, run_python

MACHINE = CACHE / "local-models-500"
ROUNDS = 5

LIST_CHILD = """
import json, time
from embedexplorer.core.sources.discovery import local_models
began = time.perf_counter()
models = local_models()
seconds = time.perf_counter() - began
print(json.dumps({"seconds": seconds, "count": len(models), "missing": sum(1 for m in models if m.missing),
                  "typed": sum(1 for m in models if m.storage)}))
"""
WALK_CHILD = """
import json, os, time
began = time.perf_counter()
count = 0
for root in {roots!r}:
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.stat(os.path.join(folder, name))
            count += 1
print(json.dumps({{"seconds": time.perf_counter() - began, "files": count}}))
"""


def _gguf_header(path: Path) -> None:
    """A real GGUF of a 32,000-token vocabulary and one small table, written by the gguf package."""
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("bench model")
    writer.add_context_length(4096)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"tok{i}" for i in range(32_000)])
    writer.add_token_scores([0.0] * 32_000)
    writer.add_tensor("token_embd.weight", np.zeros((32, 64), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _safetensors(path: Path) -> None:
    header = json.dumps({"model.embed_tokens.weight": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]}})
    raw = header.encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(64))


def build_machine(root: Path) -> dict[str, str]:
    """The fake machine (built once); returns the environment that points the listing at it."""
    env = {
        "HOME": str(root / "home"),
        "OLLAMA_MODELS": str(root / "ollama"),
        "HF_HUB_CACHE": str(root / "hf-cache"),
    }
    if (root / "done").is_file():
        return env
    root.mkdir(parents=True, exist_ok=True)
    template = root / "template.gguf"
    _gguf_header(template)
    cache = root / "hf-cache"
    for i in range(150):
        repo = cache / f"models--org{i % 17}--model-{i}"
        revision = f"{i:040x}"
        snapshot = repo / "snapshots" / revision
        snapshot.mkdir(parents=True, exist_ok=True)
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(revision, encoding="utf-8")
        if i < 100:
            (snapshot / "config.json").write_text(json.dumps({"model_type": "llama"}), encoding="utf-8")
            _safetensors(snapshot / "model.safetensors")
            (snapshot / "tokenizer.json").write_text("{}", encoding="utf-8")
        else:
            os.link(template, snapshot / f"model-{i}-Q4_K_M.gguf")
    ollama = root / "ollama"
    (ollama / "blobs").mkdir(parents=True, exist_ok=True)
    for i in range(200):
        digest = "sha256:" + hashlib.sha256(f"model {i}".encode()).hexdigest()
        os.link(template, ollama / "blobs" / digest.replace(":", "-"))
        config = json.dumps({"model_format": "gguf", "file_type": "Q4_K_M"}).encode()
        config_digest = "sha256:" + hashlib.sha256(config + str(i).encode()).hexdigest()
        (ollama / "blobs" / config_digest.replace(":", "-")).write_bytes(config)
        manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / f"model{i // 4}" / f"tag{i % 4}"
        manifest.parent.mkdir(parents=True, exist_ok=True)
        layers = [{"mediaType": "application/vnd.ollama.image.model", "digest": digest, "size": 1}]
        config_layer = {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": config_digest}
        manifest.write_text(json.dumps({"schemaVersion": 2, "config": config_layer, "layers": layers}))
    lmstudio = root / "home" / ".lmstudio" / "models"
    for i in range(150):
        folder = lmstudio / f"pub{i % 9}" / f"model-{i}-GGUF"
        folder.mkdir(parents=True, exist_ok=True)
        if i % 10 == 0:  # a split model: three parts, listed once
            for part in range(1, 4):
                os.link(template, folder / f"model-{i}-Q4_K_M-{part:05d}-of-00003.gguf")
        else:
            os.link(template, folder / f"model-{i}-Q4_K_M.gguf")
    (root / "done").write_text("built", encoding="utf-8")
    return env


def run() -> list[Row]:
    env = build_machine(MACHINE)
    roots = [env["HF_HUB_CACHE"], env["OLLAMA_MODELS"], str(Path(env["HOME"]) / ".lmstudio")]
    run_python(LIST_CHILD, env=env)  # warm the page cache
    listings, walks = [], []
    for _ in range(ROUNDS):
        listings.append(run_python(LIST_CHILD, env=env))
        walks.append(run_python(WALK_CHILD.format(roots=roots), env=env))
    seconds = median([float(r["seconds"]) for r in listings])  # type: ignore[arg-type]
    walk = median([float(w["seconds"]) for w in walks])  # type: ignore[arg-type]
    last = listings[-1]
    return [
        Row(
            "list the models of a machine with 500 (HF cache, Ollama, LM Studio)",
            seconds,
            "s",
            walk,
            "os.walk + stat of the same folders",
            seconds / walk,
            "< 1 s",
            seconds < 1,
            f"{last['count']} models listed, {last['typed']} with a storage type; "
            f"{walks[-1]['files']} files walked by the baseline",
        )
    ]


if __name__ == "__main__":
    emit(run(), sys.argv)
