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

import _thread
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..common import errors
from ..common.errors import EmbedExplorerError, TokenizerFailedError, TokenizerStartError
from .tokenizer_protocol import CHILD_FLAG, ROWS_LATER, receive_message, send_message

if TYPE_CHECKING:  # the parent's side; the child imports this module for the protocol alone
    import subprocess

# A child that has not described its tokenizer after this long is stopped: a tokenizer file
# is at most files.TOKENIZER_FILE_LIMIT bytes, which loads in a few seconds.
LOAD_TIMEOUT_S = 60.0
# One text is at most MAX_TEXT_CHARS characters, which any sane tokenizer reads in well under
# a second; one that takes longer is stuck (a catastrophic pattern) and is stopped.
ENCODE_TIMEOUT_S = 20.0
# One batch of the round trip (ROUND_TRIP_BATCH tokens decoded and encoded again, a few
# texts each) takes under a second for the tokenizers library and a few for a GGUF file's
# tokenizer rebuilt in Python; one that takes longer is stuck on one of its tokens.
ROUND_TRIP_TIMEOUT_S = 120.0
# Listing every token by id takes well under a second even for a vocabulary of a quarter million.
LIST_TIMEOUT_S = 60.0

# Run by ``python -I -c``: isolated mode puts neither the working folder nor the user's
# site-packages on sys.path and ignores PYTHON* variables; the paths the child does need
# arrive as the first argument.
_BOOTSTRAP = (
    "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); "
    "from embedexplorer.core.text.tokenizer_child import serve; sys.exit(serve(*sys.argv[2:]))"
)


def child_command(folder: Path, max_rows: int | str | None = None) -> tuple[list[str], dict[str, str]]:
    """How to start the child: the frozen app runs itself, a Python install runs the package.

    Either way nothing is imported from the working folder: a person who starts the
    app from their Downloads folder must not run a ``json.py`` that lies there.
    """
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "RUST_BACKTRACE": "0"}
    limit = [] if max_rows is None else [str(max_rows)]
    if getattr(sys, "frozen", False):
        # A frozen app's sys.path is its own bundle only; serve() drops the working folder too.
        return [sys.executable, CHILD_FLAG, str(folder), *limit], env
    return [sys.executable, "-I", "-S", "-c", _BOOTSTRAP, json.dumps(child_sys_path()), str(folder), *limit], env


def last_line(stderr: IO[bytes] | None, tail: int = 4000, skip: str | None = None) -> str:
    """The last non-empty line (at most 300 characters) in the last ``tail`` bytes a child wrote to
    ``stderr``, a file kept to say why the child stopped; lines starting with ``skip`` are passed over."""
    if stderr is None:
        return ""
    try:
        stderr.seek(0)
        lines = stderr.read()[-tail:].decode("utf-8", "replace").strip().splitlines()
    except (OSError, ValueError):
        return ""
    lines = [line for line in lines if line.strip() and not (skip and line.startswith(skip))]
    return lines[-1].strip()[:300] if lines else ""


def child_sys_path() -> list[str]:
    """This process's import path as the child needs it: no working folder, no relative entries,
    and the user's site-packages only when the tokenizer's libraries are installed there."""
    here = os.path.realpath(os.getcwd())
    # The child must import this very package, even when it runs from a checkout that is not installed.
    package_parent = str(Path(__file__).resolve().parents[3])  # embedexplorer/core/text/this file
    user_site = _user_site()
    keep_user_site = user_site is not None and any(
        _installed_under(name, user_site) for name in ("tokenizers", "numpy", "embedexplorer")
    )
    paths = [package_parent]
    for entry in sys.path:
        if not entry or not os.path.isabs(entry) or entry in paths:
            continue
        if os.path.realpath(entry) == here and entry != package_parent:
            continue
        if user_site is not None and not keep_user_site and entry.startswith(user_site):
            continue
        paths.append(entry)
    return paths


def _user_site() -> str | None:
    import site

    try:
        return site.getusersitepackages() or None
    except (AttributeError, OSError):
        return None


def _installed_under(module: str, folder: str) -> bool:
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    origin = getattr(spec, "origin", None) or ""
    return origin.startswith(folder)


# ----- the parent --------------------------------------------------------------------------
def _raise_from(message: dict[str, Any]) -> None:
    kind = getattr(errors, str(message.get("kind")), EmbedExplorerError)
    if not (isinstance(kind, type) and issubclass(kind, EmbedExplorerError)):
        kind = EmbedExplorerError
    raise kind(str(message.get("error")))


class TokenizerProcess:
    """The parent's handle on one child: ``facts()`` waits for the description, ``encode`` asks.

    Starting returns at once, so the caller can map the weights while the child
    loads.  A child that dies between requests is started again on the next one; a
    child that dies or hangs on a text is stopped, and that text gets a plain error.
    """

    def __init__(self, folder: Path, max_rows: int | None = None, rows_later: bool = False) -> None:
        self.folder = folder
        self.max_rows = max_rows
        # Started before the table's size is known: ``limit_rows`` sends it (a restart passes it as an argument).
        self._rows_later = rows_later
        self._lock = threading.Lock()
        self._facts: dict[str, Any] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._start()

    def _start(self) -> None:
        command, env = child_command(self.folder, ROWS_LATER if self._rows_later else self.max_rows)
        # The child's complaints go to a file, read only when it fails to start.
        if self._stderr is not None:
            self._stderr.close()
        import subprocess
        import weakref

        self._stderr = _nameless_file()
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env
        )
        # Pipes close and the child exits even if nobody calls close().
        self._finalizer = weakref.finalize(self, _stop, self._process)

    def limit_rows(self, max_rows: int | None) -> None:
        """Give a child started with ``rows_later`` the table's row count; it then describes its tokenizer."""
        with self._lock:
            self.max_rows = max_rows
            if not self._rows_later:
                return
            self._rows_later = False
            process = self._process
            if process is None or process.stdin is None:
                return
            try:
                send_message(process.stdin, {"max_rows": max_rows})
            except (BrokenPipeError, OSError):
                pass  # it has stopped: reading its facts says so

    def facts(self) -> dict[str, Any]:
        """The tokenizer's description (sizes, raw tokens); raises the child's load error."""
        with self._lock:
            if self._facts is None:
                self._facts = self._read_facts()
            return self._facts

    def _read_facts(self) -> dict[str, Any]:
        started = self._answer(LOAD_TIMEOUT_S)
        if started is None or not started.get("started"):
            raise TokenizerStartError(
                f"The tokenizer of {self.folder} could not be started (its process stopped){self._last_words()}."
            )
        message, timed_out = self._answer_timed(LOAD_TIMEOUT_S)
        if message is None:
            self._kill()
            if timed_out:
                raise TokenizerFailedError(
                    f"The tokenizer of {self.folder} took more than {LOAD_TIMEOUT_S:g} s to load and was stopped."
                )
            raise TokenizerFailedError(
                f"The tokenizer of {self.folder} stopped while loading{self._last_words()}; "
                "its tokenizer file may be broken or far too large."
            )
        if "error" in message:
            _raise_from(message)
        return dict(message["facts"])

    def _last_words(self) -> str:
        """The last line the child wrote to stderr, to say why it stopped."""
        line = last_line(self._stderr, 2000, skip="note: run with")
        return f": {line}" if line else ""

    def _running(self) -> subprocess.Popen[bytes]:
        """The child, started again (and its facts read) if it is not running; the lock is held."""
        process = self._process
        if process is None or process.poll() is not None:
            self._start()
            self._read_facts()
            process = self._process
        assert process is not None
        return process

    def encode(self, text: str) -> list[int]:
        return self.encode_listing(text)[0]

    def encode_listing(self, text: str) -> tuple[list[int], list[str]]:
        """Ids of ``text``, and the tokens of the first ``LISTED_WITH_IDS`` of them as stored."""
        with self._lock:
            for _attempt in range(2):
                process = self._running()
                assert process.stdin is not None
                try:
                    send_message(process.stdin, {"encode": text})
                except (BrokenPipeError, OSError):
                    _stop(process)  # it died before it read the text: start a new one, once
                    continue
                message, timed_out = self._answer_timed(ENCODE_TIMEOUT_S)
                if message is not None:
                    if "error" in message:
                        _raise_from(message)
                    ids = [int(i) for i in message["ids"]]
                    listed = message.get("tokens")
                    tokens = [str(t) for t in listed] if isinstance(listed, list) else []
                    return ids, tokens[: len(ids)]
                # The text itself stopped the tokenizer: asking again would do the same.
                self._kill()
                if timed_out:
                    raise TokenizerFailedError(
                        f"The tokenizer took more than {ENCODE_TIMEOUT_S:g} s on this text of {len(text):,} "
                        "characters and was stopped; this model's tokenizer is not usable on it."
                    )
                raise TokenizerFailedError(
                    f"The tokenizer stopped while reading this text of {len(text):,} characters{self._last_words()}."
                )
            raise EmbedExplorerError("The tokenizer process stopped twice; open the model again.")

    def tokens(self, ids: list[int] | None) -> list[str]:
        """Tokens ``ids`` as the tokenizer stores them ("" for an id without one); every token when None."""
        with self._lock:
            listed = self._ask({"tokens": ids}, LIST_TIMEOUT_S, "listing its tokens").get("tokens")
        if not isinstance(listed, list):
            raise TokenizerFailedError("The tokenizer process answered a listing of its tokens with no list.")
        return listed

    def round_trip(self, start: int, stop: int) -> dict[str, list[int]]:
        """What decoding and encoding again tokens ``start..stop-1`` found (``round_trip.KINDS``),
        asked of the child; a batch that stops or hangs the tokenizer raises TokenizerFailedError."""
        doing = f"on tokens {start:,} to {stop - 1:,}"
        with self._lock:
            message = self._ask({"round_trip": [start, stop]}, ROUND_TRIP_TIMEOUT_S, doing)
        return {str(k): [int(i) for i in v] for k, v in dict(message["round_trip"]).items()}

    def _ask(self, request: dict[str, Any], timeout: float, doing: str) -> dict[str, Any]:
        """The child's answer to ``request`` (the lock is held); a request that stops or hangs it raises."""
        if self._facts is None:
            self._facts = self._read_facts()
        process = self._running()
        assert process.stdin is not None
        try:
            send_message(process.stdin, request)
        except (BrokenPipeError, OSError):
            _stop(process)
            raise TokenizerFailedError("The tokenizer process stopped before it read the request.") from None
        message, timed_out = self._answer_timed(timeout)
        if message is None:
            self._kill()
            how = f"took more than {timeout:g} s" if timed_out else f"stopped{self._last_words()}"
            raise TokenizerFailedError(f"The tokenizer {how} {doing}.")
        if "error" in message:
            _raise_from(message)
        return message

    def _answer(self, timeout: float) -> dict[str, Any] | None:
        return self._answer_timed(timeout)[0]

    def _answer_timed(self, timeout: float) -> tuple[dict[str, Any] | None, bool]:
        """The child's next message, or None and whether it was stopped for taking too long."""
        process = self._process
        if process is None or process.stdout is None:
            return None, False
        fired = threading.Event()

        def stop() -> None:
            fired.set()
            process.kill()

        answered = _unless_set(timeout, stop)
        try:
            return receive_message(process.stdout), fired.is_set()
        finally:
            answered.set()

    def _kill(self) -> None:
        process = self._process
        if process is not None:
            if process.poll() is None:
                process.kill()
            _stop(process)

    def discard(self) -> None:
        """Kill the child at once and reap it: for a child whose answers nobody will ask for."""
        with self._lock:
            if self._process is not None:
                _kill_quietly(self._process)
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                if _reaped_later is None:
                    _stop(self._process)
                else:  # the child is told to end (its stdin closes) and reaped when ``reaping_last`` ends
                    _close_pipes(self._process)
                    _reaped_later.append(self._process)
                    self._finalizer.detach()
                self._process = None
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None


