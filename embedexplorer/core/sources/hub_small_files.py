"""The small files of a Hub download (config, tokenizer, shard index): whole and checked, or fetched again.

A proxy or a dropped connection can end a file early with no error.  A config.json cut
short and kept under ``.partial/`` would fail every later try the same way, so a small
file is kept only when it arrived whole (as long as the server said, and valid JSON for a
``.json`` file); one found cut short when a download resumes is fetched again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..common.errors import CorruptWeightsError, OfflineError
from ..common.files import read_own_file

# Tries for one small file before the download gives up on it.
SMALL_FILE_TRIES = 3


class CutShortError(OfflineError):
    """The server ended a file before the length it announced."""


def intact(name: str, data: bytes) -> bool:
    """True when ``data`` can be the whole of the file ``name``: valid JSON for a .json file."""
    if not name.endswith(".json"):
        return True
    try:
        json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return True


def kept_intact(path: Path, limit: int) -> bool:
    """True when a small file kept by an earlier try is a plain file that arrived whole."""
    data = read_own_file(path, limit)
    return data is not None and intact(path.name, data)


def fetch_intact(name: str, fetch: Callable[[], bytes], repo_id: str) -> bytes:
    """``fetch()`` until it gives the whole file (at most SMALL_FILE_TRIES times); never a file cut short."""
    why = ""
    for _attempt in range(SMALL_FILE_TRIES):
        try:
            data = fetch()
        except CutShortError as exc:
            why = str(exc)
            continue
        if intact(name, data):
            return data
        why = f"{len(data):,} bytes that are not valid JSON"
    raise CorruptWeightsError(
        f"The Hub sent {name} of '{repo_id}' cut short or damaged {SMALL_FILE_TRIES} times ({why}); nothing of it "
        "was kept. Try again later (a proxy may be cutting the file)."
    )
