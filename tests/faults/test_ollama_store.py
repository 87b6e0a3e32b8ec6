"""Ollama stores that lie: a digest that climbs out of blobs/, a giant or bottomless manifest.

Hostile round 2, classes 2 (reads outside the store), 4 and 5 (a manifest that is a
FIFO, a gigabyte, or nested past Python's stack), 7 (RecursionError on the GUI thread).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedexplorer.core.common.errors import ModelNotFoundError
from embedexplorer.core.sources.discovery import local_models, ollama_model
from embedexplorer.core.sources.ollama import MANIFEST_LIMIT as OLLAMA_MANIFEST_LIMIT

from ..gguf_fixture import write_gguf
from .helpers import assert_one_line_error, run_cli

SETTINGS = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def lay_out(root: Path, digest: str, name: str = "tiny") -> Path:
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / name / "latest"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    layers = [{"mediaType": "application/vnd.ollama.image.model", "digest": digest, "size": 10}]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}), encoding="utf-8")
    (root / "blobs").mkdir(exist_ok=True)
    return manifest


hexes = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
# Digests that would name a file outside blobs/: climbing, absolute, or dressed up as sha256.
climbing = st.builds(
    lambda prefix, depth, target: f"{prefix}{'../' * depth}{target}",
    st.sampled_from(["", "sha256:", "sha256-", "sha256:../", "./", "blobs/"]),
    st.integers(min_value=1, max_value=6),
    st.sampled_from(["secret.gguf", "outside/secret.gguf", "manifests/registry.ollama.ai/library/tiny/latest"]),
)
absolute = st.builds(lambda target: target, st.sampled_from(["/SECRET", "//SECRET", "sha256:/SECRET"]))
not_digests = st.one_of(
    climbing,
    absolute,
    hexes.map(lambda h: f"sha256:{h}/../../secret.gguf"),
    hexes.map(lambda h: f"sha256:{h.upper()}x"),
    hexes.map(lambda h: f"sha512:{h}"),
    st.text(max_size=40).filter(lambda t: not t.startswith("sha256")),
)


@SETTINGS
@given(digest=not_digests)
def test_a_digest_that_is_not_one_never_opens_a_file(digest: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        root = home / "store" / "models"
        lay_out(root, digest.replace("/SECRET", str(home / "secret.gguf")))
        secret = home / "secret.gguf"
        secret.write_bytes(b"GGUF not yours")
        (home / "store" / "secret.gguf").write_bytes(b"GGUF not yours")
        (root / "secret.gguf").write_bytes(b"GGUF not yours")
        old = os.environ.get("OLLAMA_MODELS")
        os.environ["OLLAMA_MODELS"] = str(root)
        try:
            with pytest.raises(ModelNotFoundError) as caught:
                ollama_model("tiny")
        finally:
            if old is None:
                os.environ.pop("OLLAMA_MODELS")
            else:
                os.environ["OLLAMA_MODELS"] = old
        message = str(caught.value)
        assert "\n" not in message and "tiny" in message


def test_a_real_digest_still_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: a blob named by its sha256 opens (colon or dash, as Ollama spells either)."""
    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    gguf_file = write_gguf(tmp_path / "m.gguf", rows, Q.F16)
    digest = hashlib.sha256(gguf_file.read_bytes()).hexdigest()
    root = tmp_path / "models"
    for spelling in (f"sha256:{digest}", f"sha256-{digest}"):
        lay_out(root, spelling)
        (root / "blobs" / f"sha256-{digest}").write_bytes(gguf_file.read_bytes())
        monkeypatch.setenv("OLLAMA_MODELS", str(root))
        assert ollama_model("tiny") == root / "blobs" / f"sha256-{digest}"


def test_the_command_line_names_the_climbing_digest(tmp_path: Path) -> None:
    root = tmp_path / "models"
    lay_out(root, "sha256:../../../../../../etc/passwd")
    result = run_cli("info", "--model", "ollama:tiny", env={"OLLAMA_MODELS": str(root)})
    assert_one_line_error(result, "is not a sha256 digest")


manifest_traps = st.sampled_from(["fifo", "giant", "nested", "dev-zero", "not-utf8"])


@settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(trap=manifest_traps, depth=st.integers(min_value=50_000, max_value=200_000))
def test_a_manifest_that_is_a_trap_is_one_sentence_and_listing_goes_on(trap: str, depth: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "models"
        manifest = lay_out(root, "sha256:" + "0" * 64)
        manifest.unlink()
        if trap == "fifo":
            os.mkfifo(manifest)
        elif trap == "giant":
            with open(manifest, "wb") as handle:  # a sparse gigabyte: no disk, and never read whole
                handle.truncate(1 << 30)
        elif trap == "nested":
            manifest.write_text("[" * depth + "]" * depth, encoding="utf-8")
        elif trap == "dev-zero":
            manifest.symlink_to("/dev/zero")
        else:
            manifest.write_bytes(b"\xff\xfe{" * 100)
        old = os.environ.get("OLLAMA_MODELS")
        os.environ["OLLAMA_MODELS"] = str(root)
        try:
            assert all(m.kind != "ollama" for m in local_models())  # listing never fails (the GUI thread calls it)
            with pytest.raises(ModelNotFoundError) as caught:
                ollama_model("tiny")
        finally:
            if old is None:
                os.environ.pop("OLLAMA_MODELS")
            else:
                os.environ["OLLAMA_MODELS"] = old
        message = str(caught.value)
        assert "\n" not in message and "Ollama manifest" in message
        if trap == "giant":
            assert f"({OLLAMA_MANIFEST_LIMIT // (1024 * 1024)} MiB)" in message
