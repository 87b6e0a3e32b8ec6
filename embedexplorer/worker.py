"""The background worker: one QObject in its own QThread owns the tables and computes.

The window talks to it only through queued signals.  Every request carries an
id; a request that a newer one of the same kind has replaced is skipped before
it is computed, and its answer, if already under way, is dropped on arrival, so
fast typing never shows stale neighbours.  Answers are plain Python values and
numpy copies: the GUI never touches the memory-mapped table.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

log = logging.getLogger(__name__)

# How many chips the token pane shows at most; longer texts say how many were left out.
MAX_CHIPS = 512


@dataclass
class LoadedModel:
    """What the window needs to know about a freshly opened table."""

    name: str
    facts: dict[str, Any]
    summary: str
    byte_level: bool
    seconds: float


@dataclass
class TokensResult:
    text: str
    tokens: list[dict[str, Any]]
    total: int
    note: str = ""


@dataclass
class RowResult:
    id: int
    token: str
    place: int  # 0-based place of the token in the text
    row: Any  # np.ndarray
    position_row: Any = None
    combined: Any = None
    note: str = ""


@dataclass
class NeighboursResult:
    query: dict[str, Any]
    neighbours: list[dict[str, Any]]
    baseline: float
    note: str = ""
    map_query: tuple[float, float] | None = None
    map_neighbours: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class CosineResult:
    a: str
    b: str
    cosine: float
    baseline: float
    note: str = ""


class TableWorker(QObject):
    """Owns the EmbeddingTable and answers requests; lives in a worker thread."""

    # kind ("load", "tokens", "row", "neighbours", "cosine", "map"), request id, result:
    # LoadedModel, TokensResult, RowResult, NeighboursResult, CosineResult or FamilyMap.
    answered = Signal(str, int, object)
    load_progress = Signal(int, int, int, str)  # request id, done, total, message
    failed = Signal(int, str, str, str)  # request id, kind, message, error type

    def __init__(self, latest: dict[str, int]) -> None:
        super().__init__()
        self._latest = latest
        self._table: Any = None
        self._map: Any = None

    # ----- plumbing ----------------------------------------------------------------------
    def _stale(self, kind: str, request_id: int) -> bool:
        return self._latest.get(kind, request_id) != request_id

    def _run(self, kind: str, request_id: int, work: Any) -> None:
        """Run one request and send its answer; a failure becomes a message and the worker goes on.

        ``work`` returns the answer, or None when a newer request made it pointless.
        """
        if self._stale(kind, request_id):
            return
        try:
            result = work()
            if result is not None:
                self.answered.emit(kind, request_id, result)
        except Exception as exc:  # noqa: BLE001 - every failure must reach the window as words
            from .core.errors import EmbedExplorerError

            if isinstance(exc, EmbedExplorerError):
                message = str(exc)
            else:
                log.error("%s request failed:\n%s", kind, traceback.format_exc())
                message = f"Something went wrong ({type(exc).__name__}: {exc}). The request was not answered."
            self.failed.emit(request_id, kind, message, type(exc).__name__)

    def release(self) -> None:
        """Close the open table (and its tokenizer process); call only when no request is running."""
        if self._table is not None:
            self._table.close()
            self._table, self._map = None, None

    def _require_table(self) -> Any:
        if self._table is None:
            from .core.errors import EmbedExplorerError

            raise EmbedExplorerError("No model is open yet.")
        return self._table

    # ----- requests ----------------------------------------------------------------------
    @Slot(int, str, bool)
    def load_model(self, request_id: int, spec: str, allow_download: bool) -> None:
        def work() -> Any:
            started = time.perf_counter()
            # Heavy imports happen here, in the worker thread, never before the window shows.
            from .core.tables import open_table

            def progress(done: int, total: int, message: str) -> None:
                # Byte counts of a download overflow a Qt int: send thousandths instead.
                share = int(1000 * done / total) if total else 0
                self.load_progress.emit(request_id, share, 1000 if total else 0, message)

            # The tokenizer runs in a child process: building it here would hold the GIL
            # for ~90 ms (GPT-2) and freeze the window for that long.
            table = open_table(
                spec or None, allow_download=allow_download, progress=progress, separate_tokenizer=True
            )
            self.load_progress.emit(request_id, 900, 1000, "Normalising the rows")
            try:
                _ = table.unit, table.screen, table.tokens, table.baseline_cosine  # pay these once, here
            except BaseException:
                table.close()
                raise
            if self._stale("load", request_id):
                table.close()
                return None
            self.release()
            self._table, self._map = table, None
            facts = table.facts()
            self.load_progress.emit(request_id, 1000, 1000, "Ready")
            return LoadedModel(
                name=table.name,
                facts=facts.as_dict(),
                summary=facts.summary(),
                byte_level=table.vocabulary.byte_level,
                seconds=time.perf_counter() - started,
            )

        self._run("load", request_id, work)

    @Slot(int, str)
    def tokenize(self, request_id: int, text: str) -> None:
        def work() -> Any:
            report = self._require_table().tokenize(text, max_shown=MAX_CHIPS)
            chips = [{"id": t.id, "token": t.token, "text": t.text} for t in report.tokens]
            return TokensResult(text, chips, report.count, report.note)

        self._run("tokens", request_id, work)

    @Slot(int, int, int)
    def inspect(self, request_id: int, token_id: int, place: int) -> None:
        def work() -> Any:
            table = self._require_table()
            row = table.row(token_id)
            position_row = table.position_row(place)
            note = ""
            if table.positions is None:
                note = table.position_note
            elif position_row is None:
                note = (
                    f"There is no position row for place {place + 1:,}: the table has "
                    f"{table.positions.shape[0]:,} rows."
                )
            combined = None if position_row is None else row + position_row
            return RowResult(token_id, table.tokens[token_id], place, row, position_row, combined, note)

        self._run("row", request_id, work)

    @Slot(int, object, int)
    def find_neighbours(self, request_id: int, query: Any, k: int) -> None:
        def work() -> Any:
            table = self._require_table()
            result = table.neighbours(query, k)
            answer = NeighboursResult(
                query={"id": result.query.id, "token": result.query.token},
                neighbours=[
                    {"id": n.id, "token": n.token, "cosine": n.cosine, "text": _typed_form(table, n.id)}
                    for n in result.neighbours
                ],
                baseline=table.baseline_cosine,
                note=result.note,
            )
            if self._map is not None:
                ids = [result.query.id] + [n.id for n in result.neighbours]
                coords = self._map.projection.apply(table.rows[ids])
                answer.map_query = (float(coords[0, 0]), float(coords[0, 1]))
                answer.map_neighbours = [(float(x), float(y)) for x, y in coords[1:]]
            return answer

        self._run("neighbours", request_id, work)

    @Slot(int, object, str)
    def compare(self, request_id: int, first: Any, other: str) -> None:
        def work() -> Any:
            table = self._require_table()
            a, b = table.query(first), table.query(other)
            value = table.cosine(a.id, b.id)
            return CosineResult(a.token, b.token, value, table.baseline_cosine, b.note)

        self._run("cosine", request_id, work)

    @Slot(int, object, str)
    def build_map(self, request_id: int, families: Any, multi_token: str) -> None:
        """``families`` is a path, a mapping, or None for the chapter's families."""

        def work() -> Any:
            from .core.maps import family_map, load_families

            table = self._require_table()
            chosen = families if isinstance(families, dict) else load_families(families)
            self._map = family_map(table, chosen, multi_token)
            return self._map

        self._run("map", request_id, work)


