"""The background worker: two threads (lanes) that own the tables and answer requests.

The window talks to them only through ``WorkerClient``: a pane asks for itself,
``ask(KIND, request, owner)`` numbers the request and queues it on its kind's lane; the
answer, a failure or progress comes back in the GUI thread on ``channel(KIND, owner)``,
the asker's own channel, and nowhere else.  Quick questions (tokens, rows, neighbours,
cosine) have a lane of their own, so they never wait behind a model load, a big map or
a forward pass.  A request that a newer one of the same kind from the same asker has
replaced is skipped before it runs, stops at its next check while it runs, and its
answer is dropped on arrival, so fast typing never shows stale neighbours; two panes
asking the same kind never make each other's questions stale.
"""

from __future__ import annotations

import itertools
import logging
import threading
import traceback
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TypeVar

from PySide6.QtCore import QObject, QThread, Signal, SignalInstance, Slot

from .core.common.blas import cores_but_one, limit_blas
from .core.common.errors import EmbedExplorerError, Interrupted
from .jobs.base import JobContext, Kind, Lane, Session

log = logging.getLogger(__name__)

RequestT = TypeVar("RequestT")
AnswerT = TypeVar("AnswerT")


@dataclass(frozen=True)
class Failure:
    """Why a request was not answered: words for the user and the exception's class."""

    message: str
    error: type[BaseException]

    def is_a(self, error: type[BaseException]) -> bool:
        return issubclass(self.error, error)


def failure_for(exc: BaseException) -> Failure:
    """The words a person sees for ``exc``: the engine's own message, or a plain apology."""
    if isinstance(exc, EmbedExplorerError):
        return Failure(str(exc), type(exc))
    return Failure(
        f"Something went wrong ({type(exc).__name__}: {exc}). The request was not answered; "
        "Help > Show the log has the details.",
        type(exc),
    )


class _Staleness:
    """The newest request id of each asker's kind (a key: ``kind@asker``), and whether the worker is closing.

    Written by the GUI thread, read by the lanes: single dict reads and writes are atomic.
    """

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.latest: dict[str, int] = {}
        self.closing = False

    def next(self, kind: str) -> int:
        with self._lock:
            request_id = next(self._ids)
            self.latest[kind] = request_id
        return request_id

    def replace_all(self) -> None:
        for kind in list(self.latest):
            self.next(kind)

    def is_current(self, kind: str, request_id: int) -> bool:
        return not self.closing and self.latest.get(kind) == request_id


class LaneWorker(QObject):
    """Runs the requests of one lane, one at a time, in its own thread."""

    answered = Signal(str, int, object)  # asker's key, request id, answer
    failed = Signal(str, int, object)  # asker's key, request id, Failure
    progressed = Signal(str, int, float, str)  # asker's key, request id, share done (-1: unknown), message

    def __init__(self, session: Session, staleness: _Staleness, blas_threads: int | None = None) -> None:
        super().__init__()
        self._session = session
        self._staleness = staleness
        self._blas_threads = blas_threads

    def _limits(self) -> AbstractContextManager[object]:
        return nullcontext() if self._blas_threads is None else limit_blas(self._blas_threads)

    @Slot(object, str, int, object)
    def run(self, kind: Kind[object, object], name: str, request_id: int, request: object) -> None:
        if not self._staleness.is_current(name, request_id):
            return

        def report(done: int, total: int, message: str) -> None:
            self.progressed.emit(name, request_id, done / total if total > 0 else -1.0, message)

        ctx = JobContext(self._session, lambda: not self._staleness.is_current(name, request_id), report)
        try:
            with self._limits():
                answer = kind.run(ctx, request)
        except Interrupted:
            return  # a newer request asked for this: nobody waits for the answer
        except Exception as exc:  # noqa: BLE001 - every failure must reach the window as words
            if not isinstance(exc, EmbedExplorerError):
                log.error("%s request failed:\n%s", kind.name, traceback.format_exc())
            self.failed.emit(name, request_id, failure_for(exc))
        else:
            self.answered.emit(name, request_id, answer)


def long_lane_blas_threads() -> int:
    """BLAS threads for a long job: all cores but one, which stays for the window and quick questions.

    A whole-vocabulary PCA on every core left the window's thread a share of a core
    with two spinning BLAS threads, and its drawing of each answer stalled for twice as long.
    """
    return cores_but_one()


class Channel(QObject):
    """The GUI side of one asker's request kind: its answers, failures and progress, current ones only."""

    ready = Signal(object)  # the kind's answer type
    failed = Signal(object)  # Failure
    progress = Signal(float, str)  # share done (-1 while unknown), message


