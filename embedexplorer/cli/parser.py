"""The command line's parser, built from the table: the common options and each command's own."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

from ..core.common.terminal import one_line
from .command import Command
from .table import TABLE

DOWNLOADS = ("table", "full")


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one safe line on stderr (the words typed escaped, as every line the
    command line prints is) and exit code 2, pointing to the help of the command at hand."""

    def error(self, message: str, helped: str | None = None) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {helped or self.prog} --help)\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:  # found at the top level: the help of the command they were given to lists its options
            command = getattr(parsed, "command", None)
            self.error(f"unrecognized arguments: {' '.join(extras)}", f"{self.prog} {command}" if command else None)
        return parsed


def build_parser(table: tuple[Command, ...] = TABLE) -> argparse.ArgumentParser:
    common = _common_options()
    parser = OneLineParser(
        prog="embedexplorer",
        description="Look inside a language model's token embedding table. "
        "Run without a command to open the window.",
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for command in table:
        options: dict[str, object] = {"help": command.help}
        if command.description is not None:
            options["description"] = command.description
        if command.takes_model:
            options["parents"] = [common]
        command.arguments(commands.add_parser(command.name, **options))  # type: ignore[arg-type]
    return parser


def _common_options() -> argparse.ArgumentParser:
    """--model, --json and --download, shared by every command about one model."""
    common = OneLineParser(add_help=False)
    model = common.add_argument(
        "--model",
        default=None,
        help="a %(kinds)s, ollama:NAME[:TAG], a Hugging Face id, or 'bundled' "
        "(default: GPT-2 if it is here, else bundled MiniLM)",
    )
    setattr(model, "kinds", _ReaderKinds())  # noqa: B010 - argparse fills %(kinds)s from the action
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    common.add_argument(
        "--download",
        nargs="?",
        const="table",
        choices=DOWNLOADS,
        default=None,
        metavar="=full",
        help="download a Hub model that is not here: its embedding table only (the other weights stay "
        "on the Hub), or with --download=full every weight into the Hugging Face cache",
    )
    return common


class _ReaderKinds:
    """The readers' kinds, named only when --help prints: parsing must not load the readers (and numpy)."""

    def __str__(self) -> str:
        from ..core.readers import kinds_text

        return kinds_text()


def bare_download_is_table(argv: Sequence[str]) -> list[str]:
    """``--download`` alone means the table: it must never take the next word as its value."""
    words = list(argv)
    end = words.index("--") if "--" in words else len(words)
    return [("--download=table" if w == "--download" and i < end else w) for i, w in enumerate(words)]


def _version() -> str:
    from .. import __version__

    return f"embedexplorer {__version__}"
