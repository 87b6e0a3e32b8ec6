"""What a request kind is: a name, a lane and a plain function from a request to an answer.

Nothing here imports Qt: a job function can be called from a test, a benchmark or the
command line exactly as the worker calls it, with a ``JobContext`` of its own.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from ..core.common.errors import Interrupted, QueryError

if TYPE_CHECKING:  # the command line parses its arguments before the table code (and numpy) loads
    from ..core.tables.embedding_table import EmbeddingTable

RequestT = TypeVar("RequestT")
AnswerT = TypeVar("AnswerT")


class Lane(enum.Enum):
    """Which worker thread runs a kind: quick questions never queue behind long jobs."""

    QUICK = "quick"  # tokens, rows, neighbours, cosine: milliseconds
    LONG = "long"  # model loads, big maps, projections, forward passes, downloads: seconds


class Session:
    """The state the worker threads share: the open table and what was derived from it.

    Only the long lane replaces the table (a model load); the quick lane reads it.  A
    quick job takes one reference at its start, so a table swapped mid-question is never
    half-seen; its answer is about the old model and the client drops it as stale.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._table: EmbeddingTable | None = None
        # Things computed from the open table (the family map, the model's process, ...),
        # keyed by whoever stores them; emptied when the table changes.
        self.derived: dict[str, object] = {}

    @property
    def table(self) -> EmbeddingTable:
        table = self._table
        if table is None:
            raise QueryError("No model is open yet.")
        return table

    def replace_table(self, table: EmbeddingTable | None) -> None:
        """Make ``table`` the open one and close the one it replaces."""
        with self._lock:
            old, self._table = self._table, table
            old_derived, self.derived = self.derived, {}
        if old is not None and old is not table:
            old.close()
        # What holds more than memory (the model's child process) ends with its table.
        for value in old_derived.values():
            close = getattr(value, "close", None)
            if callable(close):
                close()


@dataclass
class JobContext:
    """What a running job may ask of the worker: the shared state, stop checks, progress.

    ``check()`` raises ``Interrupted`` once a newer request of the same kind, or closing
    the window, has made this one pointless; long loops call it between blocks.
    """

    session: Session
    stopped: Callable[[], bool] = lambda: False
    report: Callable[[int, int, str], None] = lambda done, total, message: None
    notes: list[str] = field(default_factory=list)

    def check(self) -> None:
        if self.stopped():
            raise Interrupted("Stopped: a newer request replaced this one.")

    def progress(self, done: int, total: int, message: str) -> None:
        """Report progress; every report is also a point where the job may be stopped."""
        self.check()
        self.report(done, total, message)


@dataclass(frozen=True, eq=False)
class Kind(Generic[RequestT, AnswerT]):
    """One kind of request: declared once, submitted with ``WorkerClient.submit``.

    Attributes
    ----------
    name:
        Unique; used in logs and as the staleness key.
    lane:
        The thread that runs it.
    run:
        ``run(ctx, request) -> answer``; raise an ``EmbedExplorerError`` for the user.
    replaces_all:
        A request of this kind makes every pending answer of every kind stale (a model load).
    """

    name: str
    lane: Lane
    run: Callable[[JobContext, RequestT], AnswerT]
    replaces_all: bool = False

    def __repr__(self) -> str:
        return f"Kind({self.name!r}, {self.lane.value})"
