"""Work started now on a thread of its own and collected later: a tokenizer built while the table is prepared."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """``build()`` running on a daemon thread; ``result()`` waits for it and raises what it raised.

    The thread only overlaps with work that lets go of the interpreter's lock (file reads,
    the C passes over the table, large numpy operations): that is the table's preparation.
    """

    def __init__(self, build: Callable[[], T], name: str) -> None:
        self._build = build
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._build()
        except BaseException as exc:  # noqa: BLE001 - handed to whoever collects the result
            self._error = exc

    def raise_if_failed(self) -> None:
        """Raise at once what ``build`` raised, if it has already failed (a refusal need not wait for the table)."""
        if not self._thread.is_alive() and self._error is not None:
            self.result()

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._value  # type: ignore[return-value]
