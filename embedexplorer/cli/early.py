"""What the entry point reads of the arguments before the command line loads.

A one-shot command waits longest for its tokenizer's child process, so the child starts
before the parser and the commands import (0.02-0.03 s of every command here). Only the
plain spellings are read (``--model X``, ``--model=X``, the last one given, before ``--``);
the parser reads the rest, and ``entry`` starts the child then if this did not. A child
started for a command line the parser then refuses is killed at once, not waited for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.common.constants import BUNDLED

if TYPE_CHECKING:
    from pathlib import Path

# The commands' names, as ``table.py`` lists them (a test holds the two together): the entry point
# tells the command line from the window by them without importing the commands.
COMMAND_NAMES = frozenset(
    {"tokens", "neighbours", "cosine", "analogy", "direction", "info", "map", "layers", "compare", "health", "models"}
)


def start_tokenizer_soon(args: Sequence[str]) -> None:
    """Start the tokenizer's child of the folder ``--model`` names, if it plainly names one (see above)."""
    if not args or args[0] not in COMMAND_NAMES:
        return
    words = list(args)
    end = words.index("--") if "--" in words else len(words)
    model = None
    for i, word in enumerate(words[:end]):
        if word in ("-h", "--help", "--version") or word == "--download" or word.startswith("--download="):
            return  # help opens nothing; a Hub model may be fetched: the parser decides
        if word == "--model" and i + 1 < end:
            model = words[i + 1]
        elif word.startswith("--model="):
            model = word.removeprefix("--model=")
    folder = folder_with_tokenizer(model)
    if folder is not None:
        from ..core.text.tokenizer_process import start_early

        start_early(folder)


def folder_with_tokenizer(model: str | None) -> Path | None:
    """The folder ``model`` names by path when it holds a tokenizer.json; None for anything else.

    "bundled" names the bundled model even where a folder of that name lies; a path that
    cannot be looked at is for the open to name.
    """
    if not model or model == BUNDLED:
        return None
    from pathlib import Path

    try:
        folder = Path(model).expanduser()
        return folder if folder.is_dir() and (folder / "tokenizer.json").is_file() else None
    except (OSError, ValueError, RuntimeError):
        return None
