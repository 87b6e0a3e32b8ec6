"""Models already on this computer: the Hugging Face cache, Ollama, LM Studio and recent files.

Only names, manifests, sizes and the first bytes of each model file are read, so listing
hundreds of models takes well under a second and never fails: a folder that cannot be
read is skipped.  A model the listing knows of but whose file is gone is kept, marked
missing, so people see why it does not open.  Ollama's store is read in ``ollama``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from fnmatch import fnmatch
from pathlib import Path

from ..common.constants import BUNDLED
from ..common.files import is_dir_quietly, is_file_quietly, read_regular_quietly
from ..formats.gguf_split import missing_numbers, missing_text, split_name
from ..formats.quick_header import gguf_storage, safetensors_storage
from ..readers.gguf import READER as GGUF_READER
from .local_model import LocalModel
from .ollama import ollama_model, ollama_models, ollama_roots

__all__ = ["LocalModel", "local_models", "ollama_model", "ollama_models", "ollama_roots"]

# Vision projectors and similar companions are GGUF files without a token table.
_COMPANION_WORDS = ("mmproj", "projector")
# LM Studio keeps models as PUBLISHER/REPO/FILE; a little deeper allows for subfolders.
_LMSTUDIO_DEPTH = 4
SETTINGS_LIMIT = 1024 * 1024
# A cache's refs/main holds a commit hash; LM Studio's home pointer one path.
_REF_LIMIT = 4096
_POINTER_LIMIT = 4096


def local_models(recent: Sequence[str] = ()) -> list[LocalModel]:
    """Every model found in the usual places, then the ``recent`` specs not found there, one entry per file."""
    found: list[LocalModel] = []
    for finder in (bundled_models, hf_cache_models, ollama_models, lmstudio_models, lambda: _recent_models(recent)):
        try:
            found.extend(finder())
        except OSError:  # a folder that vanished or cannot be read mid-listing
            continue
    # One entry per model: a recent file that a finder listed already is not listed again.
    found_elsewhere = [model for model in found if model.kind != "recent"]
    recents = [model for model in found if model.kind == "recent"]
    if not recents:
        return found
    specs = {model.spec for model in found_elsewhere}
    places = {_real(model.location) for model in found_elsewhere}
    for model in recents:
        if model.spec not in specs and _real(model.location) not in places:
            specs.add(model.spec)
            places.add(_real(model.location))
            found_elsewhere.append(model)
    return found_elsewhere


def _real(location: str) -> str:
    try:
        return os.path.realpath(location) if location else ""
    except (OSError, ValueError):
        return location


# ----- one file or folder ----------------------------------------------------------------------
def gguf_entry(file: Path, name: str, kind: str) -> LocalModel | None:
    """A GGUF model file as listed: a split model once (by its first part), companions left out."""
    if any(word in file.name.lower() for word in _COMPANION_WORDS):
        return None
    split = split_name(file)
    if split is not None and split.number != 1:
        return None
    files = [file]
    missing = ""
    if split is not None:
        absent = missing_numbers(split)
        if absent:
            missing = missing_text(split, absent)
        # Only the parts that are there are weighed: a name may claim 99,999 of them.
        gone = set(absent)
        files = [split.part(number) for number in range(1, split.count + 1) if number not in gone]
        name = name.replace(f"-{split.number:05d}-of-{split.count:05d}", "")
    elif not is_file_quietly(file):
        missing = "file not found"
    size = sum(_size(part) for part in files)
    storage = "" if missing and split is None else gguf_storage(file)
    return LocalModel(name, str(file), size, kind, str(file), "GGUF", storage, missing)


def folder_entry(folder: Path, name: str, spec: str, kind: str) -> LocalModel:
    """A safetensors model folder: complete when it has its config and every weight file."""
    from .hub_session import snapshot_is_complete

    files = sorted(folder.glob("*.safetensors"))
    complete = snapshot_is_complete(folder)
    size = sum(_size(file) for file in folder.iterdir())
    storage = safetensors_storage(files[0]) if files and complete else ""
    missing = "" if complete else "weights not downloaded"
    return LocalModel(name, spec, size, kind, str(folder), "safetensors", storage, missing)


# ----- LM Studio -------------------------------------------------------------------------------
def lmstudio_roots() -> list[Path]:
    """LM Studio's models folders: the one moved in its settings (downloadsFolder), then its defaults."""
    home = Path.home()
    lmstudio_home = _lmstudio_home(home)
    roots: list[Path] = []
    for settings in (lmstudio_home / "settings.json", home / ".config" / "LM Studio" / "settings.json"):
        folder = _downloads_folder(settings)
        if folder is not None:
            roots.append(folder)
    roots += [lmstudio_home / "models", home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]
    unique: list[Path] = []
    for root in roots:
        if root not in unique and is_dir_quietly(root):
            unique.append(root)
    return unique


def _lmstudio_home(home: Path) -> Path:
    """~/.lmstudio, or where ~/.lmstudio-home-pointer says LM Studio's home was moved to."""
    data = read_regular_quietly(home / ".lmstudio-home-pointer", _POINTER_LIMIT)
    try:
        text = data.decode("utf-8").strip() if data is not None else ""
        if text and "\0" not in text:
            return Path(text).expanduser()
    except (UnicodeDecodeError, ValueError, RuntimeError):
        pass
    return home / ".lmstudio"