# Children started by ``start_early``, by folder, until the table's reader takes them.
_early: dict[str, TokenizerProcess] = {}


def start_early(folder: Path) -> None:
    """Start the child for ``folder`` now, before the table code imports and the table's size is known.

    The command line calls this as soon as it has its arguments: the child's interpreter starts
    and loads the tokenizer while this process imports the engine and reads the weights' headers.
    It is the same child, under the same limits, as ``TokenizerProcess(folder)``.
    """
    key = os.path.realpath(folder)
    if key not in _early:
        _early[key] = TokenizerProcess(folder, rows_later=True)


def take_early(folder: Path, max_rows: int | None) -> TokenizerProcess | None:
    """The child ``start_early`` started for ``folder``, told the table's row count; None if there is none."""
    process = _early.pop(os.path.realpath(folder), None)
    if process is not None:
        process.limit_rows(max_rows)
    return process


def close_early() -> None:
    """Stop every early child no reader took (the model did not open, or was not that folder).

    Such a child is killed, not asked to end: it may still be loading its tokenizer and would
    read the end of its input only then (0.1-0.4 s that a usage error would wait for). It
    holds nothing anyone made.
    """
    while _early:
        _early.popitem()[1].discard()


# Children told to end whose exit is waited for when ``reaping_last`` ends; None outside it.
_reaped_later: list[subprocess.Popen[bytes]] | None = None


