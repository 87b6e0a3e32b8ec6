"""How a pane plugs into the window: what it declares, and what it is handed to do its work.

Every pane follows one recipe (docs/architecture.md, "Add a pane")::

    class RowLengthPane(QLabel):
        TITLE = "Row &length"      # its tab's title; the name its preview uses
        PLACE = Place.RIGHT_TAB     # where the window puts it
        MENUS = ("&View",)          # the menus it adds entries to, in the menu bar's order

        def bind(self, ctx: PaneContext) -> None:
            ctx.state.watch("selection", self._on_selection_changed)
            ctx.client.channel(ROW, self).ready.connect(self.show_row)
            ctx.shell.menu("&View").addAction("Row &length")

        def _on_selection_changed(self, selection: Selection | None) -> None:
            if selection is not None:
                self.ctx.client.ask(ROW, RowRequest(selection.token_id, selection.place), self)

The class builds with no arguments: its own widgets only, so a preview or a test can make
one alone. ``bind`` does the rest: it follows the application state (``ctx.state``: each
handler named ``_on_<field>_changed`` for the field it follows), asks the worker for itself
(``ctx.client.ask(KIND, request, self)``: the answers, failures and progress come back on
``ctx.client.channel(KIND, self)`` and reach no other pane) and adds its entries to the
menus it declared in ``MENUS`` (``ctx.shell``: messages, the status bar, menus, toolbars, opening a
model). A pane that needs another pane's facts watches the state, never that pane.

Optional: ``focus_chain()`` (its controls in the order Tab walks them); a left-column pane
may say ``least_height(width)`` and ``prefers_tab()`` (upper) or ``growth_for_rows(n)``
(lower), which the window's ``RowPlacement`` uses to decide whether the upper pane fits above
the lower ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

    from ...settings import Settings
    from ...state import AppState
    from ...worker import WorkerClient

# A message bar button: its label and what it does.
MessageAction = tuple[str, Callable[[], None]]


class Place(Enum):
    """Where a pane sits in the window."""

    TOP = "top"  # full width, under the message bar: the text and its tokens
    LEFT_UPPER = "left upper"  # the left column's upper part: the row (moves beside the map on a short window)
    LEFT_LOWER = "left lower"  # the left column's lower part, stacked: the neighbours
    RIGHT_TAB = "right tab"  # a tab beside the map, titled with the pane's title
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
    """Everything a pane is handed when it binds."""

    state: AppState
    client: WorkerClient
    settings: Settings
    shell: Shell


class Pane(Protocol):
    """The pane contract: three declarations and ``bind`` (upper case: a pane's ``title`` label never hides them)."""

    TITLE: ClassVar[str]
    PLACE: ClassVar[Place]
    MENUS: ClassVar[tuple[str, ...]]

    def bind(self, ctx: PaneContext) -> None: ...


@dataclass(frozen=True)
class PaneEntry:
    """One line of the window's list of panes: the attribute it is found under (``window.panes.<name>``), its class."""

    name: str
    pane: Any  # a class following ``Pane``: built with no arguments, then bound


FIRST_MENU, LAST_MENU = "&File", "&Help"  # the window's own: File first (Quit), Help last (About)


def menu_order(declared: Iterable[tuple[str, ...]]) -> list[str]:
    """The menu bar's titles: File first, Help last, and each pane's menus in the order it lists them.

    Where two panes do not say which of two menus comes first, the one declared first does.
    """
    titles: list[str] = [FIRST_MENU]
    before: dict[str, set[str]] = {FIRST_MENU: set()}
    for menus in declared:
        for i, title in enumerate(menus):
            if title in (FIRST_MENU, LAST_MENU):
                continue
            if title not in before:
                before[title] = set()
                titles.append(title)
            before[title].update(m for m in menus[:i] if m not in (FIRST_MENU, LAST_MENU))
    ordered: list[str] = []
    while len(ordered) < len(titles):
        ready = [t for t in titles if t not in ordered and before[t] <= set(ordered)]
        # A circle (one pane says A then B, another B then A): the first declared breaks it.
        ordered.append(ready[0] if ready else next(t for t in titles if t not in ordered))
    return [*ordered, LAST_MENU]
