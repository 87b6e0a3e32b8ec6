"""Ollama's model store: names read as Ollama reads them, manifests, and the GGUF blob they point to.

Ollama keeps ``manifests/HOST/NAMESPACE/MODEL/TAG`` (JSON naming layers by digest) and
``blobs/sha256-<hex>``.  A name is parsed by the rules of Ollama's ``types/model/name.go``:
the tag is after the last ':' (when it comes after the last '/'), the model before it,
then the namespace and the host (which may carry a port, ``localhost:5000``); missing parts
default to ``registry.ollama.ai/library/...:latest``; names match without regard to case.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import ModelNotFoundError
from ..common.files import exists_quietly, is_dir_quietly, is_file_quietly, read_json
from .local_model import LocalModel

DEFAULT_HOST = "registry.ollama.ai"
DEFAULT_NAMESPACE = "library"
DEFAULT_TAG = "latest"
MODEL_LAYER = "application/vnd.ollama.image.model"
TENSOR_LAYER = "application/vnd.ollama.image.tensor"
# The layer whose JSON says, among other things, how the weights are stored ("file_type": "Q4_K_M").
CONFIG_LAYER = "application/vnd.docker.container.image.v1+json"
# Ollama's optional "kind" part (host/namespace/kind/model:tag); models have none.
_KINDS = frozenset({"skill", "agent", "mcp"})
_MISSING = "!MISSING!"  # a part promised by a separator but empty: never valid, as in Ollama
_DIGEST = re.compile(r"sha256[:-][0-9a-fA-F]{64}")
# A manifest is a few hundred bytes; a config layer a few KB.
MANIFEST_LIMIT = 1024 * 1024


@dataclass(frozen=True)
class OllamaName:
    """A full Ollama model name; ``folders`` is where its manifest is under ``manifests/``."""

    host: str
    namespace: str
    model: str
    tag: str
    kind: str = ""

    @property
    def folders(self) -> tuple[str, ...]:
        middle = (self.kind,) if self.kind else ()
        return (self.host, self.namespace, *middle, self.model, self.tag)

    def shortest(self) -> str:
        """The name as ``ollama list`` shows it: default host and namespace left out, the tag kept."""
        if self.host.lower() != DEFAULT_HOST:
            prefix = f"{self.host}/{self.namespace}/"
        elif self.namespace.lower() != DEFAULT_NAMESPACE:
            prefix = f"{self.namespace}/"
        else:
            prefix = ""
        kind = f"{self.kind}/" if self.kind else ""
        return f"{prefix}{kind}{self.model}:{self.tag}"


def parse_name(text: str) -> OllamaName | None:
    """``text`` as Ollama's ParseName reads it (defaults filled in), or None when Ollama would refuse it."""
    bare = parse_name_bare(text)
    name = OllamaName(
        bare.host or DEFAULT_HOST, bare.namespace or DEFAULT_NAMESPACE, bare.model, bare.tag or DEFAULT_TAG, bare.kind
    )
    return name if fully_qualified(name) else None


def parse_name_bare(s: str) -> OllamaName:
    """Ollama's ParseNameBare: the parts cut from the right, nothing filled in (parts may be empty)."""
    tag = ""
    if s.rfind(":") > s.rfind("/"):  # '/' cannot be in a tag, so a ':' after the last '/' starts one
        s, tag, _ = _cut_last(s, ":")
    s, model, cut = _cut_last(s, "/")
    if not cut:
        return OllamaName("", "", s, tag)
    s, kind, cut = _cut_last(s, "/")
    if not cut:  # namespace/model
        return OllamaName("", s, model, tag)
    if kind not in _KINDS:
        return OllamaName(_without_scheme(s), kind, model, tag)
    s, namespace, cut = _cut_last(s, "/")
    if not cut:
        return OllamaName("", s, model, tag, kind)
    return OllamaName(_without_scheme(s), namespace, model, tag, kind)


def _cut_last(s: str, sep: str) -> tuple[str, str, bool]:
    at = s.rfind(sep)
    if at < 0:
        return s, "", False
    return s[:at] or _MISSING, s[at + len(sep) :] or _MISSING, True


def _without_scheme(host: str) -> str:
    scheme, found, rest = host.partition("://")
    return rest if found else scheme


