"""The command line: the engine's questions, answered as readable tables or JSON.

``table.py`` lists the commands; each is one module of ``commands/`` with its arguments and
its run. ``entry.main`` parses, opens the model, runs the command and prints through the one
safe printer (``core/common/terminal.py``). No Qt is imported except by ``map --png/--svg``.
"""

from __future__ import annotations

from .entry import main
from .parser import build_parser
from .table import COMMANDS, COMMANDS_WITHOUT_MODEL, TABLE

__all__ = ["COMMANDS", "COMMANDS_WITHOUT_MODEL", "TABLE", "build_parser", "main"]