@contextmanager
def reaping_last() -> Iterator[None]:
    """Within: closing a tokenizer process tells its child to end and goes on; the block's end reaps it.

    A one-shot command closes its table, then prints its answer: the child's exit (the kernel
    freeing a tokenizer of 150,000 tokens, 0.01-0.05 s, more on a busy machine) runs meanwhile,
    and the child is still reaped (never left behind) before the command returns. Early children
    nobody took are stopped at the end too.
    """
    global _reaped_later
    _reaped_later = []
    try:
        yield
    finally:
        close_early()
        pending, _reaped_later = _reaped_later, None
        for process in pending:
            _stop(process)


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin and stdout: it reads the end of its input and exits on its own."""
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin (it exits on its own) and reap it; kill it if it lingers 2 s.

    A blocking wait returns the moment the child has gone; ``wait(timeout=...)`` polls with
    sleeps of up to 50 ms, which a one-shot command waited out before it could end.
    """
    _close_pipes(process)
    reaped = _unless_set(2.0, partial(_kill_quietly, process))
    try:
        process.wait()
    finally:
        reaped.set()


def _nameless_file() -> IO[bytes]:
    """A file with no name for the child's stderr: in memory where the system has them (Linux),
    which spares every command ``tempfile``'s imports; elsewhere a temporary file."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        try:
            return open(memfd_create("embedexplorer-tokenizer-stderr", os.MFD_CLOEXEC), "w+b")
        except OSError:
            pass
    import tempfile

    return tempfile.TemporaryFile()


def _unless_set(seconds: float, action: Callable[[], None]) -> threading.Event:
    """Run ``action`` after ``seconds`` unless the event returned is set first.

    The waiting thread is started with the low-level ``_thread``: ``threading.Timer.start``
    returns only once the new thread has run, and on a busy machine that wait (one per
    message to the child) cost a one-shot command 0.01-0.05 s.
    """
    done = threading.Event()

    def watch() -> None:
        if not done.wait(seconds):
            action()

    _thread.start_new_thread(watch, ())
    return done


def _kill_quietly(process: subprocess.Popen[bytes]) -> None:
    try:
        process.kill()  # does nothing once the child has been reaped
    except OSError:
        pass
