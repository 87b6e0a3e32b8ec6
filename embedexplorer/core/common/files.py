"""Read and write files defensively: only regular files, bounded reads, atomic writes.

Every file the engine reads is named by someone else (a model folder, a families file),
so a read must never wait on a FIFO, never stream a device such as ``/dev/zero``, and
never take more memory than its kind of file can sensibly need.  Every file it writes
replaces the old one atomically and gets the permissions the user's umask asks for.  A
file the program keeps for itself (a cache, a download's part file, a note) never
follows a symbolic link: a link found where it belongs is replaced by a new regular
file, so a planted link cannot make it overwrite a file of the user's.  Only an output
the user named (a PNG, an SVG, a lesson) is written through a link the user made.
"""

from __future__ import annotations

import _thread
import json
import os
import stat
from typing import TYPE_CHECKING, BinaryIO

from .errors import EmbedExplorerError, FileChangedError

if TYPE_CHECKING:
    # Imported where a write or a FileState needs it: the tokenizer's child, which reads one
    # file, starts without pathlib (and the modules it brings).
    from collections.abc import Callable
    from pathlib import Path

MiB = 1024 * 1024

# How large each kind of file may be. Real files are far smaller: the chapter's families
# file is 2 KB, the largest tokenizer.json in common use (Gemma 3, 262,144 tokens) is 33 MB,
# a shard index of a 400-billion-weight model is under 1 MB, a config a few KB.
FAMILIES_FILE_LIMIT = 4 * MiB
TOKENIZER_FILE_LIMIT = 64 * MiB
CONFIG_FILE_LIMIT = 4 * MiB
SHARD_INDEX_LIMIT = 32 * MiB

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file that is not regular is, in words ("a FIFO (named pipe)", "a folder", ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def size_text(size: int) -> str:
    """A byte count for people: "64 MiB", "3.2 KiB", "17 bytes"."""
    for unit, scale in (("GiB", 1024**3), ("MiB", MiB), ("KiB", 1024)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) or value >= 100 else f"{value:.1f} {unit}"
    return f"{size} bytes"


def open_regular(path: str | Path, what: str, error: type[EmbedExplorerError]) -> tuple[BinaryIO, int]:
    """Open ``path`` for reading when it is a regular file (or a link to one); give it and its size.

    Anything else (a FIFO, a device, a folder) raises ``error`` naming ``what`` the
    file was meant to be, without waiting: the file is opened non-blocking, so a FIFO
    with no writer cannot hold the caller, and its kind is checked on the open handle.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"Cannot read the {what} {path}: {reason}.") from exc
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"The {what} {path} is {kind_of(info.st_mode)}, not a regular file, so it was not read.")
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb"), int(info.st_size)
    except BaseException:
        os.close(descriptor)
        raise


def read_regular(path: str | Path, what: str, limit: int, error: type[EmbedExplorerError]) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else raises ``error``."""
    handle, size = open_regular(path, what, error)
    with handle:
        if size > limit:
            raise error(_too_large(path, what, size, limit))
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise error(f"Cannot read the {what} {path}: {exc.strerror or exc}.") from exc
    if len(data) > limit:  # it grew while we read it
        raise error(_too_large(path, what, len(data), limit))
    return data


def read_regular_quietly(path: str | Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes, or None for anything else.

    For the small files a listing reads (a cache's ``refs/main``, a pointer file): the same
    rule as ``read_regular`` (regular file, size bound, non-blocking open), but a file that
    fails it is simply not there, so one odd entry never stops a listing.
    """
    try:
        return read_regular(path, "file", limit, EmbedExplorerError)
    except EmbedExplorerError:
        return None


def check_regular(path: str | Path, what: str, limit: int, error: type[EmbedExplorerError]) -> None:
    """Refuse ``path`` unless it is a regular file of at most ``limit`` bytes (for files a library reads)."""
    handle, size = open_regular(path, what, error)
    handle.close()
    if size > limit:
        raise error(_too_large(path, what, size, limit))


def _too_large(path: str | Path, what: str, size: int, limit: int) -> str:
    return (
        f"The {what} {path} is {size_text(size)}, more than a {what} can sensibly be "
        f"({size_text(limit)}), so it was not read."
    )


def parse_json(data: bytes, what: str, error: type[EmbedExplorerError], encoding: str = "utf-8") -> object:
    """JSON from bytes; text that is not UTF-8, not JSON or nested too deeply raises ``error``."""
    return _parsed(lambda: json.loads(data.decode(encoding)), what, error)


def _parsed(parse: Callable[[], object], what: str, error: type[EmbedExplorerError]) -> object:
    """What ``parse`` returns; its failures to decode or parse ``what`` are ``error``, one sentence each."""
    try:
        return parse()
    except UnicodeDecodeError as exc:
        raise error(f"The {what} is not valid JSON: it is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
    except json.JSONDecodeError as exc:
        raise error(f"The {what} is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise error(f"The {what} is not valid JSON here: it is nested too deeply to read.") from exc


def read_json(path: str | Path, what: str, limit: int, error: type[EmbedExplorerError]) -> object:
    """A bounded regular file, parsed as JSON; every failure is ``error`` naming the file."""
    return parse_json(read_regular(path, what, limit, error), f"{what} {path}", error)


def read_json_member(path: str | Path, key: str, what: str, limit: int, error: type[EmbedExplorerError]) -> object:
    """The value of ``key`` in the JSON object in a bounded file (None: no such member); ``error`` names the file.

    Only the members before ``key`` are parsed: a tokenizer.json is a few small members, then
    megabytes of vocabulary, and ``json.loads`` of all of it (3.5 MB for GPT-2: about 60 ms)
    holds Python's lock the whole time, stalling the window. Where the file repeats ``key``,
    the first one counts (``json.loads`` keeps the last).
    """
    raw = read_regular(path, what, limit, error)
    return _parsed(lambda: _member(raw.decode("utf-8"), key), f"{what} {path}", error)


def _member(text: str, key: str) -> object:
    """Walk the top-level object of ``text`` member by member with the JSON decoder, up to ``key``."""
    decoder = json.JSONDecoder()
    at = _after_space(text, 0)
    if not text.startswith("{", at):
        json.loads(text)  # not an object: it has no members (or it is not JSON, which raises)
        return None
    at = _after_space(text, at + 1)
    if text.startswith("}", at):
        return None
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
        name, at = decoder.raw_decode(text, at)
        at = _after_space(text, at)
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        value, at = decoder.raw_decode(text, _after_space(text, at + 1))
        if name == key:
            return value
        at = _after_space(text, at)
        if text.startswith("}", at):
            return None
        if not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _after_space(text, at + 1)


def _after_space(text: str, at: int) -> int:
    """The first place from ``at`` that is not JSON's white space."""
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


# ----- writing ---------------------------------------------------------------------------
class NotRegularFileError(OSError):
    """The path to write names something that is not a regular file (a FIFO, a device, a folder)."""


def write_target(path: str | Path, through_link: bool = True) -> Path:
    """Where writing ``path`` lands: the path itself, or (``through_link``) the file a symbolic link names.

    A FIFO, a device or a folder (named directly or, when following, through links)
    raises NotRegularFileError, whose ``strerror`` says what it is.
    """
    from pathlib import Path

    if os.path.islink(path) and not through_link:
        return Path(path)  # the link itself is replaced; what it names is never touched
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError:
        return target  # the write itself will say what is wrong (permission, name too long, ...)
    if not stat.S_ISREG(info.st_mode):
        kind = kind_of(info.st_mode)
        raise NotRegularFileError(0, f"it is {kind}, not a regular file; choose a file name", str(path))
    return target


def atomic_write_bytes(path: str | Path, data: bytes, *, through_link: bool = False) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place.

    A symbolic link at ``path`` is replaced by a new regular file (the file it named is
    left as it was), unless ``through_link``: then, for an output the user named, the
    link stays and its regular file is replaced.  Anything else that is not a regular
    file is refused.  The new file keeps the old one's permissions, or gets those the
    umask gives a new file.  Raises OSError (no space, no permission, not a regular
    file, ...) with the target untouched; no partial file is ever left at ``path``.
    """
    target = write_target(path, through_link)
    mode = _mode_for(target)
    # The temporary name stays short: a target whose name is already near the 255-byte
    # limit must still get a temporary beside it.  mkstemp creates it exclusively
    # (O_EXCL), so a link planted under a guessed temporary name is never followed.
    import tempfile  # loaded for a write: the tokenizer's child, which only reads, starts without it

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:40]}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def open_own_file(path: str | Path, *, fresh: bool) -> BinaryIO:
    """Open a file the program keeps for itself (a part file, a cache being filled) for reading and writing.

    Never through a symbolic link and never anything but a regular file: a link, a
    FIFO or a device found at ``path`` is removed (the name only; what a link named is
    untouched) and a new empty file made in its place.  ``fresh`` empties the file.
    A folder at ``path`` raises NotRegularFileError.
    """
    for _attempt in range(3):
        try:
            descriptor = os.open(path, os.O_RDWR | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            try:
                descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
            except FileExistsError:
                continue  # made by someone else meanwhile: look again
            return os.fdopen(descriptor, "r+b")
        except OSError as exc:
            if not os.path.islink(path):
                raise
            del exc
            os.unlink(path)  # a link: the name goes, the file it named stays as it was
            continue
        info = os.fstat(descriptor)
        if stat.S_ISREG(info.st_mode):
            if hasattr(os, "set_blocking"):
                os.set_blocking(descriptor, True)
            handle = os.fdopen(descriptor, "r+b")
            if fresh:
                handle.truncate(0)
            return handle
        os.close(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise NotRegularFileError(0, "it is a folder, not a regular file", str(path))
        os.unlink(path)  # a FIFO or a device node where our file belongs
    raise NotRegularFileError(0, "it keeps changing under us", str(path))


def read_own_file(path: str | Path, limit: int) -> bytes | None:
    """The bytes of a file the program keeps for itself, or None when it is not a plain file of at most ``limit``.

    Never through a link, never waiting on a FIFO, never more than ``limit`` bytes:
    a cache that is anything else is no cache, and is made again.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return data if len(data) <= limit else None


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


# The low-level lock: ``threading`` is one more import for the tokenizer's child, which never writes.
_umask_lock = _thread.allocate_lock()


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:  # elsewhere the only way to read it is to set it and set it back
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


# ----- files that must not change under us -----------------------------------------------
class FileState:
    """A file's size and modification time when it was opened, to notice when it changes.

    Reading a memory-mapped page past the end of a file that another program truncated
    kills the process with SIGBUS; checking the size first turns that into a message.
    """

    __slots__ = ("path", "_where", "size", "mtime_ns")

    def __init__(self, path: str | Path) -> None:
        from pathlib import Path

        info = os.stat(path)
        self.path = Path(path)
        self._where = os.fspath(self.path)  # stat takes a str without converting it (checked before every query)
        self.size = int(info.st_size)
        self.mtime_ns = int(info.st_mtime_ns)

    def check(self) -> None:
        """Raise FileChangedError when the file is gone, shorter, longer or rewritten."""
        try:
            info = os.stat(self._where)
        except OSError as exc:
            raise FileChangedError(
                f"{self.path.name} is gone from {self.path.parent} since the model was opened "
                f"({exc.strerror or exc}); open the model again."
            ) from exc
        if info.st_size != self.size or info.st_mtime_ns != self.mtime_ns:
            now = f"now {size_text(int(info.st_size))}, was {size_text(self.size)}"
            raise FileChangedError(
                f"{self.path.name} changed on disk since the model was opened ({now}); "
                "its rows were not read. Open the model again."
            )


# ----- looking without failing ---------------------------------------------------------------------
# Listing models walks folders nobody vouches for: a path that cannot even be looked at counts as absent.
def exists_quietly(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def is_dir_quietly(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def is_file_quietly(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False

