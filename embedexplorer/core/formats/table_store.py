"""Where table-only downloads live: one small model folder per Hub id in the app's cache.

A folder here is complete by construction: a download fills a folder under
``.partial/`` and renames it into place only after every tensor's bytes were
checked against the Hub's header, so a folder at its final name never holds half a
table. Reading this store never touches the network.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..common.cache import cache_dir
from ..common.files import read_own_file
from .safetensors_io import SINGLE_FILE, TensorEntry

# The note beside the table: repository, revision and every tensor of the whole model.
NOTE_FILE = "embedexplorer-table.json"
NOTE_FORMAT = 1
# The note lists every tensor of the whole model: 100 KB for a thousand tensors.
NOTE_LIMIT = 64 * 1024 * 1024


def tables_dir() -> Path:
    return cache_dir() / "tables"


def table_folder(repo_id: str) -> Path:
    """The final folder of ``repo_id``'s table (it may not exist)."""
    return tables_dir() / _folder_name(repo_id)


def partial_folder(repo_id: str) -> Path:
    """The folder a download of ``repo_id``'s table fills before it counts as complete."""
    return tables_dir() / ".partial" / _folder_name(repo_id)


def _folder_name(repo_id: str) -> str:
    # Hub ids are "owner/name" (validated before this is called): "--" as the HF cache spells it.
    return repo_id.replace("/", "--")


def read_note(folder: Path) -> dict[str, object] | None:
    """The note of a table-only folder, or None when ``folder`` is not one (or is broken)."""
    raw = read_own_file(folder / NOTE_FILE, NOTE_LIMIT)  # never a link, a FIFO or a giant
    try:
        note = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(note, dict) or note.get("format") != NOTE_FORMAT:
        return None
    return note


def stored_table_folder(repo_id: str) -> Path | None:
    """``repo_id``'s table-only folder when a download of it finished, else None."""
    folder = table_folder(repo_id)
    note = read_note(folder)
    if note is None or note.get("repository") != repo_id:
        return None
    try:
        size = (folder / SINGLE_FILE).stat().st_size
    except OSError:
        return None
    # A folder someone emptied or cut by hand is not offered as a model.
    return folder if size == note.get("weights_file_bytes") and (folder / "config.json").is_file() else None


def whole_model_entries(folder: Path) -> dict[str, TensorEntry] | None:
    """Every tensor of the whole model as the note lists it (names, dtypes, shapes), or None.

    The entries carry no byte ranges: they are for counting the model's weights, which
    the table-only folder does not hold.
    """
    note = read_note(folder)
    tensors = note.get("tensors") if note else None
    if not isinstance(tensors, dict):
        return None
    entries: dict[str, TensorEntry] = {}
    try:
        for name, (shard, dtype, shape) in tensors.items():
            entries[name] = TensorEntry(name, Path(str(shard)), str(dtype), tuple(int(n) for n in shape), 0, 0)
    except (TypeError, ValueError):
        return None
    return entries
