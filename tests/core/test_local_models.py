"""The models on this computer, listed: a fake HF cache, a fake LM Studio with its settings file, a fake Ollama."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer import open_table
from embedexplorer.cli import main
from embedexplorer.core.formats.quick_header import gguf_storage, safetensors_storage
from embedexplorer.core.sources.discovery import local_models
from embedexplorer.core.sources.resolve import bundled_model_dir

from ..gguf_fixture import quantised_rows, write_gguf
from .test_ollama_names import store_model


def fake_hf_cache(cache: Path, repo_id: str, files: dict[str, Path], *, revision: str = "0" * 40) -> Path:
    """A repo laid out as huggingface_hub lays it out: blobs, a snapshot of links to them, refs/main."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / revision
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    for name, source in files.items():
        blob = repo / "blobs" / f"blob-{abs(hash(name))}"
        shutil.copy(source, blob)
        link = snapshot / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(blob)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    return snapshot


@pytest.fixture()
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home with models in every place the listing looks."""
    import huggingface_hub.constants

    home, cache, ollama = tmp_path / "home", tmp_path / "hf-cache", tmp_path / "ollama"
    rows = np.random.default_rng(3).standard_normal((256, 256)).astype(np.float32)
    f16 = write_gguf(tmp_path / "f16.gguf", rows.astype(np.float16), Q.F16)
    q4k = write_gguf(tmp_path / "q4k.gguf", quantised_rows(rows, Q.Q4_K), Q.Q4_K)
    bundled = bundled_model_dir()
    folder_files = {f.name: f for f in bundled.iterdir() if f.is_file()}
    # Hugging Face cache: a complete safetensors model, a GGUF repo, and a download that stopped early.
    fake_hf_cache(cache, "someone/complete", folder_files)
    fake_hf_cache(cache, "someone/tiny-GGUF", {"q4/tiny-Q4_K.gguf": q4k, "mmproj-tiny.gguf": f16})
    fake_hf_cache(cache, "someone/stopped", {"config.json": bundled / "config.json"})
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    # LM Studio: its models folder moved (settings.json), and its old default folder.
    moved = tmp_path / "big-disk" / "lm-models"
    (moved / "pub" / "moved-GGUF").mkdir(parents=True)
    shutil.copy(f16, moved / "pub" / "moved-GGUF" / "moved-F16.gguf")
    (home / ".lmstudio").mkdir(parents=True)
    (home / ".lmstudio" / "settings.json").write_text(json.dumps({"downloadsFolder": str(moved)}), encoding="utf-8")
    old = home / ".cache" / "lm-studio" / "models" / "pub" / "old-GGUF"
    old.mkdir(parents=True)
    shutil.copy(q4k, old / "old-Q4_K.gguf")
    (old / "gone-Q4_K.gguf").symlink_to(tmp_path / "deleted.gguf")  # a link whose file was deleted
    # Ollama.
    store_model(ollama, f16, ("registry.ollama.ai", "library", "tiny", "latest"))
    monkeypatch.setenv("OLLAMA_MODELS", str(ollama))
    monkeypatch.setenv("HOME", str(home))
    return {"f16": f16, "q4k": q4k, "moved": moved, "bundled": bundled}


def test_every_place_is_listed_with_kind_size_and_storage(machine: dict[str, Path]) -> None:
    listed = {m.name: m for m in local_models()}
    assert set(listed) == {
        "all-MiniLM-L6-v2 (bundled)",  # on every machine, a fresh one included
        "someone/complete",
        "someone/tiny-GGUF/q4/tiny-Q4_K.gguf",
        "someone/stopped",
        "pub/moved-GGUF/moved-F16",
        "pub/old-GGUF/old-Q4_K",
        "pub/old-GGUF/gone-Q4_K",
        "tiny:latest",
    }
    complete = listed["someone/complete"]
    assert (complete.kind, complete.file_format, complete.storage, complete.missing) == (
        "hf-cache",
        "safetensors",
        "F32",
        "",
    )
    assert complete.size_bytes == sum(f.stat().st_size for f in machine["bundled"].iterdir() if f.is_file())
    assert listed["someone/stopped"].missing == "weights not downloaded"
    gguf_repo = listed["someone/tiny-GGUF/q4/tiny-Q4_K.gguf"]
    assert (gguf_repo.storage, gguf_repo.size_bytes) == ("Q4_K", machine["q4k"].stat().st_size)
    moved = listed["pub/moved-GGUF/moved-F16"]
    assert (moved.kind, moved.storage, moved.location) == (
        "lmstudio",
        "F16",
        str(machine["moved"] / "pub" / "moved-GGUF" / "moved-F16.gguf"),
    )
    assert listed["pub/old-GGUF/gone-Q4_K"].missing == "file not found"
    assert listed["tiny:latest"].spec == "ollama:tiny:latest" and listed["tiny:latest"].storage == "F16"
    # Everything not missing opens as listed.
    for model in listed.values():
        if not model.missing:
            assert open_table(model.spec).rows.shape[0] in (256, 30522)


def test_lmstudio_home_moved_by_its_pointer_file(machine: dict[str, Path], tmp_path: Path) -> None:
    home = Path.home()
    moved_home = tmp_path / "elsewhere" / ".lmstudio"
    (moved_home / "models" / "pub" / "far-GGUF").mkdir(parents=True)
    shutil.copy(machine["f16"], moved_home / "models" / "pub" / "far-GGUF" / "far.gguf")
    (home / ".lmstudio-home-pointer").write_text(str(moved_home) + "\n", encoding="utf-8")
    names = {m.name for m in local_models() if m.kind == "lmstudio"}
    assert "pub/far-GGUF/far" in names and "pub/old-GGUF/old-Q4_K" in names


def test_storage_types_agree_with_the_gguf_package(machine: dict[str, Path], tmp_path: Path) -> None:
    for path in (machine["f16"], machine["q4k"]):
        reader = gguf.GGUFReader(path)
        table = next(t for t in reader.tensors if t.name == "token_embd.weight")
        assert gguf_storage(path) == table.tensor_type.name
    # A file that says how it is stored (general.file_type, as llama.cpp's converter writes it) is read by it.
    writer = gguf.GGUFWriter(str(tmp_path / "typed.gguf"), "llama")
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.add_token_list([f"t{i}" for i in range(100_000)])  # a vocabulary longer than the bytes read
    writer.add_tensor("token_embd.weight", np.zeros((4, 32), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert gguf_storage(tmp_path / "typed.gguf") == "Q4_K_M"
    assert safetensors_storage(machine["bundled"] / "model.safetensors") == "F32"


def test_models_json_through_the_command_line(machine: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    by_name = {m["name"]: m for m in printed}
    assert by_name == {m.name: m.as_json() for m in local_models()}
    assert by_name["tiny:latest"] == {
        "name": "tiny:latest",
        "spec": "ollama:tiny:latest",
        "source": "ollama",
        "format": "GGUF",
        "storage": "F16",
        "size_bytes": machine["f16"].stat().st_size,
        "location": by_name["tiny:latest"]["location"],
        "missing": None,
    }
    assert by_name["pub/old-GGUF/gone-Q4_K"]["missing"] == "file not found"
    assert main(["models"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:5] == ["NAME", "SOURCE", "FORMAT", "STORAGE", "SIZE"]
    gone = next(line for line in table if line.startswith("pub/old-GGUF/gone-Q4_K"))
    assert "MISSING: file not found" in gone
