"""What a command-line command declares: its name, its arguments and its run."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.tables.embedding_table import EmbeddingTable

# What every command returns: the JSON payload and the readable text.
Answer = tuple[dict[str, object], str]
ProgressReport = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Command:
    """One command, declared by its module and listed once in ``cli/table.py``.

    A command answers about the ``--model`` table (``answer``), or opens what it needs
    itself (``run``: ``models`` lists, ``compare`` opens two tables); exactly one is given.
    """

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    # Given the table the common --model option opened (the CLI closes it after).
    answer: Callable[[argparse.Namespace, EmbeddingTable], Answer] | None = None
    # Given the progress report for a person watching (None when stderr is not a terminal).
    run: Callable[[argparse.Namespace, ProgressReport | None], Answer] | None = None
    description: str | None = None
    # Checks made before anything opens (a --png target that cannot be written).
    before: Callable[[argparse.Namespace], None] | None = None
    # ``--json`` prints ``payload[json_key]`` (a list) instead of the whole payload.
    json_key: str | None = None

    def __post_init__(self) -> None:
        if (self.answer is None) == (self.run is None):
            raise ValueError(f"command {self.name!r}: give answer (about the --model table) or run, not both")

    @property
    def takes_model(self) -> bool:
        """Whether it has the common options --model, --json and --download."""
        return self.answer is not None
