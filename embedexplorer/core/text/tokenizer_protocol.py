"""The messages between the app and its tokenizer's child process: length-prefixed JSON on pipes.

Both sides import this; it holds no process handling (``tokenizer_process``, the parent's) and
no tokenizer code (``tokenizer_child``), so the child starts with the least to import.
"""

from __future__ import annotations

import json
import struct
from typing import IO, Any

from ..common.errors import EmbedExplorerError

# The flag the app's entry point reads to run the child side (frozen apps have no -m).
CHILD_FLAG = "--tokenizer-process"
# In place of the table's row count: the child loads its tokenizer, then waits for the count
# (``{"max_rows": n}``) before it describes the tokenizer. See ``tokenizer_process.start_early``.
ROWS_LATER = "later"
# Tokens of an encoded text sent with its ids, at most (the most a report shows, texts.MAX_SHOWN_TOKENS).
LISTED_WITH_IDS = 2_048
# The child's address space: far above what a real tokenizer needs (GPT-2's takes 150 MB, a
# 64 MB tokenizer file about 1 GB), low enough that a tokenizer built to blow up memory fails
# inside the child, not the machine.
CHILD_MEMORY_LIMIT = 3 * 1024**3

_HEADER = struct.Struct("<I")


def send_message(stream: IO[bytes], message: dict[str, Any]) -> None:
    data = json.dumps(message, ensure_ascii=False).encode("utf-8")
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def receive_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None when the other side has closed the pipe."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    message = json.loads(data.decode("utf-8"))
    return message if isinstance(message, dict) else None


def error_message(exc: BaseException) -> dict[str, Any]:
    kind = type(exc).__name__ if isinstance(exc, EmbedExplorerError) else "EmbedExplorerError"
    text = str(exc) if isinstance(exc, EmbedExplorerError) else f"{type(exc).__name__}: {exc}"
    return {"error": text, "kind": kind}