def fully_qualified(name: OllamaName) -> bool:
    """Ollama's IsFullyQualified: every part present and made of the characters it allows."""
    parts = [("host", name.host), ("namespace", name.namespace), ("model", name.model), ("tag", name.tag)]
    if name.kind and name.kind not in _KINDS:
        return False
    return all(_valid_part(kind, text) for kind, text in parts)


def _valid_part(kind: str, text: str) -> bool:
    """Ollama's isValidPart: a letter, digit or '_' first, then those and '-', '.', ':' where allowed."""
    if not 1 <= len(text) <= (350 if kind == "host" else 80):
        return False
    if not (text[0].isascii() and (text[0].isalnum() or text[0] == "_")):
        return False
    for char in text[1:]:
        if char in "_-" or (char.isascii() and char.isalnum()):
            continue
        if char == "." and kind != "namespace":
            continue
        if char == ":" and kind == "host":
            continue
        return False
    return True


# ----- where Ollama keeps models ---------------------------------------------------------------
def models_setting() -> str:
    """OLLAMA_MODELS as Ollama reads it: spaces around it, then quotes around it, dropped."""
    return os.environ.get("OLLAMA_MODELS", "").strip().strip("\"'")


def ollama_roots() -> list[Path]:
    """Where Ollama keeps models: $OLLAMA_MODELS, the user's ~/.ollama/models, the service's folder."""
    roots = []
    setting = models_setting()
    if setting:
        roots.append(Path(setting).expanduser())
    roots += [Path.home() / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]
    unique: list[Path] = []
    for root in roots:
        if root not in unique and is_dir_quietly(root / "manifests"):
            unique.append(root)
    return unique


# ----- one model by name -------------------------------------------------------------------------
def ollama_model(typed: str) -> Path:
    """The GGUF blob of the Ollama model named ``typed`` (what followed ``ollama:``); errors name it as typed."""
    typed = typed.strip()
    name = parse_name(typed)
    if name is None:
        raise ModelNotFoundError(
            f"'ollama:{typed}' is not an Ollama model name (ollama:NAME, ollama:NAME:TAG, "
            "ollama:NAMESPACE/NAME:TAG or ollama:HOST/NAMESPACE/NAME:TAG)."
        )
    roots = ollama_roots()
    if not roots:
        raise ModelNotFoundError(
            "No Ollama models were found (looked in $OLLAMA_MODELS, ~/.ollama/models and "
            "/usr/share/ollama/.ollama/models)."
        )
    for root in roots:
        manifest = find_folded(root / "manifests", name.folders)
        if manifest is None or not os.path.lexists(manifest):
            continue
        # Bounded, never a FIFO or a device, never nested past Python's stack: each is named.
        layers = _layers_in(read_json(manifest, "Ollama manifest", MANIFEST_LIMIT, ModelNotFoundError))
        if layers is None:
            raise ModelNotFoundError(f"The Ollama manifest of '{typed}' ({manifest}) cannot be read.")
        layer = _layer_of(layers, MODEL_LAYER)
        if layer is None:
            if _layer_of(layers, TENSOR_LAYER) is not None:
                raise ModelNotFoundError(
                    f"Ollama stores '{typed}' as one layer per tensor, which EmbedExplorer cannot read yet."
                )
            raise ModelNotFoundError(f"The Ollama manifest of '{typed}' names no model layer.")
        blob = blob_path(root, layer.get("digest"))
        if blob is None:
            raise ModelNotFoundError(
                f"The Ollama manifest of '{typed}' ({manifest}) names its model layer "
                f"{str(layer.get('digest'))[:100]!r}, which is not a sha256 digest; it was not opened."
            )
        if not is_file_quietly(blob):
            raise ModelNotFoundError(
                f"Ollama's manifest of '{typed}' points to the blob {layer.get('digest')}, which is missing "
                f"from {root / 'blobs'}; pull the model again (ollama pull {typed})."
            )
        return blob
    raise ModelNotFoundError(f"Ollama has no model '{typed}' here; `ollama list` shows the models it has.")


