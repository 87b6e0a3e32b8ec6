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
import logging
import os
import re
import shutil
import struct
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from fnmatch import fnmatch
from functools import partial
from pathlib import Path
from typing import Any

from ..common.constants import hub_offline
from ..common.errors import CorruptWeightsError, EmbedExplorerError, Interrupted, OfflineError, UnsafeCheckpointError
from ..common.files import (
    CONFIG_FILE_LIMIT,
    SHARD_INDEX_LIMIT,
    TOKENIZER_FILE_LIMIT,
    atomic_write_bytes,
    open_own_file,
    read_own_file,
    size_text,
)
from ..common.progress import ProgressCallback
from ..formats.safetensors_io import (
    INDEX_FILE,
    MAX_HEADER_BYTES,
    PICKLE_FILES,
    PICKLE_PATTERNS,
    SINGLE_FILE,
    TensorEntry,
    parse_header,
    read_header,
    weight_files,
)
from ..formats.table_store import NOTE_FILE, NOTE_FORMAT, partial_folder, table_folder
from ..readers.base import check_table_shape
from ..readers.safetensors import (
    POSITION_TABLE_NAMES,
    _find_tensor,
    _find_token_table,
    _read_config,
    count_model_weights,
)
from .hub_small_files import CutShortError, fetch_intact, kept_intact

STATE_FILE = "download-state.json"
PART_FILE = SINGLE_FILE + ".part"
# Attempts in a row that bring no new byte before a download gives up (it resumes next time).
ATTEMPTS = 3


# Only what an embedding table needs: never the pickled *.bin, never custom code.
DOWNLOAD_PATTERNS = [
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "*.safetensors",
    "model.safetensors.index.json",
]

# The small files a table needs beside its weights: the same names a full download takes.
SMALL_FILES = tuple(p for p in DOWNLOAD_PATTERNS if "*" not in p and p != INDEX_FILE)

# Seconds a download waits on a Hub that accepted the connection but does not answer.
HUB_TIMEOUT_SECONDS = 20.0
# Seconds a small file (config, tokenizer, shard index) may take in all: a Hub that sends
# it a byte a second is given up on, not waited for (a real one takes well under a second).
SMALL_FILE_SECONDS = 60.0
# The most bytes each small file may have, as when it is read from disk.
SMALL_FILE_LIMITS = {"config.json": CONFIG_FILE_LIMIT, INDEX_FILE: SHARD_INDEX_LIMIT}
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
    with _quiet_hub():
        try:
            return _Download(repo_id, revision, token, progress, should_stop).run()
        except (EmbedExplorerError, Interrupted):
            raise
        except Exception as exc:  # noqa: BLE001 - network errors come in many types
            raise OfflineError(download_failure(repo_id, exc)) from exc


@contextmanager
def _quiet_hub() -> Iterator[None]:
    # A failure is reported once, by us, in one sentence: the hub's retry warnings stay quiet.
    hub_logger = logging.getLogger("huggingface_hub")
    level = hub_logger.level
    hub_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hub_logger.setLevel(level)


@dataclass(frozen=True)
class _Piece:
    """One tensor to fetch: its name, shard, dtype, shape and byte range in the shard."""

    name: str
    shard: str
    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start

    def as_json(self) -> dict[str, object]:
        return {**self.__dict__, "shape": list(self.shape)}


class _Cut(OSError):
    """The server closed the connection before the bytes asked for had arrived."""


