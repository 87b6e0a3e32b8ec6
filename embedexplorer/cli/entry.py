"""``main``: parse, open the model a command asks about, run the command, print its answer or one line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..core.common.errors import EmbedExplorerError
from ..core.common.terminal import (
    end_progress,
    finite_or_none,
    print_answer,
    progress_is_open,
    say,
    show_progress,
)
from .command import Answer, Asker, Command, ProgressReport
from .parser import bare_download_is_table, build_parser
from .table import TABLE, command_named

# An open that takes longer than this shows its progress on stderr (when stderr is a terminal).
PROGRESS_AFTER_SECONDS = 1.0


def main(argv: Sequence[str] | None = None, table: tuple[Command, ...] = TABLE) -> int:
    _quiet_libraries()
    from ..core.text.tokenizer_process import close_early, reaping_last

    try:
        args = build_parser(table).parse_args(bare_download_is_table(sys.argv[1:] if argv is None else argv))
    except SystemExit:  # a usage error or --help: a child the entry point started early is not waited for
        close_early()
        raise
    command = command_named(args.command, table)

    # A tokenizer child is told to end when its table closes and reaped after the answer is
    # printed: its exit runs meanwhile (a child that started early and was not taken is stopped).
    with reaping_last():
        return _answer(command, args)


def _answer(command: Command, args: argparse.Namespace) -> int:
    """Run the command and print its answer, or say in one line why it has none; the exit code."""
    try:
        payload, text = _run(command, args)
    except EmbedExplorerError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except MemoryError:
        return _fail("ran out of memory; the model or the input is too large for this machine.")
    except RecursionError:
        return _fail("the input is nested too deeply to read.")
    except Exception as exc:  # noqa: BLE001 - a person gets one line, never a traceback
        return _fail(f"unexpected error: {type(exc).__name__}: {exc}")
    if args.json:
        # ``layers --json`` and ``models --json`` are lists; every other command one object.
        data = payload[command.json_key] if command.json_key else payload
        return print_answer(json.dumps(finite_or_none(data), ensure_ascii=False, indent=2), json_text=True)
    return print_answer(text)


def _run(command: Command, args: argparse.Namespace) -> Answer:
    _start_tokenizer_early(command, args)
    return _open_and_answer(command, args)


def _start_tokenizer_early(command: Command, args: argparse.Namespace) -> None:
    """A model folder named by path: its tokenizer's child starts now and loads while the engine imports.

    Only a local folder with a tokenizer.json (what the reader will give the same child); any
    other source starts its tokenizer when the reader gets to it, as before.
    """
    folder = _local_folder(command, args)
    try:
        if folder is not None and (folder / "tokenizer.json").is_file():
            from ..core.text.tokenizer_process import start_early

            start_early(folder)
    except OSError:
        pass  # the open says what is wrong with the path


def _local_folder(command: Command, args: argparse.Namespace) -> Path | None:
    """The folder ``--model`` names by path, or None (the bundled model, a download, a file, a Hub id)."""
    from ..core.common.constants import BUNDLED

    if command.answer is None or args.download or not args.model or args.model == BUNDLED:
        return None  # "bundled" names the bundled model even where a folder of that name lies
    try:
        folder = Path(args.model).expanduser()
        return folder if folder.is_dir() else None
    except (OSError, ValueError, RuntimeError):
        return None  # the open says what is wrong with the path


def _open_and_answer(command: Command, args: argparse.Namespace) -> Answer:
    if command.before is not None:
        command.before(args)
    folder = _local_folder(command, args) if command.answer_without_rows is not None else None
    if folder is not None and command.answer_without_rows is not None:
        from ..core.tables.token_only import open_tokens_only

        # In the tokenizer's child, as the table's would be; the table itself is never mapped.
        tokens_only = open_tokens_only(folder, separate_tokenizer=True)
        try:
            return command.answer_without_rows(args, tokens_only)
        finally:
            tokens_only.close()
    # Imported here: ``tokens`` on a folder (above) needs neither the table code nor numpy.
    from ..core.sources.resolve import resolve_source
    from ..core.tables.opening import load_table
    from ..jobs.base import Session

    # Progress is for a person watching; piped stderr keeps to the one-line error.
    progress = _after_a_second(show_progress) if sys.stderr.isatty() else None
    if command.run is not None:
        try:
            return command.run(args, progress)
        finally:
            end_progress()
    assert command.answer is not None  # a Command has one of the two
    source = resolve_source(
        args.model, allow_download=bool(args.download), progress=progress, whole_model=args.download == "full"
    )
    end_progress()
    for note in source.notes:
        say(f"note: {note}")
    # The tokenizer runs in a child process: a tokenizer file built to hang or to blow up
    # memory is stopped there (time and memory limits) and named in one line. A command that
    # measures every row (a search, the rows pointing nowhere) has them measured and mapped in
    # while that child loads; ``cosine`` and ``tokens`` read a few rows or none.
    table = load_table(
        source,
        progress or (lambda done, total, message: None),
        separate_tokenizer=True,
        read_whole=command.names_rows_pointing_nowhere,
    )
    session = Session()
    session.replace_table(table)
    try:
        # Named once, as the table opens.
        nowhere = table.pointing_nowhere.sentence() if command.names_rows_pointing_nowhere else ""
        if nowhere:
            say(f"note: {nowhere}")
        return command.answer(args, Asker(session, progress))
    finally:
        end_progress()
        session.replace_table(None)  # closes the table and what its questions started (the model's process)


def _quiet_libraries() -> None:
    """Keep stderr to our one line: no library warnings, log records or advice."""
    import logging
    import os
    import warnings

    warnings.simplefilter("ignore")  # numpy's overflow warnings, deprecations of other libraries
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    # Without a handler, logging prints warnings through its last-resort handler.
    logging.getLogger().addHandler(logging.NullHandler())
    # File names that were not UTF-8 reach us as surrogates: print them escaped, not as a crash.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _fail(message: str) -> int:
    say(message)
    return 2


def _after_a_second(report: ProgressReport) -> ProgressReport:
    """``report``, silent for the first second: a quick open prints nothing, a slow one shows where it is."""
    began = time.monotonic()

    def maybe(done: int, total: int, message: str) -> None:
        if progress_is_open() or time.monotonic() - began >= PROGRESS_AFTER_SECONDS:
            report(done, total, message)

    return maybe