def find_folded(base: Path, parts: tuple[str, ...]) -> Path | None:
    """``base/parts...`` matching each part without regard to case (as Ollama does), or None."""
    path = base
    for part in parts:
        exact = path / part
        if exists_quietly(exact):
            path = exact
            continue
        wanted = part.lower()
        try:
            match = next((entry.name for entry in os.scandir(path) if entry.name.lower() == wanted), None)
        except OSError:
            return None
        if match is None:
            return None
        path = path / match
    return path


def blob_path(root: Path, digest: object) -> Path | None:
    """Where Ollama keeps the blob ``sha256:<hex>``; None for anything that is not such a digest."""
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        return None
    return root / "blobs" / digest.replace(":", "-")


def _layers(manifest: Path) -> list[dict[str, object]] | None:
    try:
        data = read_json(manifest, "Ollama manifest", MANIFEST_LIMIT, ModelNotFoundError)
    except ModelNotFoundError:
        return None
    return _layers_in(data)


def _layers_in(data: object) -> list[dict[str, object]] | None:
    """A manifest's layers and its config, or None when it has no list of layers."""
    layers = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(layers, list):
        return None
    found = [layer for layer in layers if isinstance(layer, dict)]
    config = data.get("config") if isinstance(data, dict) else None
    if isinstance(config, dict):
        found.append(config)
    return found


def _layer_of(layers: list[dict[str, object]], media_type: str) -> dict[str, object] | None:
    return next((layer for layer in layers if layer.get("mediaType") == media_type), None)


# ----- every model -------------------------------------------------------------------------------
def ollama_models() -> Iterator[LocalModel]:
    """Every model in every Ollama root, named as ``ollama list`` names it; a missing blob is marked."""
    seen: set[str] = set()
    for root in ollama_roots():
        for folders, manifest in _manifests(root / "manifests"):
            host, namespace, *kind, model, tag = folders
            name = OllamaName(host, namespace, model, tag, kind[0] if kind else "")
            if not fully_qualified(name):
                continue
            shown = name.shortest()
            if shown.lower() in seen:
                continue
            listed = _listed(root, manifest, shown)
            if listed is not None:
                seen.add(shown.lower())
                yield listed


def _manifests(base: Path) -> Iterator[tuple[tuple[str, ...], Path]]:
    """(host, namespace, [kind,] model, tag) and the file, for every manifest under ``base``."""

    def walk(folder: Path, parts: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Path]]:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            here = (*parts, entry.name)
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir and len(here) < 5:
                yield from walk(Path(entry.path), here)
            elif not is_dir and len(here) in (4, 5) and (len(here) == 4 or here[2] in _KINDS):
                yield here, Path(entry.path)

    yield from walk(base, ())


def _listed(root: Path, manifest: Path, shown: str) -> LocalModel | None:
    layers = _layers(manifest)
    layer = _layer_of(layers, MODEL_LAYER) if layers else None
    if layers is None or layer is None:
        return None  # not a model Ollama can run here (a tensor-per-layer or damaged manifest)
    blob = blob_path(root, layer.get("digest"))
    size = layer.get("size", 0)
    size = size if isinstance(size, int) and size >= 0 else 0
    missing = ""
    if blob is None:
        missing = "its manifest's digest is malformed"
    elif not is_file_quietly(blob):
        missing = f"blob {layer.get('digest')} missing"
    storage = _config_file_type(root, layers) if not missing else ""
    if not storage and blob is not None and not missing:
        from ..formats.quick_header import gguf_storage

        storage = gguf_storage(blob)
    return LocalModel(
        name=shown,
        spec=f"ollama:{shown}",
        size_bytes=size,
        kind="ollama",
        location=str(blob if blob is not None else manifest),
        file_format="GGUF",
        storage=storage,
        missing=missing,
    )


def _config_file_type(root: Path, layers: list[dict[str, object]]) -> str:
    """The "file_type" Ollama wrote into the model's config layer ("Q4_K_M"), or ""."""
    config = _layer_of(layers, CONFIG_LAYER)
    blob = blob_path(root, config.get("digest")) if config else None
    if blob is None:
        return ""
    try:
        data = read_json(blob, "Ollama config", MANIFEST_LIMIT, ModelNotFoundError)
    except ModelNotFoundError:
        return ""
    file_type = data.get("file_type") if isinstance(data, dict) else None
    return file_type if isinstance(file_type, str) and len(file_type) <= 32 else ""
