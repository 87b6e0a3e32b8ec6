"""A progress bar for long jobs: it keeps its room when hidden, and shows a share or "busy"."""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar


def job_progress_bar(keep_room: bool = True) -> QProgressBar:
    """Hidden until a job starts; hidden, it keeps its room (so the buttons beside it stay their own size),
    unless it has a line of its own (``keep_room`` False), where its room would be an empty line."""
    bar = QProgressBar()
    bar.setRange(0, 1000)
    policy = bar.sizePolicy()
    policy.setRetainSizeWhenHidden(keep_room)
    bar.setSizePolicy(policy)
    bar.hide()
    return bar


def show_share(bar: QProgressBar, share: float, message: str) -> None:
    """``share`` of the job done (-1 while the total is unknown: a busy bar), with its message."""
    if share < 0:
        bar.setRange(0, 0)
    else:
        bar.setRange(0, 1000)
        bar.setValue(int(share * 1000))
    bar.setFormat(f"{message}: %p%")
    bar.show()
