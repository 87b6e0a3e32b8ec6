"""Ollama names read by Ollama's own rules (its types/model/name.go and name_test.go), on a fake store."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer import open_table
from embedexplorer.core.common.errors import EmbedExplorerError, ModelNotFoundError
from embedexplorer.core.sources.discovery import local_models
from embedexplorer.core.sources.ollama import fully_qualified, parse_name, parse_name_bare

from ..gguf_fixture import write_gguf

PART80 = "8" * 80
PART350 = "3" * 350


def store_model(root: Path, gguf_file: Path, folders: tuple[str, ...], *, file_type: str | None = None) -> Path:
    """Lay ``gguf_file`` out as Ollama does under manifests/``folders`` (host, namespace, model, tag)."""
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    data = gguf_file.read_bytes()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    shutil.copy(gguf_file, blobs / digest.replace(":", "-"))
    layers = [{"mediaType": "application/vnd.ollama.image.model", "digest": digest, "size": len(data)}]
    manifest: dict[str, object] = {"schemaVersion": 2, "layers": layers}
    if file_type is not None:
        config = json.dumps({"model_format": "gguf", "file_type": file_type}).encode()
        config_digest = "sha256:" + hashlib.sha256(config).hexdigest()
        (blobs / config_digest.replace(":", "-")).write_bytes(config)
        manifest["config"] = {
            "mediaType": "application/vnd.docker.container.image.v1+json",
            "digest": config_digest,
            "size": len(config),
        }
    path = root.joinpath("manifests", *folders)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return path


@pytest.fixture()
def gguf_file(tmp_path: Path) -> Path:
    rows = np.random.default_rng(1).standard_normal((300, 32)).astype(np.float16)
    return write_gguf(tmp_path / "m.gguf", rows, Q.F16)


# Ollama's name_test.go, TestParseNameParts: the parts ParseNameBare gives, and ParseName's file path.
@pytest.mark.parametrize(
    ("text", "bare", "folders"),
    [
        (
            "registry.ollama.ai/library/dolphin-mistral:7b-v2.6-dpo-laser-q6_K",
            ("registry.ollama.ai", "library", "dolphin-mistral", "7b-v2.6-dpo-laser-q6_K"),
            ("registry.ollama.ai", "library", "dolphin-mistral", "7b-v2.6-dpo-laser-q6_K"),
        ),
        ("scheme://host:port/namespace/model:tag", ("host:port", "namespace", "model", "tag"), None),
        ("host/namespace/model:tag", ("host", "namespace", "model", "tag"), ("host", "namespace", "model", "tag")),
        ("host:port/namespace/model:tag", ("host:port", "namespace", "model", "tag"), None),
        ("host/namespace/model", ("host", "namespace", "model", ""), ("host", "namespace", "model", "latest")),
        (
            "host:port/namespace/model",
            ("host:port", "namespace", "model", ""),
            ("host:port", "namespace", "model", "latest"),
        ),
        ("namespace/model", ("", "namespace", "model", ""), ("registry.ollama.ai", "namespace", "model", "latest")),
        ("model", ("", "", "model", ""), ("registry.ollama.ai", "library", "model", "latest")),
        ("h/nn/mm:t", ("h", "nn", "mm", "t"), ("h", "nn", "mm", "t")),
        (f"{PART80}/{PART80}/{PART80}:{PART80}", (PART80,) * 4, (PART80,) * 4),
        (f"{PART350}/{PART80}/{PART80}:{PART80}", (PART350, PART80, PART80, PART80), None),
    ],
)
def test_names_split_as_ollama_splits_them(text: str, bare: tuple[str, ...], folders: tuple[str, ...] | None) -> None:
    parsed = parse_name_bare(text)
    assert (parsed.host, parsed.namespace, parsed.model, parsed.tag) == bare
    if folders is not None:
        full = parse_name(text)
        assert full is not None and full.folders == folders


# Ollama's name_test.go, testCases (without the digest forms): is ParseNameBare's result valid?
@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("", False),
        ("_why/_the/_lucky:_stiff", True),
        ("host/namespace/model:tag", True),
        ("host/namespace/model", False),
        ("namespace/model", False),
        ("model", False),
        (f"{PART80}/{PART80}/{PART80}:{PART80}", True),
        (f"{PART350}/{PART80}/{PART80}:{PART80}", True),
        ("m", False),
        ("n/m:", False),
        ("h/n/m", False),
        ("^", False),
        ("mm:", False),
        ("/nn/mm", False),
        ("//", False),
        ("//mm", False),
        ("hh//", False),
        ("-hh/nn/mm:tt", False),
        ("hh/-nn/mm:tt", False),
        ("hh/nn/-mm:tt", False),
        ("hh/nn/mm:-tt", False),
        ("host:https/namespace/model:tag", True),
        ("host/name:space/model:tag", False),
    ],
)
def test_bare_names_are_valid_when_ollama_says_so(text: str, valid: bool) -> None:
    assert fully_qualified(parse_name_bare(text)) is valid


def test_names_ollama_refuses_are_refused_in_one_sentence(
    tmp_path: Path, gguf_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_model(tmp_path / "o", gguf_file, ("registry.ollama.ai", "library", "tiny", "latest"))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "o"))
    for typed in ("ns.dot/tiny", "tiny:", "../tiny", "a/b/c/d:latest", "ti ny", "x" * 81):
        with pytest.raises(ModelNotFoundError, match=r"is not an Ollama model name"):
            open_table(f"ollama:{typed}")


@pytest.mark.parametrize(
    ("typed", "folders"),
    [
        ("TinyGPT", ("registry.ollama.ai", "library", "tinygpt", "latest")),
        ("tinygpt:LATEST", ("registry.ollama.ai", "library", "TinyGPT", "latest")),
        ("hf.co/org/model-gguf:q4_k_m", ("hf.co", "org", "model-gguf", "Q4_K_M")),
        ("https://hf.co/Org/Model-GGUF:Q4_K_M", ("hf.co", "org", "model-gguf", "q4_k_m")),
        ("localhost:5000/library/x:latest", ("localhost:5000", "library", "x", "latest")),
        ("localhost:5000/library/x", ("localhost:5000", "library", "x", "latest")),
        ("someone/x:v1.2", ("registry.ollama.ai", "someone", "x", "v1.2")),
    ],
)
def test_a_model_opens_by_any_name_ollama_resolves(
    tmp_path: Path, gguf_file: Path, monkeypatch: pytest.MonkeyPatch, typed: str, folders: tuple[str, ...]
) -> None:
    root = tmp_path / "store"
    store_model(root, gguf_file, folders)
    # Ollama reads OLLAMA_MODELS with spaces and quotes around it dropped.
    monkeypatch.setenv("OLLAMA_MODELS", f'  "{root}" ')
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    table = open_table(f"ollama:{typed}")
    direct = open_table(str(gguf_file))
    assert table.name == f"ollama:{typed}"
    assert np.array_equal(np.asarray(table.rows[:]), np.asarray(direct.rows[:]))
    listed = [m for m in local_models() if m.kind == "ollama"]
    assert len(listed) == 1 and not listed[0].missing
    # What the listing offers opens the same model.
    assert open_table(listed[0].spec).rows.shape == (300, 32)


def test_the_listing_names_models_as_ollama_list_does(
    tmp_path: Path, gguf_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "store"
    store_model(root, gguf_file, ("registry.ollama.ai", "library", "tiny", "latest"), file_type="Q4_K_M")
    store_model(root, gguf_file, ("registry.ollama.ai", "someone", "tiny", "v1"))
    store_model(root, gguf_file, ("hf.co", "org", "model-gguf", "Q8_0"))
    gone = store_model(root, gguf_file, ("localhost:5000", "library", "gone", "latest"))
    layers = json.loads(gone.read_text(encoding="utf-8"))["layers"]
    layers[0]["digest"] = "sha256:" + "0" * 64
    gone.write_text(json.dumps({"layers": layers}), encoding="utf-8")
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    listed = {m.name: m for m in local_models() if m.kind == "ollama"}
    assert set(listed) == {
        "tiny:latest",
        "someone/tiny:v1",
        "hf.co/org/model-gguf:Q8_0",
        "localhost:5000/library/gone:latest",
    }
    assert listed["tiny:latest"].storage == "Q4_K_M"  # from Ollama's config layer
    assert listed["someone/tiny:v1"].storage == "F16"  # from the GGUF header: the token table's type
    assert listed["localhost:5000/library/gone:latest"].missing
    assert all(not m.missing for name, m in listed.items() if name != "localhost:5000/library/gone:latest")


def test_errors_about_the_blob_name_the_model_as_typed(
    tmp_path: Path, gguf_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "store"
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(gguf_file.read_bytes()[:-500])
    store_model(root, truncated, ("registry.ollama.ai", "library", "cut", "latest"))
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    with pytest.raises(EmbedExplorerError) as caught:
        open_table("ollama:Cut")
    message = str(caught.value)
    assert "ollama:Cut" in message and "sha256" not in message
