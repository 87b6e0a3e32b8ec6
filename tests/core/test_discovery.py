"""Models already on disk: Ollama manifests and blobs, LM Studio files, the HF cache."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer import open_table
from embedexplorer.core.common.errors import ModelNotFoundError
from embedexplorer.core.sources.discovery import local_models

from ..gguf_fixture import write_gguf


def fake_ollama(root: Path, gguf_file: Path, name: str = "tiny", tag: str = "latest", *, blob: bool = True) -> Path:
    """Lay a GGUF out as Ollama stores it: a manifest naming layers by digest, blobs by digest."""
    digest = "sha256:" + "ab" * 32
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.model", "digest": digest, "size": gguf_file.stat().st_size},
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "cd" * 32, "size": 10},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}), encoding="utf-8")
    (root / "blobs").mkdir(exist_ok=True)
    if blob:
        shutil.copy(gguf_file, root / "blobs" / digest.replace(":", "-"))
    return manifest


@pytest.fixture()
def small_gguf(tmp_path: Path) -> Path:
    rows = np.random.default_rng(0).standard_normal((500, 64)).astype(np.float16)
    return write_gguf(tmp_path / "small.gguf", rows, Q.F16)


def test_an_ollama_model_opens_by_name(tmp_path: Path, small_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ollama"
    fake_ollama(root, small_gguf)
    fake_ollama(root, small_gguf, tag="q4")
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    table = open_table("ollama:tiny")
    assert table.name == "ollama:tiny" and table.rows.shape == (500, 64)
    direct = open_table(str(small_gguf))
    assert [n.id for n in table.neighbours(3).neighbours] == [n.id for n in direct.neighbours(3).neighbours]
    assert open_table("ollama:tiny:q4").rows.shape == (500, 64)
    listed = {m.spec: m for m in local_models() if m.kind == "ollama"}
    assert set(listed) == {"ollama:tiny:latest", "ollama:tiny:q4"}
    assert listed["ollama:tiny:latest"].size_bytes == small_gguf.stat().st_size


def test_ollama_faults_are_one_sentence(tmp_path: Path, small_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ollama"
    fake_ollama(root, small_gguf, name="gone", blob=False)
    tensors = root / "manifests" / "registry.ollama.ai" / "library" / "split" / "latest"
    tensors.parent.mkdir(parents=True)
    layer = {"mediaType": "application/vnd.ollama.image.tensor", "digest": "sha256:" + "ef" * 32, "size": 1}
    tensors.write_text(json.dumps({"layers": [layer]}), encoding="utf-8")
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    with pytest.raises(ModelNotFoundError, match="points to the blob sha256:abab.*which is missing"):
        open_table("ollama:gone")
    with pytest.raises(ModelNotFoundError, match="one layer per tensor"):
        open_table("ollama:split")
    with pytest.raises(ModelNotFoundError, match="Ollama has no model 'absent'"):
        open_table("ollama:absent")
    with pytest.raises(ModelNotFoundError, match="is not an Ollama model name"):
        open_table("ollama:../../etc:passwd")


def test_lmstudio_files_are_listed_without_companions(
    tmp_path: Path, small_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "home" / ".lmstudio" / "models" / "someone" / "tiny-GGUF"
    models.mkdir(parents=True)
    shutil.copy(small_gguf, models / "tiny-F16.gguf")
    shutil.copy(small_gguf, models / "mmproj-tiny-F16.gguf")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    listed = [m for m in local_models() if m.kind == "lmstudio"]
    assert [(m.name, m.size_bytes) for m in listed] == [("someone/tiny-GGUF/tiny-F16", small_gguf.stat().st_size)]
    assert open_table(listed[0].spec).rows.shape == (500, 64)


def test_hf_cache_snapshots_and_recent_files_are_listed(tmp_path: Path, small_gguf: Path) -> None:
    from huggingface_hub.constants import HF_HUB_CACHE

    from embedexplorer.core.sources.resolve import bundled_model_dir

    repo = Path(HF_HUB_CACHE) / "models--someone--listed-model"
    snapshot = repo / "snapshots" / "0123456789abcdef"
    snapshot.mkdir(parents=True)
    try:
        for file in bundled_model_dir().iterdir():
            if file.is_file():
                shutil.copy(file, snapshot / file.name)
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text("0123456789abcdef", encoding="utf-8")
        found = local_models(recent=[str(small_gguf), str(tmp_path / "deleted.gguf")])
        cached = [m for m in found if m.kind == "hf-cache"]
        assert [m.spec for m in cached] == ["someone/listed-model"]
        assert cached[0].size_bytes >= (snapshot / "model.safetensors").stat().st_size
        recent = [m for m in found if m.kind == "recent"]
        assert [(m.spec, m.size_bytes, m.missing) for m in recent] == [
            (str(small_gguf), small_gguf.stat().st_size, ""),
            (str(tmp_path / "deleted.gguf"), 0, "file not found"),  # shown as missing, not left out
        ]
    finally:
        shutil.rmtree(repo)
        assert not os.path.exists(repo)
