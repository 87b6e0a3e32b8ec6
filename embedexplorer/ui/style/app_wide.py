"""One watcher of each kind for the whole application (the focus frame, Enter on buttons), made once."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication
from shiboken6 import isValid

_made: dict[Callable[[QApplication], QObject], QObject] = {}


def once_per_application(make: Callable[[QApplication], QObject]) -> None:
    """Make ``make(app)`` for the running application, unless the one made before still lives.

    The watcher is the application's child: a new application (each test's, after the last was
    deleted) gets a new one, and a second window never adds a second.
    """
    app = QApplication.instance()
    made = _made.get(make)
    if isinstance(app, QApplication) and (made is None or not isValid(made)):
        _made[make] = make(app)