def _downloads_folder(settings: Path) -> Path | None:
    from ..common.errors import ModelNotFoundError
    from ..common.files import read_json

    try:
        if not settings.is_file():
            return None
        data = read_json(settings, "LM Studio settings file", SETTINGS_LIMIT, ModelNotFoundError)
    except (OSError, ModelNotFoundError):
        return None
    folder = data.get("downloadsFolder") if isinstance(data, dict) else None
    if not isinstance(folder, str) or not folder.strip():
        return None
    return Path(folder.strip()).expanduser()


def lmstudio_models() -> Iterator[LocalModel]:
    for root in lmstudio_roots():
        for path, is_dir in _walk(root, _LMSTUDIO_DEPTH):
            relative = path.relative_to(root)
            if not is_dir and _one_file_model(path) and _may_be_model_file(path):
                entry = gguf_entry(path, str(relative.with_suffix("")), "lmstudio")
                if entry is not None:
                    yield entry
            elif is_dir and is_file_quietly(path / "config.json") and any(path.glob("*.safetensors")):
                yield folder_entry(path, str(relative), str(path), "lmstudio")


def _one_file_model(path: Path) -> bool:
    """A name the one-file reader declares (``*.gguf``), as the file dialog offers it."""
    name = path.name.lower()
    return any(fnmatch(name, pattern.lower()) for pattern in GGUF_READER.patterns)


def _walk(root: Path, depth: int) -> Iterator[tuple[Path, bool]]:
    """(path, is a folder) for everything under ``root`` down to ``depth`` levels, in name order."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        yield Path(entry.path), is_dir
        if is_dir and depth > 1:
            yield from _walk(Path(entry.path), depth - 1)


# ----- Hugging Face cache ------------------------------------------------------------------------
def hf_cache_root() -> Path | None:
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return None
    return Path(HF_HUB_CACHE)


def hf_cache_models() -> Iterator[LocalModel]:
    """Model snapshots (config and safetensors) and GGUF files in the HF cache, newest revision each."""
    root = hf_cache_root()
    if root is None or not is_dir_quietly(root):
        return
    for repo_folder in sorted(root.glob("models--*")):
        repo_id = repo_folder.name.removeprefix("models--").replace("--", "/")
        snapshot = _current_snapshot(repo_folder)
        if snapshot is None:
            continue
        if is_file_quietly(snapshot / "config.json"):
            yield folder_entry(snapshot, repo_id, repo_id, "hf-cache")
        for path, is_dir in _walk(snapshot, 3):
            if not is_dir and _one_file_model(path) and _may_be_model_file(path):
                entry = gguf_entry(path, f"{repo_id}/{path.relative_to(snapshot)}", "hf-cache")
                if entry is not None:
                    yield entry


def _current_snapshot(repo_folder: Path) -> Path | None:
    """The snapshot refs/main names, else the newest one."""
    snapshots = repo_folder / "snapshots"
    # refs/main is a 40-character commit: anything else (a FIFO, /dev/zero, a huge file) is not read.
    data = read_regular_quietly(repo_folder / "refs" / "main", _REF_LIMIT)
    try:
        revision = data.decode("utf-8").strip() if data is not None else ""
        if revision and "/" not in revision and "\0" not in revision and is_dir_quietly(snapshots / revision):
            return snapshots / revision
    except (UnicodeDecodeError, ValueError):
        pass
    try:
        folders = [folder for folder in snapshots.iterdir() if folder.is_dir()]
    except OSError:
        return None
    return max(folders, key=lambda folder: folder.stat().st_mtime, default=None)


# ----- the bundled model -----------------------------------------------------------------------
def bundled_models() -> Iterable[LocalModel]:
    """The model shipped with EmbedExplorer: on every machine, a fresh one included."""
    from ..common.errors import ModelNotFoundError
    from .resolve import BUNDLED_NAME, bundled_model_dir

    try:
        folder = bundled_model_dir()
    except ModelNotFoundError:  # an install without it: nothing to list
        return
    if is_dir_quietly(folder):
        yield folder_entry(folder, BUNDLED_NAME, BUNDLED, "bundled")


# ----- recent files ------------------------------------------------------------------------------
def _recent_models(recent: Sequence[str]) -> Iterable[LocalModel]:
    """Recent specs that are paths (Hub ids and Ollama names are listed by their own finders)."""
    from .resolve import FOLDER_FILES

    for spec in recent:
        path = Path(spec).expanduser()
        if not path.is_absolute():
            continue
        if path.name in FOLDER_FILES:
            path = path.parent
        if is_dir_quietly(path):
            yield folder_entry(path, path.name, spec, "recent")
        elif is_file_quietly(path) or split_name(path) is not None:
            entry = gguf_entry(path, path.name, "recent")
            if entry is not None:
                yield entry
        else:
            yield LocalModel(path.name, spec, 0, "recent", str(path), "", "", "file not found")


def _may_be_model_file(path: Path) -> bool:
    """A regular file, or a link whose file is gone (listed as missing); a FIFO or a device named x.gguf is neither."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return os.path.islink(path)
    except (OSError, ValueError):
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0