class _Remote:
    """One repository at one commit, read through huggingface_hub's session and headers."""

    def __init__(self, repo_id: str, commit: str, token: str | None) -> None:
        from huggingface_hub import get_session
        from huggingface_hub.utils import build_hf_headers

        self.repo_id = repo_id
        self.commit = commit
        self.session = get_session()
        self.headers = build_hf_headers(token=token)
        self.received = 0  # bytes the server sent, counted as they arrive
        self.range_ignored = False

    def url(self, name: str) -> str:
        from huggingface_hub import constants, hf_hub_url

        return hf_hub_url(self.repo_id, name, revision=self.commit, endpoint=constants.ENDPOINT)

    def whole(self, name: str, should_stop: Callable[[], bool] | None = None) -> bytes:
        """A small file, whole: at most its kind's size, within SMALL_FILE_SECONDS, stoppable between blocks."""
        from huggingface_hub.utils import hf_raise_for_status

        limit = SMALL_FILE_LIMITS.get(name, TOKENIZER_FILE_LIMIT)
        deadline = time.monotonic() + SMALL_FILE_SECONDS
        pieces: list[bytes] = []
        size = 0
        with self.session.stream("GET", self.url(name), headers=self.headers) as response:
            if response.status_code >= 300:
                response.read()
                hf_raise_for_status(response)
                raise OfflineError(f"The Hub answered {response.status_code} for {name} of '{self.repo_id}'.")
            for block in response.iter_bytes():
                self.received += len(block)
                size += len(block)
                if size > limit:
                    raise CorruptWeightsError(
                        f"The Hub sent more than {size_text(limit)} for {name} of '{self.repo_id}', more than "
                        "such a file can sensibly be, so the download was stopped."
                    )
                pieces.append(block)
                if should_stop is not None and should_stop():
                    raise Interrupted(f"The download of '{self.repo_id}' was stopped.")
                if time.monotonic() > deadline:
                    raise OfflineError(
                        f"The Hub took more than {SMALL_FILE_SECONDS:g} seconds to send {name} of "
                        f"'{self.repo_id}' ({size:,} bytes so far), so the download was stopped. Try again later."
                    )
            announced = response.headers.get("Content-Length")
            plain = not response.headers.get("Content-Encoding")  # a compressed length is not the file's
            if plain and announced and announced.isdigit() and size < int(announced):
                raise CutShortError(f"{size:,} of the {int(announced):,} bytes it announced")
        return b"".join(pieces)

    @contextmanager
    def span(self, name: str, start: int, end: int) -> Iterator[tuple[Iterator[bytes], int | None]]:
        """Bytes ``[start, end)`` of a file in blocks, and the file's size when the server says it.

        A server that ignores Range and sends the whole file is read through to
        ``start`` (and the download says so); the blocks stop at ``end`` either way.
        """
        from huggingface_hub.utils import hf_raise_for_status

        asked = {**self.headers, "Range": f"bytes={start}-{end - 1}"}
        with self.session.stream("GET", self.url(name), headers=asked) as response:
            if response.status_code >= 300:
                response.read()
                hf_raise_for_status(response)
                raise OfflineError(f"The Hub answered {response.status_code} for {name} of '{self.repo_id}'.")
            skip, size = 0, None
            if response.status_code == 206:
                first, size = _content_range(response.headers.get("Content-Range", ""))
                if first != start:
                    raise CorruptWeightsError(
                        f"The Hub sent bytes from {first} of {name} when bytes from {start:,} were asked for."
                    )
            else:  # 200: the whole file, from its first byte
                self.range_ignored = True
                skip = start
                length = response.headers.get("Content-Length")
                size = int(length) if length and length.isdigit() else None
            # Blocks as they arrive (not gathered into larger ones), so a cut keeps every byte that came.
            yield self._blocks(response.iter_bytes(), skip, end - start), size

    def _blocks(self, stream: Iterator[bytes], skip: int, count: int) -> Iterator[bytes]:
        for block in stream:
            self.received += len(block)
            if skip:
                dropped = min(skip, len(block))
                block, skip = block[dropped:], skip - dropped
            if not block:
                continue
            block = block[:count]
            count -= len(block)
            yield block
            if count == 0:
                return
        raise _Cut(f"the connection closed {count:,} bytes short")

    def read(self, name: str, start: int, end: int) -> tuple[bytes, int | None]:
        """Bytes ``[start, end)`` of a file in one piece (headers are small), and the file's size."""
        with self.span(name, start, end) as (blocks, size):
            return b"".join(blocks), size

    def header(self, shard: str) -> tuple[dict[str, TensorEntry], int]:
        """One shard's tensors, read from its header alone (two small range requests), and its size."""
        prefix, size = self.read(shard, 0, 8)
        (header_len,) = struct.unpack("<Q", prefix)
        if header_len > MAX_HEADER_BYTES or (size is not None and 8 + header_len > size):
            raise CorruptWeightsError(f"{shard} has a broken header: it is not a safetensors file.")
        raw, _ = self.read(shard, 8, 8 + header_len)
        if size is None:
            raise CorruptWeightsError(f"The Hub did not say how long {shard} is, so its header cannot be checked.")
        entries = parse_header(raw, Path(shard), 8 + header_len, size)
        _check_layout(shard, entries, 8 + header_len, size)
        return entries, size


