"""The main window: the frame the panes plug into, its menus and toolbars, the status bar.

The window holds the application state, builds each pane of ``pane_list.PANES`` with a
``PaneContext`` and puts it where its entry says. Panes follow and change the state and
talk to the worker themselves; the window never reaches into them. It keeps for itself
what belongs to the frame: messages, progress, the model's facts, size and place on the
screen, and what it remembers of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import (
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
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
from ..style.focus import show_focus_everywhere
from ..style.plain_text import guard_plain_text
from ..widgets.elided_label import ElidedLabel
from .fitting import RowPlacement, ScreenFit, fit_to_screen
from .help_menu import add_help_menu, show_about
from .message_bar import MessageBar
from .model_bar import ModelBar
from .pane_list import PANES
from .plugging import MessageAction, PaneContext, PaneEntry, Place

MENUS = ("&File", "&Map", "&View", "E&xercises", "&Help")


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
        self.setWindowTitle("EmbedExplorer")
        self.setAcceptDrops(True)
        self.resize(1360, 860)
        self._menus = {title: self.menuBar().addMenu(title) for title in MENUS}
        self._toolbars: dict[str, QToolBar] = {}
        self.message_bar = MessageBar()
        self._build_status_bar()

        ctx = PaneContext(self.state, client, settings, self)
        self.model_bar = ModelBar(ctx)
        self.panes = SimpleNamespace()
        built: list[tuple[PaneEntry, object]] = []
        for entry in panes:
            pane = entry.pane.plug(ctx)
            setattr(self.panes, entry.name, pane)
            built.append((entry, pane))
        self._place_panes(built)
        file_menu = self._menus["&File"]
        file_menu.addSeparator()
        quit_action = file_menu.addAction("&Quit")
        quit_action.triggered.connect(self.close)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        add_help_menu(self._menus["&Help"], self)
        self._restore(built)
        self.screen_fit = ScreenFit(self)  # inside the screen with the window manager's frame, whatever grew

    # ----- construction ------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        self.facts_label = ElidedLabel("No model open yet.")
        self.progress = QProgressBar()
        # The bar shows the share; what is being done goes beside it, where any length fits.
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(True)
        self.progress.setFormat("%p%")
        self.progress.hide()
        self.statusBar().addWidget(self.facts_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

    def _place_panes(self, built: list[tuple[PaneEntry, object]]) -> None:
        """Top panes under the message bar; a left column (upper and lower) beside tabs on the right."""
        placed = {place: [p for e, p in built if e.place is place] for place in Place}
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.setSpacing(0)
        for pane in placed[Place.LEFT_LOWER]:
            lower_layout.addWidget(pane, 1 if pane is placed[Place.LEFT_LOWER][-1] else 0)  # type: ignore[arg-type]
        self.left = QSplitter(Qt.Orientation.Vertical)
        for pane in placed[Place.LEFT_UPPER]:
            self.left.addWidget(pane)  # type: ignore[arg-type]
        self.left.addWidget(lower)
        self.left.setStretchFactor(0, 2)
        self.left.setStretchFactor(1, 3)
        self.left.setChildrenCollapsible(False)
        # The map and the layers share the right side: both want the room, one at a time.
        self.right = QTabWidget()
        for entry, pane in built:
            if entry.place is Place.RIGHT_TAB:
                self.right.addTab(pane, entry.title)  # type: ignore[call-overload]
        # Where the left column is too short for both, the upper pane moves beside the map.
        self.row_placement = RowPlacement(
            self.left, placed[Place.LEFT_UPPER][0], placed[Place.LEFT_LOWER][-1], self.right  # type: ignore[arg-type]
        )
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.left)
        self.splitter.addWidget(self.right)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([520, 840])
        self.splitter.setChildrenCollapsible(False)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 4, 6, 2)
        layout.setSpacing(3)  # every pixel counts on a 640-pixel screen
        layout.addWidget(self.message_bar)
        for pane in placed[Place.TOP]:
            layout.addWidget(pane)  # type: ignore[arg-type]
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

    def _restore(self, built: list[tuple[PaneEntry, object]]) -> None:
        geometry = self.settings.geometry("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        self.fit_to_screen()
        for key, splitter in (("window/splitter", self.splitter), ("window/left", self.left)):
            state = self.settings.geometry(key)
            if state is not None:
                splitter.restoreState(state)
                if splitter is self.left:
                    self.row_placement.sizes_restored()
        # The toolbars' buttons are controls like any other: Tab reaches them, and shows it has.
        for bar in self._toolbars.values():
            for action in bar.actions():
                button = bar.widgetForAction(action)
                if isinstance(button, QToolButton):
                    button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        # Tab walks the panes in the list's order, each pane's controls in its own order.
        chain = [widget for _entry, pane in built for widget in getattr(pane, "focus_chain", list)()]
        for first, second in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(first, second)

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
        self.facts_label.setToolTip(tooltip)

    def menu(self, title: str) -> QMenu:
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
        self.settings.set_geometry("window/left", self.row_placement.left_state())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.save_settings()
        # A download cannot be interrupted: if the worker does not stop in time, app.main
        # ends the process once the window has gone, instead of waiting for the network.
        self.worker_stuck = not self.client.shutdown()
        super().closeEvent(event)


def _dropped_model(urls: list[QUrl]) -> Path | None:
    """The first local folder or file among dropped items: a reader decides whether it can open it."""
    for url in urls:
        if url.isLocalFile():
            return Path(url.toLocalFile())
    return None
