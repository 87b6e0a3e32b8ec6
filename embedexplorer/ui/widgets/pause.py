"""A call made once a person pauses: the spinning of k stops, the typing stops (one helper for every pane)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

# How long after k last changed the neighbour list and the map's rings are asked for again: both
# panes wait the same, so their answers come together.
K_PAUSE_MS = 150
# How long after the last key press a typed word is looked up.
TYPING_PAUSE_MS = 200


def after_pause(owner: QObject, call: Callable[[], None], msec: int) -> QTimer:
    """A single-shot timer of ``owner`` that runs ``call`` ``msec`` after its last ``start()``.

    Each ``start()`` begins the wait again, so a run of changes makes one call. The timer is the
    owner's child: it dies with it and never calls into a pane that is gone.
    """
    timer = QTimer(owner)
    timer.setSingleShot(True)
    timer.setInterval(msec)
    timer.timeout.connect(call)
    return timer