def _content_range(value: str) -> tuple[int, int | None]:
    """``bytes 10-19/100`` -> (10, 100); the size is None when the server writes ``*``."""
    found = re.fullmatch(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*", value)
    if not found:
        raise CorruptWeightsError(f"The Hub answered a range request with an unreadable Content-Range {value!r}.")
    total = found.group(3)
    return int(found.group(1)), None if total == "*" else int(total)


def _check_layout(shard: str, entries: dict[str, TensorEntry], data_start: int, size: int) -> None:
    """The tensors must tile the data exactly, as the safetensors library itself requires.

    Sizes alone are checked by ``parse_header``; this catches a header whose ranges
    overlap, leave gaps or stop short, so the bytes fetched are the tensor's own.
    """
    position = data_start
    for entry in sorted(entries.values(), key=lambda e: (e.start, e.end)):
        if entry.start != position:
            raise CorruptWeightsError(
                f"{shard}: tensor {entry.name!r} starts at byte {entry.start:,}, but the tensor before it "
                f"ends at byte {position:,}; the header's byte ranges overlap or leave gaps."
            )
        position = entry.end
    if position != size:
        raise CorruptWeightsError(
            f"{shard}: the header's tensors end at byte {position:,}, but the file has {size:,} bytes."
        )


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
        _refuse_without_safetensors(self.repo_id, names)
        with _one_at_a_time(self.staging, self.repo_id):
            return self._run(commit, names)

    def _run(self, commit: str, names: set[str]) -> TableDownload:
        remote = _Remote(self.repo_id, commit, self.token)
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
        pieces = [_Piece(**{**p, "shape": tuple(p["shape"])}) for p in plan["pieces"]]
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

    def _plan(self, remote: _Remote, names: set[str]) -> dict[str, object]:
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
            _Piece(e.name, str(e.file), e.dtype, e.shape, e.start, e.end)
            for e in (token_entry, position_entry)
            if e is not None
        ]
        return {
            "pieces": [p.as_json() for p in pieces],
            "tensors": {n: [str(e.file), e.dtype, list(e.shape)] for n, e in entries.items()},
            "shards": sizes,
            "model_weights": count_model_weights(entries, config, token_entry),
        }

    def _shards(self, remote: _Remote, names: set[str]) -> list[str]:
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

    def _fetch(self, remote: _Remote, pieces: list[_Piece], head: bytes) -> None:
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
        remote: _Remote,
        part: Path,
        pieces: list[_Piece],
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

    def _check_written(self, pieces: list[_Piece], head: bytes) -> None:
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

    def _finish(self, commit: str, plan: dict[str, Any], pieces: list[_Piece], head: bytes) -> Path:
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


def _table_header(pieces: list[_Piece]) -> bytes:
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


def _refuse_without_safetensors(repo_id: str, names: set[str]) -> None:
    if any(n.endswith(".safetensors") and "/" not in n for n in names):
        return
    pickles = [n for n in PICKLE_FILES if n in names] or sorted(
        n for n in names if any(fnmatch(n, pattern) for pattern in PICKLE_PATTERNS)
    )
    if pickles:
        raise UnsafeCheckpointError(
            f"'{repo_id}' has no safetensors weights on the Hugging Face Hub, only pickled ones ({pickles[0]}). "
            "Loading a pickle can run arbitrary code, so EmbedExplorer does not download it."
        )
    raise OfflineError(f"'{repo_id}' has no weights on the Hugging Face Hub (no *.safetensors file).")


