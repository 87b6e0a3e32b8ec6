"""Hub look-ups and table-only downloads: the safetensors headers, then only the embedding rows.

A safetensors file says in its header where each tensor's bytes lie, and the Hub
answers HTTP range requests, so a model's token table (and its position table) can
be fetched without the rest of the checkpoint: 157 MB of GPT-2's 548 MB, a few
hundred MB of an 8-billion-weight model's 16 GB. Every request goes through
huggingface_hub's own session, endpoint, token and offline settings.

The result is a small, valid model folder in the app's own cache (``table_store``),
never a partial file in the Hugging Face cache where other tools would take it for
complete. It is filled under ``.partial/`` and renamed into place only after every
tensor's byte count was checked against the Hub's header; a download that is cut
off resumes from the bytes that arrived.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from ..common.errors import CorruptWeightsError, EmbedExplorerError, Interrupted, OfflineError
from ..common.files import TOKENIZER_FILE_LIMIT, atomic_write_bytes, open_own_file, read_own_file
from ..common.progress import ProgressCallback
from ..formats.safetensors_io import INDEX_FILE, SINGLE_FILE, TensorEntry, read_header
from ..formats.table_store import NOTE_FILE, NOTE_FORMAT, partial_folder, table_folder
from ..readers.base import check_table_shape
from ..readers.folder_layout import POSITION_TABLE_NAMES, _find_tensor, _find_token_table, _read_config
from ..readers.safetensors import count_model_weights
from .hub_ranges import SMALL_FILE_LIMITS, Piece, Remote
from .hub_session import (
    DOWNLOAD_PATTERNS,
    bound_hub_waits,
    download_failure,
    quiet_hub,
    refuse_if_offline,
    refuse_without_safetensors,
)
from .hub_small_files import fetch_intact, kept_intact

STATE_FILE = "download-state.json"
PART_FILE = SINGLE_FILE + ".part"
# Attempts in a row that bring no new byte before a download gives up (it resumes next time).
ATTEMPTS = 3


# The small files a table needs beside its weights: the same names a full download takes.
SMALL_FILES = tuple(p for p in DOWNLOAD_PATTERNS if "*" not in p and p != INDEX_FILE)

# The download's own state file: a few KB (a thousand-shard model's plan is under 4 MB).
STATE_FILE_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class TableDownload:
    """A finished table-only download: its folder, what crossed the network, and notes for the user."""

    folder: Path
    received_bytes: int
    notes: tuple[str, ...] = ()


def download_table(
    repo_id: str,
    progress: ProgressCallback | None = None,
    *,
    revision: str = "main",
    should_stop: Callable[[], bool] | None = None,
) -> TableDownload:
    """Download only ``repo_id``'s token and position tables into the app's cache.

    ``progress(done, total, message)`` counts bytes of the tables. ``should_stop`` is
    asked between blocks; when it says yes, ``Interrupted`` is raised and what arrived
    is kept for the next attempt. Raises ``OfflineError`` (no network, no such model,
    gated without a login, cut off), ``UnsafeCheckpointError`` (pickles only) or
    ``CorruptWeightsError`` (a header that does not match its file).
    """
    refuse_if_offline(repo_id)
    from huggingface_hub import get_token

    token = get_token()
    bound_hub_waits()
    with quiet_hub():
        try:
            return _Download(repo_id, revision, token, progress, should_stop).run()
        except (EmbedExplorerError, Interrupted):
            raise
        except Exception as exc:  # noqa: BLE001 - network errors come in many types
            raise OfflineError(download_failure(repo_id, exc)) from exc


class _Download:
    """One table-only download, from the repository's file list to the renamed folder."""

    def __init__(
        self,
        repo_id: str,
        revision: str,
        token: str | None,
        progress: ProgressCallback | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        self.repo_id = repo_id
        self.revision = revision
        self.token = token
        self.report = progress or (lambda done, total, message: None)
        self.should_stop = should_stop or (lambda: False)
        self.staging = partial_folder(repo_id)

    def check(self) -> None:
        if self.should_stop():
            raise Interrupted(f"The download of '{self.repo_id}' was stopped; what arrived is kept for next time.")

    def run(self) -> TableDownload:
        from huggingface_hub import HfApi

        info = HfApi(token=self.token).model_info(self.repo_id, revision=self.revision)
        commit = str(info.sha)
        names = {sibling.rfilename for sibling in info.siblings or []}
        refuse_without_safetensors(self.repo_id, names)
        with _one_at_a_time(self.staging, self.repo_id):
            return self._run(commit, names)

    def _run(self, commit: str, names: set[str]) -> TableDownload:
        remote = Remote(self.repo_id, commit, self.token)
        state = self._resume_state(commit)

        self.report(0, 0, f"Reading {self.repo_id}'s configuration and tokenizer")
        for name in SMALL_FILES:  # fetched again when an earlier try kept one cut short
            limit = SMALL_FILE_LIMITS.get(name, TOKENIZER_FILE_LIMIT)
            if name in names and not kept_intact(self.staging / name, limit):
                self.check()
                data = fetch_intact(name, partial(remote.whole, name, self.should_stop), self.repo_id)
                atomic_write_bytes(self.staging / name, data)
        if "plan" not in state:
            self.report(0, 0, f"Reading the headers of {self.repo_id}'s weights")
            state["plan"] = self._plan(remote, names)
            atomic_write_bytes(self.staging / STATE_FILE, json.dumps(state).encode("utf-8"))
        plan = state["plan"]
        pieces = [Piece(**{**p, "shape": tuple(p["shape"])}) for p in plan["pieces"]]
        head = _table_header(pieces)
        self._fetch(remote, pieces, head)
        self._check_written(pieces, head)
        folder = self._finish(commit, plan, pieces, head)
        notes: tuple[str, ...] = ()
        if remote.range_ignored:
            notes = (
                "The Hub's server ignored byte-range requests, so whole files were read through to pick out "
                f"the table ({remote.received / 1e6:,.1f} MB received); the table is complete and checked.",
            )
        return TableDownload(folder, remote.received, notes)

    def _resume_state(self, commit: str) -> dict[str, Any]:
        """What an earlier, unfinished download of the same commit left; a fresh start otherwise."""
        raw = read_own_file(self.staging / STATE_FILE, STATE_FILE_LIMIT)
        try:
            state = json.loads(raw.decode("utf-8")) if raw is not None else None
        except (ValueError, RecursionError):
            state = None
        if isinstance(state, dict) and state.get("repository") == self.repo_id and state.get("revision") == commit:
            return state
        # Another revision (or nothing usable): what is there belongs to no download we can continue.
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging.mkdir(parents=True, exist_ok=True)
        state = {"repository": self.repo_id, "revision": commit}
        atomic_write_bytes(self.staging / STATE_FILE, json.dumps(state).encode("utf-8"))
        return state

    def _plan(self, remote: Remote, names: set[str]) -> dict[str, object]:
        """Every shard's header: where the tables lie, and every tensor of the model for its counts."""
        config = _read_config(self.staging)
        shards = self._shards(remote, names)
        entries: dict[str, TensorEntry] = {}
        sizes: dict[str, int] = {}
        for shard in shards:
            self.check()
            try:
                found, sizes[shard] = remote.header(shard)
            except CorruptWeightsError as exc:
                raise CorruptWeightsError(
                    f"'{self.repo_id}' cannot be downloaded: the header of {exc} "
                    "Nothing beyond the file headers was downloaded."
                ) from exc
            entries.update(found)
        token_entry = _find_token_table(entries, config)
        # The shape bound the opener applies, applied before a single row is downloaded.
        check_table_shape(
            token_entry.shape[0], token_entry.shape[-1], f"The token table of '{self.repo_id}' ({token_entry.name})"
        )
        position_entry = _find_tensor(entries, POSITION_TABLE_NAMES, width=token_entry.shape[1])
        pieces = [
            Piece(e.name, str(e.file), e.dtype, e.shape, e.start, e.end)
            for e in (token_entry, position_entry)
            if e is not None
        ]
        return {
            "pieces": [p.as_json() for p in pieces],
            "tensors": {n: [str(e.file), e.dtype, list(e.shape)] for n, e in entries.items()},
            "shards": sizes,
            "model_weights": count_model_weights(entries, config, token_entry),
        }

    def _shards(self, remote: Remote, names: set[str]) -> list[str]:
        if INDEX_FILE in names:
            try:
                weight_map = json.loads(remote.whole(INDEX_FILE, self.should_stop))["weight_map"]
                shards = sorted({str(v) for v in weight_map.values()})
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                raise CorruptWeightsError(f"'{self.repo_id}' has a shard index that cannot be read: {exc}") from exc
            missing = [s for s in shards if s not in names]
            if missing:
                raise CorruptWeightsError(f"'{self.repo_id}' names shards it does not have: {', '.join(missing)}")
            return shards
        if SINGLE_FILE in names:
            return [SINGLE_FILE]
        return sorted(n for n in names if n.endswith(".safetensors") and "/" not in n)

    def _fetch(self, remote: Remote, pieces: list[Piece], head: bytes) -> None:
        """Append the tables' bytes to the part file, resuming after what is already there."""
        part = self.staging / PART_FILE
        total = sum(p.size for p in pieces)
        arrived = _arrived(part, head, total)
        message = f"Downloading the embedding table of {self.repo_id}"
        self.report(arrived, total, message)
        failures = 0
        while arrived < total:
            before = arrived
            try:
                arrived = self._fetch_from(remote, part, pieces, head, arrived, total, message)
            except (EmbedExplorerError, Interrupted):
                raise
            except Exception as exc:  # noqa: BLE001 - a cut connection comes in many types
                from huggingface_hub.errors import HfHubHTTPError

                if isinstance(exc, HfHubHTTPError):  # the server said no: asking again will not help
                    raise
                arrived = _arrived(part, head, total)
                failures = 0 if arrived > before else failures + 1
                if failures >= ATTEMPTS:
                    raise
                time.sleep(0.5 * failures)

    def _fetch_from(
        self,
        remote: Remote,
        part: Path,
        pieces: list[Piece],
        head: bytes,
        arrived: int,
        total: int,
        message: str,
    ) -> int:
        step, reported = max(total // 200, 1), arrived
        with open_own_file(part, fresh=False) as out:  # never through a link planted under its name
            out.seek(len(head) + arrived)
            out.truncate()
            offset = 0
            for piece in pieces:
                if arrived >= offset + piece.size:
                    offset += piece.size
                    continue
                with remote.span(piece.shard, piece.start + arrived - offset, piece.end) as (blocks, _):
                    if remote.range_ignored:  # said where the user is watching, not only at the end
                        message = f"Downloading the embedding table of {self.repo_id} (whole files: no ranges)"
                    for block in blocks:
                        out.write(block)
                        arrived += len(block)
                        # Every half per cent: a 1 GB table is 16,000 blocks, not 16,000 status updates.
                        if arrived - reported >= step or arrived == total:
                            self.report(arrived, total, message)
                            reported = arrived
                        self.check()
                offset += piece.size
            out.flush()
            os.fsync(out.fileno())
        return arrived

    def _check_written(self, pieces: list[Piece], head: bytes) -> None:
        """Every tensor's byte count, dtype and shape against the Hub's header, before the folder counts."""
        part = self.staging / PART_FILE
        written = read_header(part)
        expected_size = len(head) + sum(p.size for p in pieces)
        if part.stat().st_size != expected_size:
            raise CorruptWeightsError(
                f"The table of '{self.repo_id}' has {part.stat().st_size:,} bytes, not {expected_size:,}."
            )
        for piece in pieces:
            got = written.get(piece.name)
            if got is None or (got.dtype, got.shape, got.end - got.start) != (piece.dtype, piece.shape, piece.size):
                raise CorruptWeightsError(f"Tensor {piece.name!r} of '{self.repo_id}' does not match its header.")

    def _finish(self, commit: str, plan: dict[str, Any], pieces: list[Piece], head: bytes) -> Path:
        from huggingface_hub import constants

        weights = self.staging / SINGLE_FILE
        os.replace(self.staging / PART_FILE, weights)
        note = {
            "format": NOTE_FORMAT,
            "what": "The token table (and position table) of a Hub model, downloaded alone by EmbedExplorer; "
            "the model's other weights are not here. 'tensors' lists every tensor of the whole model.",
            "repository": self.repo_id,
            "revision": commit,
            "asked_for": self.revision,
            "endpoint": constants.ENDPOINT,
            "downloaded": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "tables": [p.name for p in pieces],
            "weights_file_bytes": weights.stat().st_size,
            "model_weights": plan["model_weights"],
            "checkpoint_bytes": sum(plan["shards"].values()),
            "shards": plan["shards"],
            "tensors": plan["tensors"],
        }
        atomic_write_bytes(self.staging / NOTE_FILE, json.dumps(note, indent=1).encode("utf-8"))
        (self.staging / STATE_FILE).unlink(missing_ok=True)
        final = table_folder(self.repo_id)
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        if final.exists():
            final.rename(old)
        self.staging.rename(final)
        shutil.rmtree(old, ignore_errors=True)
        return final


@contextmanager
def _one_at_a_time(staging: Path, repo_id: str) -> Iterator[None]:
    """Hold a lock beside ``staging``: two downloads of one model would write into one part file."""
    staging.parent.mkdir(parents=True, exist_ok=True)
    with open(staging.parent / f"{staging.name}.lock", "a+b") as handle:
        try:
            if sys.platform == "win32":
                import msvcrt

                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise OfflineError(
                f"Another download of '{repo_id}' is running (in another window or command); "
                "wait for it to finish, then open the model."
            ) from exc
        yield  # closing the file releases the lock, also when the process dies


def _arrived(part: Path, head: bytes, total: int) -> int:
    """Bytes of the tables already in the part file; a part file with another header starts over."""
    with open_own_file(part, fresh=False) as existing:  # a link or a FIFO there is replaced, never followed
        if existing.read(len(head)) == head:
            return min(os.fstat(existing.fileno()).st_size - len(head), total)
        existing.seek(0)
        existing.truncate()
        existing.write(head)
    return 0


def _table_header(pieces: list[Piece]) -> bytes:
    """The safetensors header of the folder's one weights file: the tables, back to back."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for piece in pieces:
        span = [offset, offset + piece.size]
        header[piece.name] = {"dtype": piece.dtype, "shape": list(piece.shape), "data_offsets": span}
        offset += piece.size
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # the rows start on an 8-byte boundary, so they map aligned
    return struct.pack("<Q", len(raw)) + raw
