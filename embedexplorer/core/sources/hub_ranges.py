"""Reading a Hub repository by byte ranges: the safetensors headers, then only the tensors asked for.

A safetensors file says in its header where each tensor's bytes lie, and the Hub answers HTTP
range requests; a header whose offsets do not fit its file is refused.
"""

from __future__ import annotations

import re
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import CorruptWeightsError, Interrupted, OfflineError
from ..common.files import CONFIG_FILE_LIMIT, SHARD_INDEX_LIMIT, TOKENIZER_FILE_LIMIT, size_text
from ..formats.safetensors_io import INDEX_FILE, MAX_HEADER_BYTES, TensorEntry, parse_header
from .hub_small_files import CutShortError

# Seconds a small file (config, tokenizer, shard index) may take in all: a Hub that sends
# it a byte a second is given up on, not waited for (a real one takes well under a second).
SMALL_FILE_SECONDS = 60.0
# The most bytes each small file may have, as when it is read from disk.
SMALL_FILE_LIMITS = {"config.json": CONFIG_FILE_LIMIT, INDEX_FILE: SHARD_INDEX_LIMIT}


@dataclass(frozen=True)
class Piece:
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


class Cut(OSError):
    """The server closed the connection before the bytes asked for had arrived."""


class Remote:
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
        raise Cut(f"the connection closed {count:,} bytes short")

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
        check_layout(shard, entries, 8 + header_len, size)
        return entries, size


def _content_range(value: str) -> tuple[int, int | None]:
    """``bytes 10-19/100`` -> (10, 100); the size is None when the server writes ``*``."""
    found = re.fullmatch(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*", value)
    if not found:
        raise CorruptWeightsError(f"The Hub answered a range request with an unreadable Content-Range {value!r}.")
    total = found.group(3)
    return int(found.group(1)), None if total == "*" else int(total)


def check_layout(shard: str, entries: dict[str, TensorEntry], data_start: int, size: int) -> None:
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