# ----- what every Hub download shares: limits, the offline setting, failure messages ------------
def refuse_if_offline(repo_id: str) -> None:
    """Say at once that a download cannot start when HF_HUB_OFFLINE is set."""
    if hub_offline():
        raise OfflineError(
            f"'{repo_id}' is not in the local Hugging Face cache and HF_HUB_OFFLINE is set. "
            "Open a local model folder instead, or unset HF_HUB_OFFLINE to download it."
        )


def bound_hub_waits() -> None:
    """Make every Hub request give up after HUB_TIMEOUT_SECONDS of silence.

    huggingface_hub asks for the repository's file list with no timeout at all, so a
    server that accepts the connection and never answers would hang the download
    forever. A request hook on its shared client fills in our limit wherever the
    request has none (file downloads keep their own).
    """
    from huggingface_hub import get_session

    session = get_session()
    hooks = session.event_hooks
    if _limit_request_wait not in hooks.get("request", []):
        hooks.setdefault("request", []).append(_limit_request_wait)
        session.event_hooks = hooks


def _limit_request_wait(request: object) -> None:
    extensions = getattr(request, "extensions", None)
    if not isinstance(extensions, dict):
        return
    limits = {"connect": None, "read": None, "write": None, "pool": None, **(extensions.get("timeout") or {})}
    extensions["timeout"] = {k: HUB_TIMEOUT_SECONDS if v is None else v for k, v in limits.items()}


def download_failure(repo_id: str, exc: BaseException) -> str:
    """One plain sentence for why a download failed: offline, no such model, or cut off."""
    names = {type(e).__name__ for e in _chain(exc)}
    logged_in = _has_token()
    if "GatedRepoError" in names:
        if logged_in:
            return (
                f"The Hugging Face Hub refused your token for '{repo_id}': the model is gated. "
                "Ask for access on its page on the Hub, or log in with a token that has it (hf auth login)."
            )
        return f"'{repo_id}' is gated on the Hugging Face Hub: it needs a login. {LOGIN_HINT}"
    if names & {"RepositoryNotFoundError", "HFValidationError"}:
        return (
            f"There is no model '{repo_id}' on the Hugging Face Hub that can be downloaded "
            + ("with your token." if logged_in else "without a login.")
            + " Check the id, or open a local model folder."
            + ("" if logged_in else f" If it is private: {LOGIN_HINT}")
        )
    if names & {"TimeoutException", "ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutError"}:
        return (
            f"The Hugging Face Hub did not answer within {HUB_TIMEOUT_SECONDS:g} seconds while "
            f"downloading '{repo_id}'. Try again later, or open a local model folder."
        )
    if names & {"ConnectError", "ConnectTimeout", "ConnectionError", "OfflineModeIsEnabled"} or (
        "LocalEntryNotFoundError" in names and "connection" in str(exc).lower()
    ):
        return (
            f"Cannot reach the Hugging Face Hub to download '{repo_id}': you seem to be offline. "
            "Open a local model folder instead, or try again when you are online."
        )
    return (
        f"The download of '{repo_id}' stopped before it finished ({_short(exc)}). "
        "Nothing half-downloaded is kept as if complete; run the download again, "
        "or open a local model folder."
    )


LOGIN_HINT = (
    "Log in with 'hf auth login' (older versions: 'huggingface-cli login'), "
    "or set HF_TOKEN to an access token, then download again."
)


def _has_token() -> bool:
    """True when huggingface_hub has a token to send (HF_TOKEN or a saved login)."""
    try:
        from huggingface_hub import get_token

        return bool(get_token())
    except Exception:  # noqa: BLE001 - a broken token file is no token
        return False


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def snapshot_is_complete(folder: Path) -> bool:
    """True when a cached snapshot has a config and all its weights (an interrupted
    download leaves a snapshot folder with the small files but not the weights)."""
    if not (folder / "config.json").is_file():
        return False
    try:
        return bool(weight_files(folder))
    except EmbedExplorerError:  # a broken index, a missing shard, or no safetensors at all
        return False