def _typed_form(table: Any, token_id: int) -> str:
    """What a person would type to get this token back (WordPiece's "##" is not typed)."""
    text = table.vocabulary.text_of(token_id).encode("utf-8", "replace").decode("utf-8")
    if not table.vocabulary.byte_level and text.startswith("##") and len(text) > 2:
        return text[2:]
    return text


class WorkerClient(QObject):
    """The GUI side: starts the worker thread, numbers requests, drops stale answers."""

    load_progress = Signal(int, int, str)
    table_loaded = Signal(object)
    tokens_ready = Signal(object)
    row_ready = Signal(object)
    neighbours_ready = Signal(object)
    cosine_ready = Signal(object)
    map_ready = Signal(object)
    failed = Signal(str, str, str)  # kind, message, error type

    # Requests, delivered to the worker thread by queued connections.
    _load = Signal(int, str, bool)
    _tokenize = Signal(int, str)
    _inspect = Signal(int, int, int)
    _neighbours = Signal(int, object, int)
    _compare = Signal(int, object, str)
    _map = Signal(int, object, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ids = itertools.count(1)
        self._id_lock = threading.Lock()
        # Read by the worker thread to skip superseded requests; plain dict reads are atomic.
        self._latest: dict[str, int] = {}
        self.thread = QThread()
        self.thread.setObjectName("embedexplorer-worker")
        self.worker = TableWorker(self._latest)
        self.worker.moveToThread(self.thread)
        self.thread.finished.connect(self.worker.deleteLater)

        self._load.connect(self.worker.load_model)
        self._tokenize.connect(self.worker.tokenize)
        self._inspect.connect(self.worker.inspect)
        self._neighbours.connect(self.worker.find_neighbours)
        self._compare.connect(self.worker.compare)
        self._map.connect(self.worker.build_map)

        # Answers connect to slots of this object, so they are queued into the GUI thread and
        # the staleness check runs there, when the answer would be shown.
        self._signals = {
            "load": self.table_loaded,
            "tokens": self.tokens_ready,
            "row": self.row_ready,
            "neighbours": self.neighbours_ready,
            "cosine": self.cosine_ready,
            "map": self.map_ready,
        }
        self.worker.answered.connect(self._on_answered)
        self.worker.load_progress.connect(self._on_load_progress)
        self.worker.failed.connect(self._on_failed)
        self.thread.start()

    # ----- sending -----------------------------------------------------------------------
    def _next(self, kind: str) -> int:
        with self._id_lock:
            request_id = next(self._ids)
            self._latest[kind] = request_id
        return request_id

    def load_model(self, spec: str, allow_download: bool = False) -> int:
        request_id = self._next("load")
        # A new model makes every answer about the old one stale.
        for kind in ("tokens", "row", "neighbours", "cosine", "map"):
            self._next(kind)
        self._load.emit(request_id, spec, allow_download)
        return request_id

    def tokenize(self, text: str) -> int:
        request_id = self._next("tokens")
        self._tokenize.emit(request_id, text)
        return request_id

    def inspect(self, token_id: int, place: int) -> int:
        request_id = self._next("row")
        self._inspect.emit(request_id, token_id, place)
        return request_id

    def find_neighbours(self, query: str | int, k: int) -> int:
        request_id = self._next("neighbours")
        self._neighbours.emit(request_id, query, k)
        return request_id

    def compare(self, first: str | int, other: str) -> int:
        request_id = self._next("cosine")
        self._compare.emit(request_id, first, other)
        return request_id

    def build_map(self, families: Any = None, multi_token: str = "average") -> int:
        request_id = self._next("map")
        self._map.emit(request_id, families, multi_token)
        return request_id

    # ----- receiving ---------------------------------------------------------------------
    @Slot(str, int, object)
    def _on_answered(self, kind: str, request_id: int, result: Any) -> None:
        if self._latest.get(kind) == request_id:  # an answer a newer request replaced is dropped
            self._signals[kind].emit(result)

    @Slot(int, int, int, str)
    def _on_load_progress(self, request_id: int, done: int, total: int, message: str) -> None:
        if self._latest.get("load") == request_id:
            self.load_progress.emit(done, total, message)

    @Slot(int, str, str, str)
    def _on_failed(self, request_id: int, kind: str, message: str, error_type: str) -> None:
        if self._latest.get(kind) == request_id:
            self.failed.emit(kind, message, error_type)

    def shutdown(self, timeout_ms: int = 3000) -> bool:
        """Stop the worker thread; True when it ended within the timeout."""
        for kind in list(self._latest):
            self._next(kind)  # whatever is queued is now stale and will be skipped
        self.thread.quit()
        stopped = bool(self.thread.wait(timeout_ms))
        if stopped:
            self.worker.release()  # the thread is over, so nothing else touches the table
        return stopped
