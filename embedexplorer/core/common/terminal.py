"""Text bound for a terminal: control characters from file data are shown escaped, never sent raw.

A shard name, a family name or a token in a tokenizer's error message comes from a
file someone else wrote; printed raw, an escape sequence in it could retitle the
terminal, hide text or fake a prompt.  Everything the command line prints passes here:
the answer (``print_answer``), its messages and notes (``say``) and its progress line
(``show_progress``).
"""

from __future__ import annotations

import math
import os
import re
import sys

# C0 controls but tab and newline, DEL and C1 controls, bidirectional overrides and
# isolates (they reorder what the terminal shows), line and paragraph separators, and
# lone surrogates (a file name that was not UTF-8).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# In JSON text only C1 controls, bidi controls and separators can still be raw: json.dumps
# escapes C0 controls itself, and a lone surrogate is written as its \\u escape.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as Python's file names carry it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character spelled out (``\\x1b``); tabs and newlines stay."""
    return _UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    """``text`` as one safe line: newlines and tabs spelled out too."""
    return terminal_safe(text).replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")


def json_text_safe(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the raw controls it may hold escaped.

    They can only stand inside strings, where ``\\uXXXX`` means the same character.
    """
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def finite_or_none(value: object) -> object:
    """``value`` with every NaN or infinite float replaced by None, so it is valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(item) for item in value]
    return value


PROGRAM = "embedexplorer"


class _ProgressLine:
    """Whether a progress line is open on stderr (written without its newline yet)."""

    open = False


def say(message: str) -> None:
    """One line on stderr, ``embedexplorer: message``; an open progress line is ended first."""
    end_progress()
    try:
        print(f"{PROGRAM}: {one_line(message)}", file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr itself is gone: there is nobody to tell


def show_progress(done: int, total: int, message: str) -> None:
    """Rewrite the progress line on stderr: ``message: 40% (12.0 of 30.0 MB)``."""
    if not total:
        return
    _ProgressLine.open = done < total
    end = "" if _ProgressLine.open else "\n"
    # Downloads count bytes: say how many, not only the share.
    amount = f" ({done / 1e6:,.1f} of {total / 1e6:,.1f} MB)" if total >= 1_000_000 else ""
    print(f"\r{one_line(message)}: {done / total:.0%}{amount}\033[K", end=end, file=sys.stderr, flush=True)


def progress_is_open() -> bool:
    return _ProgressLine.open


def end_progress() -> None:
    """Finish an open progress line so what follows starts on a line of its own."""
    if _ProgressLine.open:
        print(file=sys.stderr, flush=True)
        _ProgressLine.open = False


def print_answer(text: str, *, json_text: bool = False) -> int:
    """Write the answer on stdout, made safe; a reader that went away ends us quietly, a full disk in one line.

    Returns the exit status: 0, 141 for a closed pipe, 2 for a failed write.
    """
    try:
        sys.stdout.write((json_text_safe(text) if json_text else terminal_safe(text)) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped reading (``| head -1``): stop quietly, as coreutils do when
        # SIGPIPE ends them, with the status a shell reports for that.
        _discard_stdout()
        return 141
    except OSError as exc:
        _discard_stdout()
        say(f"cannot write the output: {exc.strerror or exc}.")
        return 2
    return 0


def _discard_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush at exit cannot fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass
