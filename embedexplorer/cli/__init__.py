"""The command line: the engine's questions, answered as readable tables or JSON.

``table.py`` lists the commands; each is one module of ``commands/`` with its arguments and
its run. ``entry.main`` parses, opens the model, runs the command and prints through the one
safe printer (``core/common/terminal.py``). No Qt is imported except by ``map --png/--svg``.

The names below load when first asked for: the entry point reads ``early.py`` (the command
names, the model folder's tokenizer to start) before the parser and the commands import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .entry import main
    from .parser import build_parser
    from .table import COMMANDS, COMMANDS_WITHOUT_MODEL, TABLE

__all__ = ["COMMANDS", "COMMANDS_WITHOUT_MODEL", "TABLE", "build_parser", "main"]


def __getattr__(name: str) -> Any:
    if name == "main":
        from .entry import main

        return main
    if name == "build_parser":
        from .parser import build_parser

        return build_parser
    if name in ("COMMANDS", "COMMANDS_WITHOUT_MODEL", "TABLE"):
        from . import table

        return getattr(table, name)
    raise AttributeError(name)
