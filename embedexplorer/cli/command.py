"""What a command-line command declares: its name, its arguments and its run."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # loaded when a command runs: parsing (and starting the tokenizer) comes first
    from ..core.tables.embedding_table import EmbeddingTable
    from ..core.tables.token_only import TokensOnly
    from ..jobs.base import Kind, Session

# What every command returns: the JSON payload and the readable text.
Answer = tuple[dict[str, object], str]
ProgressReport = Callable[[int, int, str], None]
RequestT = TypeVar("RequestT")
AnswerT = TypeVar("AnswerT")


@dataclass(frozen=True)
class Asker:
    """The command line's side of the question layer: it asks the window's request kinds, in this thread.

    The session holds the table the command is about, as the worker's does; what a question
    derives from it (the model's process for the layers) ends with it.
    """

    session: Session
    progress: ProgressReport | None = None

    @property
    def table(self) -> EmbeddingTable:
        return self.session.table

    def ask(self, kind: Kind[RequestT, AnswerT], request: RequestT) -> AnswerT:
        """``kind``'s answer to ``request``, computed by the same function the window's worker runs."""
        from ..jobs.base import JobContext

        report = self.progress or (lambda done, total, message: None)
        return kind.run(JobContext(self.session, report=report), request)


@dataclass(frozen=True)
class Command:
    """One command, declared by its module and listed once in ``cli/table.py``.

    A command answers about the ``--model`` table (``answer``), or opens what it needs
    itself (``run``: ``models`` lists, ``compare`` opens two tables); exactly one is given.
    """

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    # Given the asker holding the table the common --model option opened (the CLI closes it after).
    answer: Callable[[argparse.Namespace, Asker], Answer] | None = None
    # Given the progress report for a person watching (None when stderr is not a terminal).
    run: Callable[[argparse.Namespace, ProgressReport | None], Answer] | None = None
    description: str | None = None
    # Checks made before anything opens (a --png target that cannot be written).
    before: Callable[[argparse.Namespace], None] | None = None
    # ``--json`` prints ``payload[json_key]`` (a list) instead of the whole payload.
    json_key: str | None = None
    # Whether the open names the rows that point nowhere, which measures every row (so the open
    # measures them, and maps them in, while the tokenizer loads): ``tokens`` reads no row, and
    # ``cosine`` says so of the two rows it reads itself.
    names_rows_pointing_nowhere: bool = True
    # A command that reads no row (``tokens``): given a model folder, it is answered from the
    # tokenizer and the weights' headers (``tables/token_only.py``), the table never mapped.
    answer_without_rows: Callable[[argparse.Namespace, TokensOnly], Answer] | None = None

    def __post_init__(self) -> None:
        if (self.answer is None) == (self.run is None):
            raise ValueError(f"command {self.name!r}: give answer (about the --model table) or run, not both")

    @property
    def takes_model(self) -> bool:
        """Whether it has the common options --model, --json and --download."""
        return self.answer is not None