class _Lane:
    """A worker thread with its LaneWorker; requests reach it through a queued signal."""

    def __init__(self, lane: Lane, session: Session, staleness: _Staleness, submit: SignalInstance) -> None:
        self.thread = QThread()
        self.thread.setObjectName(f"embedexplorer-{lane.value}")
        self.worker = LaneWorker(session, staleness, long_lane_blas_threads() if lane is Lane.LONG else None)
        self.worker.moveToThread(self.thread)
        self.thread.finished.connect(self.worker.deleteLater)
        submit.connect(self.worker.run)


class WorkerClient(QObject):
    """The GUI's handle on the worker: a pane asks for itself and listens on its own channel.

    >>> client.channel(NEIGHBOURS, pane).ready.connect(pane.show_neighbours)   # doctest: +SKIP
    >>> client.ask(NEIGHBOURS, NeighboursRequest(" Paris", 8), pane)           # doctest: +SKIP

    The asker (``owner``) is any object: a pane, a dialog, or a name (a string) for a
    caller without one. There is no window-wide channel: what every pane must know (a model
    opened, a map drawn) reaches it through the application state, which the asking pane
    changes when its answer comes.
    """

    # Requests, delivered to each lane's thread by queued connections.
    _to_quick = Signal(object, str, int, object)
    _to_long = Signal(object, str, int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = Session()
        self._staleness = _Staleness()
        self._channels: dict[str, Channel] = {}
        self._lanes = {
            Lane.QUICK: _Lane(Lane.QUICK, self.session, self._staleness, self._to_quick),
            Lane.LONG: _Lane(Lane.LONG, self.session, self._staleness, self._to_long),
        }
        for lane in self._lanes.values():
            # Connected to slots of this object, so they are queued into the GUI thread
            # and the staleness check runs there, when the answer would be shown.
            lane.worker.answered.connect(self._on_answered)
            lane.worker.failed.connect(self._on_failed)
            lane.worker.progressed.connect(self._on_progressed)
            lane.thread.start()

    @property
    def threads(self) -> list[QThread]:
        """The lanes' threads (quick, long), for tests and benchmarks."""
        return [lane.thread for lane in self._lanes.values()]

    def channel(self, kind: Kind[RequestT, AnswerT], owner: object) -> Channel:
        """Where the answers, failures and progress of ``owner``'s requests of ``kind`` arrive."""
        key = self._key(kind, owner)
        channel = self._channels.get(key)
        if channel is None:
            channel = self._channels[key] = Channel(self)
            if isinstance(owner, QObject):
                # A pane that goes takes its channels along: a new object at its address starts afresh.
                owner.destroyed.connect(lambda _obj=None, k=key: self._channels.pop(k, None))
        return channel

    def ask(self, kind: Kind[RequestT, AnswerT], request: RequestT, owner: object) -> int:
        """Queue ``owner``'s ``request`` on its kind's lane; its pending one of the same kind becomes stale."""
        key = self._key(kind, owner)
        self.channel(kind, owner)
        if kind.replaces_all:
            self._staleness.replace_all()  # a new model makes every answer about the old one stale
        request_id = self._staleness.next(key)
        lane = self._to_quick if kind.lane is Lane.QUICK else self._to_long
        lane.emit(kind, key, request_id, request)
        return request_id

    def cancel(self, kind: Kind[RequestT, AnswerT], owner: object) -> None:
        """Drop ``owner``'s pending request of ``kind``: a running job stops at its next check."""
        self._staleness.next(self._key(kind, owner))

    @staticmethod
    def _key(kind: Kind[RequestT, AnswerT], owner: object) -> str:
        """``kind@asker``: staleness and channels are kept per asker and kind."""
        asker = owner if isinstance(owner, str) else f"{type(owner).__name__}-{id(owner):x}"
        return f"{kind.name}@{asker}"

    # ----- receiving ---------------------------------------------------------------------
    @Slot(str, int, object)
    def _on_answered(self, key: str, request_id: int, answer: object) -> None:
        channel = self._channels.get(key)
        if channel is not None and self._staleness.is_current(key, request_id):
            channel.ready.emit(answer)

    @Slot(str, int, object)
    def _on_failed(self, key: str, request_id: int, failure: Failure) -> None:
        channel = self._channels.get(key)
        if channel is not None and self._staleness.is_current(key, request_id):
            channel.failed.emit(failure)

    @Slot(str, int, float, str)
    def _on_progressed(self, key: str, request_id: int, share: float, message: str) -> None:
        channel = self._channels.get(key)
        if channel is not None and self._staleness.is_current(key, request_id):
            channel.progress.emit(share, message)

    def shutdown(self, timeout_ms: int = 3000) -> bool:
        """Stop both lanes; True when they ended within the timeout.

        Running jobs stop at their next check; queued ones are skipped.
        """
        self._staleness.closing = True
        for lane in self._lanes.values():
            lane.thread.quit()
        stopped = all(lane.thread.wait(timeout_ms) for lane in self._lanes.values())
        if stopped:
            self.session.replace_table(None)  # the threads are over, so nothing else touches the table
        return stopped
