"""How long work reports where it is: ``report(done, total, message)``; a total of 0 means not known yet."""

from __future__ import annotations

from collections.abc import Callable

ProgressCallback = Callable[[int, int, str], None]
