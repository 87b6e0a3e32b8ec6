"""A model's tokenizer run in a child process, for callers whose other threads must never wait.

The Rust tokenizers library holds Python's global lock while it builds a
tokenizer: about 90 ms for GPT-2's 50,257 tokens and 50,000 merges, during
which no other thread of the process runs Python, the window's included.  The
window's worker therefore builds and runs the tokenizer in a small child
process and only sends it text.  The child answers on its stdout with
length-prefixed JSON; it exits when its stdin closes, so it never outlives
the window.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import IO, Any

from . import errors
from .errors import EmbedExplorerError, TokenizerStartError

# The flag the app's entry point reads to run this module's child side (frozen apps have no -m).
CHILD_FLAG = "--tokenizer-process"
_HEADER = struct.Struct("<I")
# A child that sends nothing for this long is taken to be dead.
_ANSWER_TIMEOUT_S = 120.0


def child_command(folder: Path) -> tuple[list[str], dict[str, str]]:
    """How to start the child: the frozen app runs itself, a Python install runs the package."""
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_FLAG, str(folder)], env
    # The child must import this very package, even when it runs from a checkout that is not installed.
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    return [sys.executable, "-m", "embedexplorer", CHILD_FLAG, str(folder)], env


# ----- the protocol, shared with the child (tokenizer_child.py) -----------------------------
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


def _raise_from(message: dict[str, Any]) -> None:
    kind = getattr(errors, str(message.get("kind")), EmbedExplorerError)
    if not (isinstance(kind, type) and issubclass(kind, EmbedExplorerError)):
        kind = EmbedExplorerError
    raise kind(str(message.get("error")))


# ----- the parent --------------------------------------------------------------------------
class TokenizerProcess:
    """The parent's handle on one child: ``facts()`` waits for the description, ``encode`` asks.

    Starting returns at once, so the caller can map the weights while the child
    loads.  A child that dies is started again on the next request.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._facts: dict[str, Any] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._start()

    def _start(self) -> None:
        command, env = child_command(self.folder)
        # The child's complaints go to a file, read only when it fails to start.
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env
        )
        # Pipes close and the child exits even if nobody calls close().
        weakref.finalize(self, _stop, self._process)

    def facts(self) -> dict[str, Any]:
        """The tokenizer's description (sizes, raw tokens); raises the child's load error."""
        with self._lock:
            if self._facts is None:
                self._facts = self._read_facts()
            return self._facts

    def _read_facts(self) -> dict[str, Any]:
        message = self._answer()
        if message is None:
            raise TokenizerStartError(
                f"The tokenizer of {self.folder} could not be started (its process stopped){self._last_words()}."
            )
        if "error" in message:
            _raise_from(message)
        return dict(message["facts"])

    def _last_words(self) -> str:
        """The last line the child wrote to stderr, to say why it stopped."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            lines = self._stderr.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):
            return ""
        return f": {lines[-1]}" if lines else ""

    def encode(self, text: str) -> list[int]:
        with self._lock:
            for _attempt in range(2):
                process = self._process
                if process is None or process.poll() is not None:
                    self._start()
                    self._read_facts()
                    process = self._process
                assert process is not None and process.stdin is not None
                try:
                    send_message(process.stdin, {"encode": text})
                    message = self._answer()
                except (BrokenPipeError, OSError):
                    message = None
                if message is not None:
                    if "error" in message:
                        _raise_from(message)
                    return [int(i) for i in message["ids"]]
                _stop(process)  # it died mid-answer: start a new one, once
            raise EmbedExplorerError("The tokenizer process stopped twice; open the model again.")

    def _answer(self) -> dict[str, Any] | None:
        process = self._process
        if process is None or process.stdout is None:
            return None
        timer = threading.Timer(_ANSWER_TIMEOUT_S, process.kill)
        timer.start()
        try:
            return receive_message(process.stdout)
        finally:
            timer.cancel()

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                _stop(self._process)
                self._process = None
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin (it exits on its own) and reap it; kill it if it lingers."""
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
