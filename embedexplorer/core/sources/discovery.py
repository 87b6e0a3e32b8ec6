"""Models already on this computer: the Hugging Face cache, Ollama, LM Studio and recent files.

Only names, manifests and file sizes are read, so listing is quick and never fails:
a folder that cannot be read is skipped.  ``ollama_model`` turns ``NAME[:TAG]`` into
the file Ollama keeps the model in (a GGUF blob named by its digest).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import EmbedExplorerError, ModelNotFoundError
from ..common.files import parse_json, read_regular

OLLAMA_REGISTRY = "registry.ollama.ai"
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_TENSOR_LAYER = "application/vnd.ollama.image.tensor"
# An Ollama manifest is under 2 KB; a larger one is not a manifest (and is not read whole).
OLLAMA_MANIFEST_LIMIT = 1024 * 1024
# A layer's digest names its blob: "sha256:" and 64 hex digits, nothing that could climb out of blobs/.
_DIGEST = re.compile(r"sha256[:-]([0-9a-f]{64})")
# Vision projectors and similar companions are GGUF files without a token table.
_COMPANION_WORDS = ("mmproj", "projector")


@dataclass(frozen=True)
class LocalModel:
    """One model found on disk: what to show, what to open (a model spec), its size and where it came from."""

    name: str
    spec: str
    size_bytes: int
    kind: str  # "hf-cache", "ollama", "lmstudio" or "recent"


def local_models(recent: Sequence[str] = ()) -> list[LocalModel]:
    """Every model found in the usual places, with its size on disk; ``recent`` specs that still exist come first."""
    found: list[LocalModel] = []
    for finder in (_recent_models(recent), hf_cache_models(), ollama_models(), lmstudio_models()):
        try:
            found.extend(finder)
        except OSError:  # a folder that vanished or cannot be read mid-listing
            continue
    seen: set[str] = set()
    unique = []
    for model in found:
        if model.spec not in seen:
            seen.add(model.spec)
            unique.append(model)
    return unique


# ----- Ollama ------------------------------------------------------------------------------------
def ollama_roots() -> list[Path]:
    """Where Ollama keeps models: $OLLAMA_MODELS, the user's ~/.ollama/models, the service's folder."""
    roots = []
    if os.environ.get("OLLAMA_MODELS"):
        roots.append(Path(os.environ["OLLAMA_MODELS"]))
    roots += [Path.home() / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]
    return [root for root in roots if _is_dir(root / "manifests")]


def ollama_models() -> Iterable[LocalModel]:
    for root in ollama_roots():
        manifests = root / "manifests"
        for manifest in sorted(manifests.rglob("*")):
            if not _is_file(manifest):
                continue
            parts = manifest.relative_to(manifests).parts
            if len(parts) < 3:
                continue
            name = _ollama_name(parts)
            layer = _model_layer(manifest)
            if layer is None:
                continue
            size = layer.get("size", 0)
            yield LocalModel(name, f"ollama:{name}", size if isinstance(size, int) else 0, "ollama")


def _ollama_name(parts: tuple[str, ...]) -> str:
    """registry.ollama.ai/library/llama3/8b -> llama3:8b; other namespaces keep theirs."""
    host, *path, tag = parts
    if host == OLLAMA_REGISTRY and len(path) == 2 and path[0] == "library":
        return f"{path[1]}:{tag}"
    if host == OLLAMA_REGISTRY:
        return f"{'/'.join(path)}:{tag}"
    return f"{host}/{'/'.join(path)}:{tag}"


def _manifest_path(root: Path, name: str) -> Path:
    model, _, tag = name.partition(":")
    pieces = [p for p in model.split("/") if p]
    if len(pieces) == 1:
        pieces = [OLLAMA_REGISTRY, "library", *pieces]
    elif len(pieces) == 2:
        pieces = [OLLAMA_REGISTRY, *pieces]
    return root.joinpath("manifests", *pieces, tag or "latest")


def load_manifest(manifest: Path) -> object:
    """A manifest's JSON: bounded, never a FIFO or device, never nested past Python's stack.

    Anything else raises ModelNotFoundError naming the manifest and what is wrong.
    """
    data = read_regular(manifest, "Ollama manifest", OLLAMA_MANIFEST_LIMIT, ModelNotFoundError)
    return parse_json(data, f"Ollama manifest {manifest}", ModelNotFoundError)


def _read_manifest(manifest: Path) -> dict[str, object] | None:
    try:
        data = load_manifest(manifest)
    except EmbedExplorerError:
        return None
    return data if isinstance(data, dict) else None


def blob_path(root: Path, digest: str) -> Path | None:
    """The file in ``root/blobs`` a layer's digest names, or None when the digest is not one.

    Only ``sha256:`` and 64 hex digits is a digest: ``../`` or an absolute path could
    otherwise name any file on the computer.
    """
    found = _DIGEST.fullmatch(digest)
    return root / "blobs" / f"sha256-{found.group(1)}" if found else None


def _model_layer(manifest: Path) -> dict[str, object] | None:
    data = _read_manifest(manifest)
    layers = data.get("layers") if data else None
    if not isinstance(layers, list):
        return None
    for layer in layers:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            return layer
    return None


def ollama_model(name: str) -> Path:
    """The GGUF blob of the Ollama model ``NAME[:TAG]`` (tag "latest" when none is given)."""
    name = name.strip()
    model, _, tag = name.partition(":")
    if not model or any(part in ("", ".", "..") for part in model.split("/")) or any(c in tag for c in "/\\"):
        raise ModelNotFoundError(f"'ollama:{name}' is not an Ollama model name (ollama:NAME or ollama:NAME:TAG).")
    roots = ollama_roots()
    if not roots:
        raise ModelNotFoundError(
            "No Ollama models were found (looked in $OLLAMA_MODELS, ~/.ollama/models and "
            "/usr/share/ollama/.ollama/models)."
        )
    for root in roots:
        manifest = _manifest_path(root, name)
        if not os.path.lexists(manifest):  # a FIFO or device there is named by load_manifest, not skipped
            continue
        data = load_manifest(manifest)
        layers = data.get("layers") if isinstance(data, dict) else None
        if not isinstance(layers, list):
            raise ModelNotFoundError(f"The Ollama manifest of '{name}' ({manifest}) cannot be read.")
        kinds = {layer.get("mediaType") for layer in layers if isinstance(layer, dict)}
        layer = _model_layer(manifest)
        if layer is None:
            if OLLAMA_TENSOR_LAYER in kinds:
                raise ModelNotFoundError(
                    f"Ollama stores '{name}' as one layer per tensor, which EmbedExplorer cannot read yet."
                )
            raise ModelNotFoundError(f"The Ollama manifest of '{name}' names no model layer.")
        digest = str(layer.get("digest", ""))
        blob = blob_path(root, digest)
        if blob is None:
            raise ModelNotFoundError(
                f"The Ollama manifest of '{name}' ({manifest}) names its model layer {digest[:100]!r}, "
                "which is not a sha256 digest; it was not opened."
            )
        if _is_file(blob):
            return blob
        raise ModelNotFoundError(
            f"Ollama's manifest of '{name}' points to the blob {digest or '(none)'}, which is missing "
            f"from {root / 'blobs'}; pull the model again (ollama pull {name})."
        )
    raise ModelNotFoundError(f"Ollama has no model '{name}' here; `ollama list` shows the models it has.")


# ----- LM Studio -------------------------------------------------------------------------------
def lmstudio_roots() -> list[Path]:
    home = Path.home()
    return [root for root in (home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models") if _is_dir(root)]


def lmstudio_models() -> Iterable[LocalModel]:
    for root in lmstudio_roots():
        for file in sorted(root.rglob("*.gguf")):
            if any(word in file.name.lower() for word in _COMPANION_WORDS) or not _is_file(file):
                continue
            yield LocalModel(str(file.relative_to(root).with_suffix("")), str(file), file.stat().st_size, "lmstudio")


# ----- Hugging Face cache ------------------------------------------------------------------------
def hf_cache_models() -> Iterable[LocalModel]:
    """Complete model snapshots (config and safetensors) and GGUF files in the HF cache."""
    try:
        from huggingface_hub import scan_cache_dir
        from huggingface_hub.errors import CacheNotFound
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return
    try:
        info = scan_cache_dir()
    except (CacheNotFound, OSError, ValueError):
        return
    from .hub import snapshot_is_complete

    for repo in sorted(info.repos, key=lambda r: r.repo_id):
        if repo.repo_type != "model":
            continue
        revisions = sorted(repo.revisions, key=lambda r: r.last_modified, reverse=True)
        if revisions and snapshot_is_complete(revisions[0].snapshot_path):
            yield LocalModel(repo.repo_id, repo.repo_id, int(repo.size_on_disk), "hf-cache")
        for revision in revisions[:1]:
            for file in revision.files:
                if file.file_name.endswith(".gguf") and not any(w in file.file_name.lower() for w in _COMPANION_WORDS):
                    name = f"{repo.repo_id}/{file.file_name}"
                    yield LocalModel(name, str(file.file_path), int(file.size_on_disk), "hf-cache")


def _recent_models(recent: Sequence[str]) -> Iterable[LocalModel]:
    """Recent specs that are paths still on disk (Hub ids and ollama names are listed by their own finders)."""
    for spec in recent:
        path = Path(spec).expanduser()
        if _is_file(path):
            yield LocalModel(path.name, spec, path.stat().st_size, "recent")
        elif _is_dir(path):
            size = sum(f.stat().st_size for f in path.glob("*.safetensors") if _is_file(f))
            yield LocalModel(path.name, spec, size, "recent")


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False
