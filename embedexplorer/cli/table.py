"""The one list of commands: it builds the parser, the command list and what ``__main__`` hands to the CLI.

Adding a command is one module in ``cli/commands/`` that declares ``COMMAND`` and one line here
(and its name in the import).
"""

from __future__ import annotations

from .command import Command
from .commands import analogy, compare, cosine, direction, health, info, layers, maps, models, neighbours, tokens

# In the order ``embedexplorer --help`` lists them.
TABLE: tuple[Command, ...] = (
    tokens.COMMAND,
    neighbours.COMMAND,
    cosine.COMMAND,
    analogy.COMMAND,
    direction.COMMAND,
    info.COMMAND,
    maps.COMMAND,
    layers.COMMAND,
    compare.COMMAND,
    health.COMMAND,
    models.COMMAND,
)

COMMANDS = tuple(command.name for command in TABLE)
# They take no --model: they list and open nothing, or name their models themselves.
COMMANDS_WITHOUT_MODEL = tuple(command.name for command in TABLE if not command.takes_model)


def command_named(name: str, table: tuple[Command, ...] = TABLE) -> Command:
    return next(command for command in table if command.name == name)
