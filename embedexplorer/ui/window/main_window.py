"""The main window: the frame the panes plug into, its menus and toolbars, the status bar.

The window holds the application state, builds each pane of ``pane_list.PANES``, binds it
with a ``PaneContext`` and puts it where the pane says (``plugging.py``: the contract). The
menu bar holds the menus the panes declare. Panes follow and change the state and ask the
worker themselves; the window never reaches into them. It keeps for itself
what belongs to the frame: messages, progress, the model's facts, size and place on the
screen, and what it remembers of them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import (
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QMenu,
    QProgressBar,
    QSplitter,
    QTabWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...settings import Settings
from ...state import AppState
from ...worker import WorkerClient
from ..style.enter_clicks import click_on_enter_everywhere
from ..style.focus import show_focus_everywhere
from ..style.plain_text import guard_plain_text
from ..widgets.elided_label import ElidedLabel
from ..widgets.pause import after_pause
from .fitting import RowPlacement, ScreenFit, fit_to_screen, widen_for_titles
from .help_menu import add_help_menu, show_about
from .message_bar import MessageBar
from .model_bar import ModelBar
from .overflow import OverflowFocus, extension_button
from .pane_list import PANES
from .plugging import LAST_MENU, MessageAction, PaneContext, PaneEntry, Place, menu_order
from .screen_scroll import ScreenScroll

# In presentation mode the left column (text, chips, neighbours) takes this share of the width,
# and never less than PRESENTING_LEFT_LEAST pixels (the cosine answer beside its box on two lines)
# unless normal mode gave it less.
PRESENTING_LEFT_SHARE, PRESENTING_LEFT_LEAST = 0.3, 430

# How long a closing window waits for the worker's jobs to stop (they stop at their next check).
WORKER_PATIENCE_MS = 15_000

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    """Type a word; see its tokens, rows, neighbours and its place on the family map."""

    def __init__(self, client: WorkerClient, settings: Settings, panes: Sequence[PaneEntry] = PANES) -> None:
        super().__init__()
        app = QApplication.instance()
        if isinstance(app, QApplication):
            guard_plain_text(app)  # every label and tooltip shows a file's or a person's text as text
        self.client = client
        self.settings = settings
        self.worker_stuck = False
        self.state = AppState(settings.initial_state())
        settings.follow(self.state)
        show_focus_everywhere()  # every control shows the keyboard's focus, tool buttons and tabs too
        click_on_enter_everywhere()  # and Enter clicks the focused button, as Space does
        self.setWindowTitle("EmbedExplorer")
        self.setAcceptDrops(True)
        self.resize(1360, 860)
        self._menus = {title: self.menuBar().addMenu(title) for title in menu_order(e.pane.MENUS for e in panes)}
        self._toolbars: dict[str, QToolBar] = {}
        self.message_bar = MessageBar()
        self._build_status_bar()
        unsaved = settings.cannot_remember()
        if unsaved:
            log.warning(unsaved)
            self.show_message(unsaved, "info")

        ctx = PaneContext(self.state, client, settings, self)
        self.model_bar = ModelBar(ctx)
        self.panes = SimpleNamespace()
        built: list[tuple[PaneEntry, QWidget]] = []
        for entry in panes:
            pane = entry.pane()
            pane.bind(ctx)
            setattr(self.panes, entry.name, pane)
            built.append((entry, pane))
        self._place_panes(built)
        file_menu = self._menus["&File"]
        file_menu.addSeparator()
        quit_action = file_menu.addAction("&Quit")
        quit_action.triggered.connect(self.close)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        add_help_menu(self._menus[LAST_MENU], self)
        self._restore(built)
        self.state.watch("presentation", self._give_the_map_room)
        if self.state.presentation:
            self._give_the_map_room(True)
        self.screen_fit = ScreenFit(self)  # inside the screen with the window manager's frame, whatever grew

    # ----- construction ------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        self.facts_label = ElidedLabel("No model open yet.")
        self.facts_label.breaks = ";,"  # a narrow window shows the first facts whole, the rest in the tooltip
        self.progress = QProgressBar()
        # The bar shows the share; what is being done goes beside it, where any length fits.
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(True)
        self.progress.setFormat("%p%")
        self.progress.hide()
        self.statusBar().addWidget(self.facts_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

    def _place_panes(self, built: list[tuple[PaneEntry, QWidget]]) -> None:
        """Top panes under the message bar; a left column (upper and lower) beside tabs on the right."""
        placed: dict[Place, list[QWidget]] = {place: [p for e, p in built if e.pane.PLACE is place] for place in Place}
        upper = placed[Place.LEFT_UPPER]
        # The left column is two parts: the first upper pane, and a stack of the others above the lower panes.
        stacked = upper[1:] + placed[Place.LEFT_LOWER]
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.setSpacing(0)
        # The list (a pane that grows with its rows) takes the room that is left; without one, the last pane.
        growing = [pane for pane in stacked if hasattr(pane, "growth_for_rows")] or stacked[-1:]
        for pane in stacked:
            lower_layout.addWidget(pane, 1 if pane in growing else 0)
        self.left = QSplitter(Qt.Orientation.Vertical)
        if upper:
            self.left.addWidget(upper[0])
        self.left.addWidget(lower)
        self.left.setStretchFactor(0, 2)
        self.left.setStretchFactor(1, 3)
        self.left.setChildrenCollapsible(False)
        if not (upper or stacked):
            self.left.hide()  # a window without a left column (a preview of one pane)
        # The map and the layers share the right side: both want the room, one at a time.
        self.right = QTabWidget()
        for pane in placed[Place.RIGHT_TAB]:
            self.right.addTab(pane, type(pane).TITLE)  # type: ignore[attr-defined]
        # Where the left column is too short for both, the upper pane moves beside the map.
        self.row_placement = RowPlacement(self.left, upper[0], lower, stacked, self.right) if upper else None
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.left)
        self.splitter.addWidget(self.right)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([520, 840])
        self.splitter.setChildrenCollapsible(False)
        self._sizes_before_presenting: list[int] | None = None
        # Presentation's larger type on a smaller window: the left column's titles whole where the map can spare it.
        self._left_panes = upper + stacked
        self._title_room = after_pause(self, self._room_for_left_titles, 0)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 4, 6, 2)
        layout.setSpacing(3)  # every pixel counts on a 640-pixel screen
        layout.addWidget(self.message_bar)
        for pane in placed[Place.TOP]:
            layout.addWidget(pane)  # type: ignore[arg-type]
        layout.addWidget(self.splitter, 1)
        # Never a least size past a small screen's edge (larger type, presentation): the panes scroll there.
        self.setCentralWidget(ScreenScroll(central))

    def _restore(self, built: list[tuple[PaneEntry, QWidget]]) -> None:
        geometry = self.settings.geometry("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        self.fit_to_screen()
        for key, splitter in (("window/splitter", self.splitter), ("window/left", self.left)):
            state = self.settings.geometry(key)
            if state is not None:
                splitter.restoreState(state)
                if splitter is self.left and self.row_placement is not None:
                    self.row_placement.sizes_restored()
        # The toolbars' buttons are controls like any other: Tab reaches them, and shows it has; so is
        # the overflow button at a bar's end, where Space or Enter lists the controls that did not fit.
        for bar in self._toolbars.values():
            for action in bar.actions():
                button = bar.widgetForAction(action)
                if isinstance(button, QToolButton):
                    button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            OverflowFocus(bar)
        self._focus_panes = [pane for _entry, pane in built]
        self._chain_focus()
        if self.row_placement is not None:
            self.row_placement.moved.connect(self._chain_focus)  # the row went to the tabs or back
        # The exercises folded into a button made then: it joins the chain where it is drawn, not at its end.
        self.model_bar.bar_fit.controls_changed.connect(self._chain_focus)

    def _chain_focus(self) -> None:
        """Tab walks the window as it is drawn: the toolbars (above everything), the panes above and
        in the left column, then the tab bar beside the map and the tabs' panes after it, each pane's
        controls in its own order. A tab's controls before its own tab bar were reached out of sight."""
        chain = []
        for bar in self._toolbars.values():
            chain += [control for action in bar.actions() for control in _tab_stops(bar.widgetForAction(action))]
            chain += [extension for extension in [extension_button(bar)] if extension is not None]  # at the bar's end
        # Some panes are no widgets of the window (a dialog's, a source's): never in a tab.
        tabbed = [p for p in self._focus_panes if isinstance(p, QWidget) and self.right.indexOf(p) >= 0]
        in_tabs = sorted(tabbed, key=self.right.indexOf)
        upper = self.row_placement.row_view if self.row_placement is not None else None

        def drawn(pane: object) -> int:
            """The panes across the top first; the upper pane, when in the left column, above the others there."""
            return 0 if getattr(type(pane), "PLACE", None) is Place.TOP else 1 if pane is upper else 2

        beside = sorted((p for p in self._focus_panes if p not in in_tabs), key=drawn)
        for pane in beside:
            chain += getattr(pane, "focus_chain", list)()
        chain.append(self.right.tabBar())
        for pane in in_tabs:
            chain += getattr(pane, "focus_chain", list)()
        for first, second in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(first, second)

    def _give_the_map_room(self, presenting: bool) -> None:
        """Presentation: the map and plots take two thirds of the width (the list needs less); back after."""
        if presenting and self._sizes_before_presenting is None:
            self._sizes_before_presenting = self.splitter.sizes()
            total = sum(self._sizes_before_presenting)
            # Never wider than in normal mode: on a 1024-pixel laptop the share's floor would take the
            # map's room (its answers wrap to more lines instead).
            least = min(PRESENTING_LEFT_LEAST, self._sizes_before_presenting[0])
            left = max(self.left.minimumSizeHint().width(), least, round(total * PRESENTING_LEFT_SHARE))
            self.splitter.setSizes([left, total - left])
        elif not presenting and self._sizes_before_presenting is not None:
            self.splitter.setSizes(self._sizes_before_presenting)
            self._sizes_before_presenting = None
        self._title_room.start()  # once the larger type is laid out

    def _room_for_left_titles(self) -> None:
        if self.state.presentation:
            widen_for_titles(self.splitter, self._left_panes, self.right)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        # A window fitted to a smaller screen takes the loss from both columns: the titles' room again.
        self._title_room.start()

    def fit_to_screen(self) -> None:
        """Never larger than the screen's free area (a laptop's 1366x768 or 1024x640), frame included, and on it."""
        fit_to_screen(self)

    # ----- what the window does for every pane (plugging.Shell) -------------------------------
    def show_message(self, text: str, level: str = "error", action: MessageAction | None = None) -> None:
        if text:
            self.message_bar.show_message(text, level, action)
        else:
            self.message_bar.hide()

    def withdraw_message(self, text: str) -> None:
        """Hide the message bar if it still shows ``text`` (a pane's error that no longer holds)."""
        if self.message_bar.text() == text:
            self.message_bar.hide()

    def show_status(self, text: str, msec: int = 5000) -> None:
        self.statusBar().showMessage(text, msec)

    def show_progress(self, share: float, message: str) -> None:
        if share < 0:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(share * 1000))
        self.progress.show()
        if message:
            self.statusBar().showMessage(message)

    def hide_progress(self) -> None:
        self.progress.hide()
        self.statusBar().clearMessage()

    def set_facts(self, text: str, tooltip: str = "") -> None:
        self.facts_label.setText(text)
        # The whole of it, however little the bar has room for: the summary (it names every fact) or the text.
        self.facts_label.setToolTip(tooltip or text)

    def menu(self, title: str) -> QMenu:
        """One of the menus the panes declared (a pane adds only to menus it declares in ``MENUS``)."""
        if title not in self._menus:
            raise KeyError(f"no pane declares the menu {title!r}: add it to the pane's menus")
        return self._menus[title]

    def toolbar(self, title: str) -> QToolBar:
        if title not in self._toolbars:
            bar = self.addToolBar(title)
            bar.setObjectName(f"{title.lower()}ToolBar")
            bar.setMovable(False)
            self._toolbars[title] = bar
        return self._toolbars[title]

    def open_model(self, spec: str, allow_download: bool = False, whole_model: bool = False) -> None:
        self.model_bar.open(spec, allow_download, whole_model)

    def window_widget(self) -> QMainWindow:
        return self

    # ----- window events ------------------------------------------------------------------
    def show_about(self) -> None:
        show_about(self)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        if _dropped_model(event.mimeData().urls()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        dropped = _dropped_model(event.mimeData().urls())
        if dropped is not None:
            self.open_model(str(dropped))
            event.acceptProposedAction()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(1360, 860)

    def save_settings(self) -> None:
        self.settings.set_geometry("window/geometry", self.saveGeometry())
        self.settings.set_geometry("window/splitter", self.splitter.saveState())
        if self.row_placement is not None:
            self.settings.set_geometry("window/left", self.row_placement.left_state())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.save_settings()
        # The window goes at once; the worker's jobs stop at their next check (a layer, a batch),
        # which a busy machine may make slow, so the wait is generous. A download cannot be
        # interrupted: if the worker does not stop in time, app.main ends the process instead of
        # waiting for the network.
        self.hide()
        self.worker_stuck = not self.client.shutdown(WORKER_PATIENCE_MS)
        super().closeEvent(event)


def _dropped_model(urls: list[QUrl]) -> Path | None:
    """The first local folder or file among dropped items: a reader decides whether it can open it."""
    for url in urls:
        if url.isLocalFile():
            return Path(url.toLocalFile())
    return None


def _tab_stops(widget: QWidget | None) -> list[QWidget]:
    """A toolbar's widget where Tab stops: itself, or the controls inside it (a notice's button)."""
    if widget is None:
        return []
    if widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
        return [widget]
    return [child for child in widget.findChildren(QWidget) if child.focusPolicy() & Qt.FocusPolicy.TabFocus]
