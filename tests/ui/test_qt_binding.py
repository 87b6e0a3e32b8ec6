"""The installed Qt binding must not leak references (PySide6 6.12.0 aborts CPython 3.11)."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QLabel


def test_qt_calls_keep_none_alive(qtbot) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    before = sys.getrefcount(None)
    for _ in range(2_000):
        label.setText("x")  # returns nothing: 6.12.0 drops a reference to None each time
    assert sys.getrefcount(None) - before > -100
