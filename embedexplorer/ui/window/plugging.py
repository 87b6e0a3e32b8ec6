"""How a pane plugs into the window: where it goes, and what it is handed to do its work.

A pane is a class with a ``plug(ctx)`` class method that builds it and binds it: to the
application state (``ctx.state``: it reads, changes and watches fields), to the worker
(``ctx.client``: it sends its own requests and listens to its own answers), and to what the
window offers every pane (``ctx.shell``: messages, the status bar, menus, opening a model).
The window places what ``plug`` returns as its entry in ``ui/pane_list.py`` says, and
never reaches into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar, QWidget

    from ...settings import Settings
    from ...state import AppState
    from ...worker import WorkerClient

# A message bar button: its label and what it does.
MessageAction = tuple[str, Callable[[], None]]


class Place(Enum):
    """Where a pane sits in the window."""

    TOP = "top"  # full width, under the message bar: the text and its tokens
    LEFT_UPPER = "left upper"  # the left column's upper part: the row
    LEFT_LOWER = "left lower"  # the left column's lower part, stacked: the neighbours
    RIGHT_TAB = "right tab"  # a tab beside the map
    NOWHERE = "nowhere"  # no place of its own: menus, toolbars, dialogs


class Shell(Protocol):
    """What the window does for every pane."""

    def show_message(self, text: str, level: str = "error", action: MessageAction | None = None) -> None: ...

    def withdraw_message(self, text: str) -> None: ...

    def show_status(self, text: str, msec: int = 5000) -> None: ...

    def show_progress(self, share: float, message: str) -> None: ...

    def hide_progress(self) -> None: ...

    def menu(self, title: str) -> QMenu: ...

    def toolbar(self, title: str) -> QToolBar: ...

    def set_facts(self, text: str, tooltip: str = "") -> None: ...

    def open_model(self, spec: str, allow_download: bool = False, whole_model: bool = False) -> None: ...

    def window_widget(self) -> QMainWindow: ...


@dataclass(frozen=True)
class PaneContext:
    """Everything a pane is handed when it plugs in."""

    state: AppState
    client: WorkerClient
    settings: Settings
    shell: Shell


class Pluggable(Protocol):
    """A pane class: ``plug`` builds one and binds it."""

    @classmethod
    def plug(cls, ctx: PaneContext) -> QWidget | object: ...


@dataclass(frozen=True)
class PaneEntry:
    """One line of the window's list of panes: an attribute name, a place, a tab title, the class."""

    name: str
    place: Place
    pane: Any  # a class with ``plug(ctx)``
    title: str = ""  # the tab's title, for RIGHT_TAB panes
