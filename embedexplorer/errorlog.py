"""Unplanned failures are never lost: a rotating log file, and hooks that send them there.

The frozen app has no console on macOS and Windows, so a traceback printed to stderr
would vanish; the log keeps it, and Help > Show the log opens it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

APP_DIR_NAME = "EmbedExplorer"
LOG_NAME = "embedexplorer.log"
LOG_BYTES = 1_000_000  # per file; three old files are kept beside it
LOG_BACKUPS = 3

log = logging.getLogger("embedexplorer")

ExceptionListener = Callable[[str], None]


def app_data_dir() -> Path:
    """The platform's folder for this app's own files (EMBEDEXPLORER_DATA_DIR overrides it)."""
    override = os.environ.get("EMBEDEXPLORER_DATA_DIR")
    if override:
        return Path(override)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / APP_DIR_NAME


def log_path() -> Path:
    return app_data_dir() / "logs" / LOG_NAME


def start_logging() -> Path | None:
    """Send the package's warnings and errors to the rotating log; None when it cannot be written."""
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    if not any(isinstance(h, RotatingFileHandler) for h in log.handlers):
        log.addHandler(handler)
    log.setLevel(logging.WARNING)
    return path


def install_hooks(listener: ExceptionListener) -> None:
    """Route uncaught exceptions of any thread to the log, and one line about each to ``listener``.

    ``listener`` is called in the thread that failed; the window's listener queues the
    line into the GUI thread.
    """

    def on_exception(
        kind: type[BaseException], value: BaseException, tb: TracebackType | None, where: str = "main thread"
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        log.error("Unexpected error in the %s:\n%s", where, "".join(traceback.format_exception(kind, value, tb)))
        listener(describe(value))

    def on_thread_exception(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None:
            return
        name = args.thread.name if args.thread is not None else "a thread"
        on_exception(args.exc_type, args.exc_value, args.exc_traceback, f"thread {name}")

    sys.excepthook = on_exception
    threading.excepthook = on_thread_exception


def describe(error: BaseException) -> str:
    """One line for the user about an error nobody planned for, pointing to the log."""
    from .core.common.errors import EmbedExplorerError

    if isinstance(error, EmbedExplorerError):
        return str(error)
    if isinstance(error, MemoryError):
        return "The computer ran out of memory for that; close other programs or open a smaller model."
    if isinstance(error, RecursionError):
        return "A file is nested too deeply to be read (RecursionError)."
    return f"Unexpected error: {type(error).__name__}: {error}. Help > Show the log has the details."
