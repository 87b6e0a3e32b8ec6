"""A layout that fits a laptop: the row pane beside the map on a short window, a shorter model bar on a narrow one.

On a tall enough window the left column holds the row pane (its plot at a usable height)
above the neighbour list (at least ``MIN_NEIGHBOUR_ROWS`` rows). On a shorter one, such as
a 1024x640 laptop, both cannot fit: the row pane becomes a tab beside the map, and the
neighbours and the map, which show the same answer (list and rings), stay on screen together.
On a window too narrow for the model bar and the exercises' bar in full, the chapter's note
is two words, and if that is not enough the exercises' bar folds into one button with their
menu: every exercise stays one click away, never behind a bar's "»", and the map keeps the
height a second line of bars would take. The model box shows the whole name where the bar has
room for it and its other controls; a longer one (a deep folder) shows its start, whole in the tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

from PySide6.QtCore import QByteArray, QChildEvent, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QMainWindow,
    QMenu,
    QSplitter,
    QTabWidget,
    QToolBar,
    QToolButton,
    QWidget,
)

from ..widgets.pause import after_pause
from .chapter_notice import ChapterNotice

# Neighbour rows the list shows at least, with the row pane above it (the figure for 1366x768).
MIN_NEIGHBOUR_ROWS = 8
ROW_TAB_TITLE = "&Row"
MODEL_BOX_CHARS, COMPACT_MODEL_BOX_CHARS = 34, 16
MODEL_BOX_TIP = (
    "A model folder or file, a Hugging Face id such as openai-community/gpt2, or 'bundled'. Press Enter to open."
)
BAR_ALLOWANCE = 16  # pixels a toolbar takes beyond its items: its handle and frame


class RowPlacement(QObject):
    """Moves the upper pane (the row) between the left column (above the others) and the tabs beside the map.

    Parameters
    ----------
    left:
        The vertical splitter of the left column: the upper pane, then ``lower``.
    row_view:
        The upper pane, at the top of ``left`` when there is room; its ``least_height(width)`` (if it
        has one) says how tall it must be at the column's width, its ``prefers_tab()`` (if it has
        one) that it goes beside the map whatever the room, its ``TITLE`` names its tab.
    lower:
        The widget that stacks the other left-column panes under it.
    stacked:
        Those panes; each that has ``growth_for_rows(n)`` (the neighbours) says how much taller it
        must be to show ``MIN_NEIGHBOUR_ROWS`` rows.
    tabs:
        The tabs beside the map, where the upper pane goes on a short window.
    """

    moved = Signal()  # the row pane went to the tabs, or back to the left column

    def __init__(
        self, left: QSplitter, row_view: QWidget, lower: QWidget, stacked: Sequence[QWidget], tabs: QTabWidget
    ) -> None:
        super().__init__(left)
        self.left, self.row_view, self.lower, self.tabs = left, row_view, lower, tabs
        self.stacked = list(stacked)
        self._split_state: QByteArray | None = None  # the left column's sizes, kept while the row pane is away
        self._sized = False  # True once the sizes were remembered, restored, or set for the first time
        # Later, not inside a resize: moving a pane re-lays out the very widgets being resized.
        # The timer is the placement's own, so it dies with the window.
        self._later = _later(self, self.place)
        left.splitterMoved.connect(lambda _pos, _index: setattr(self, "_sized", True))
        left.installEventFilter(self)
        # A new size of type (presentation) changes what both panes need, also where the column keeps its height.
        row_view.installEventFilter(self)

    # ----- what the window asks --------------------------------------------------------------
    @property
    def compact(self) -> bool:
        """True while the row pane is a tab beside the map."""
        return self.tabs.indexOf(self.row_view) >= 0

    def sizes_restored(self) -> None:
        """The window restored the left column's remembered sizes: keep them."""
        self._sized = True

    def left_state(self) -> QByteArray:
        """The left column's sizes with the row pane in it, to remember (also while it is a tab)."""
        if self.compact and self._split_state is not None:
            return self._split_state
        return self.left.saveState()

    def needed_height(self) -> int:
        """How tall the left column must be for the row pane and ``MIN_NEIGHBOUR_ROWS`` rows together."""
        return self._row_height() + self.left.handleWidth() + self._neighbours_height()

    def wants_compact(self) -> bool:
        """True where the row pane belongs beside the map now: the column is too short, or the pane asks to."""
        prefers_tab = getattr(self.row_view, "prefers_tab", None)
        return self.left.height() < self.needed_height() or (prefers_tab is not None and prefers_tab())

    def place(self) -> None:
        """Put the row pane where it fits now."""
        height = self.left.height()
        if height <= 0:
            return
        want_compact = self.wants_compact()
        if want_compact and not self.compact:
            self._split_state = self.left.saveState()
            current = self.tabs.currentWidget()  # the pane the person is reading stays in front, not its index
            self.tabs.insertTab(1, self.row_view, getattr(self.row_view, "TITLE", "") or ROW_TAB_TITLE)
            if current is not None:
                self.tabs.setCurrentWidget(current)
            self.tabs.setTabToolTip(1, "The selected token's row: on this small window it sits beside the map")
            self.moved.emit()
        elif not want_compact and self.compact:
            self.tabs.removeTab(self.tabs.indexOf(self.row_view))
            self.left.insertWidget(0, self.row_view)
            self.row_view.show()
            if self._split_state is not None:
                self.left.restoreState(self._split_state)
            self._fit_sizes(height)
            self.moved.emit()
        elif not self.compact:
            self._fit_sizes(height)

    # ----- inside ----------------------------------------------------------------------------
    def _row_height(self) -> int:
        # The pane's own minimum counts its plot at a few pixels (it may be squeezed by hand): usable here.
        # Asked at the left column's width, where it would sit: the tab beside the map is wider (a
        # legend on fewer rows), and the pane may be there now.
        least = getattr(self.row_view, "least_height", None)
        return least(self.left.width()) if least is not None else self.row_view.minimumSizeHint().height()

    def _neighbours_height(self) -> int:
        # A list pane says how much taller than its least height it must be to show that many rows;
        # the stack gives every other pane its preferred height (the list takes what is left).
        growth = 0
        for pane in self.stacked:
            grow = getattr(pane, "growth_for_rows", None)
            if grow is not None:
                growth += grow(MIN_NEIGHBOUR_ROWS)
            elif not pane.isHidden():
                growth += max(0, pane.sizeHint().height() - pane.minimumSizeHint().height())
        return self.lower.minimumSizeHint().height() + growth

    def _fit_sizes(self, height: int) -> None:
        """Both panes at least as tall as they need: the first time, the neighbours get what
        ``MIN_NEIGHBOUR_ROWS`` rows need and the row pane the rest."""
        room = height - self.left.handleWidth()
        neighbours = self._neighbours_height()
        sizes = self.left.sizes()
        if len(sizes) != 2:
            return
        if not self._sized:
            self._sized = True
            self.left.setSizes([room - neighbours, neighbours])
            return
        # Remembered sizes from a taller window may leave either pane short here: share out again.
        row, rest = sizes
        if row < self._row_height() or rest < neighbours:
            self.left.setSizes([max(self._row_height(), room - neighbours), neighbours])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.left and event.type() == QEvent.Type.Resize:
            self._later.start()
        elif watched is self.row_view and event.type() == QEvent.Type.FontChange:
            self._later.start()
        return False


def widen_for_titles(splitter: QSplitter, panes: Sequence[QWidget], right: QWidget) -> None:
    """The splitter's first column as wide as its panes' titles want (a pane's ``wanted_width()``),
    taken from what ``right`` can spare above its least width. A wide enough column stays as it is."""
    sizes = splitter.sizes()
    if len(sizes) != 2:
        return
    wants = (getattr(pane, "wanted_width", None) for pane in panes if pane.isVisible())
    wanted = max((want() for want in wants if want is not None), default=0)
    grow = min(wanted - sizes[0], sizes[1] - right.minimumSizeHint().width())
    if grow > 0:
        splitter.setSizes([sizes[0] + grow, sizes[1] - grow])


def show_name_start(box: QComboBox) -> None:
    """A name longer than its box shows its start (which model), the whole of it one hover away."""
    line = box.lineEdit()
    if line is not None and not line.hasFocus():
        line.setCursorPosition(0)
    name = box.currentText()
    fits = box.fontMetrics().horizontalAdvance(name) <= (line.width() if line is not None else box.width())
    box.setToolTip(MODEL_BOX_TIP if fits or not name else f"{name}\n\n{MODEL_BOX_TIP}")


def chars_for_name(box: QComboBox, least: int, most: int) -> int:
    """The box's width in Qt's own unit (an "x"'s advance) for its whole current text, within [least, most].

    QComboBox sizes itself as its minimum contents length times the font's "x": measured with
    the font it draws with, the whole name fits (one "x" over for the line edit's margins).
    """
    metrics = box.fontMetrics()
    needed = math.ceil(metrics.horizontalAdvance(box.currentText()) / max(1, metrics.horizontalAdvance("x"))) + 1
    return max(least, min(most, needed))


class BarFit(QObject):
    """Room for the bars on one line: a shorter chapter note, then the exercises folded into one button.

    The model box is as wide as the whole name it shows, at most half the window. When the bars
    still do not fit side by side (a narrow window, presentation's larger type), the exercises'
    bar folds into an "Exercises" button on the model bar whose menu holds the same actions, so
    every exercise stays one click away and the map keeps the bar's height; the Exercises menu
    holds them too. If the model bar alone is still too wide (a deep folder's path), the box
    gives the other controls their room and shows the path's start, the whole in its tooltip.
    """

    controls_changed = Signal()  # the fold button was made: the window puts it in its Tab order

    def __init__(self, window: QMainWindow, model_box: QComboBox, notice: ChapterNotice) -> None:
        super().__init__(window)
        self.window, self.model_box, self.notice = window, model_box, notice
        self.compact = False
        self.folded = False
        self.fold_button: QToolButton | None = None  # made the first time the exercises fold
        self._fold_action: QAction | None = None  # the button's place on the model bar
        self._later = _later(self, self.fit)
        # The box as wide as its minimum contents, so that a shorter minimum makes it narrower.
        model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        window.installEventFilter(self)
        notice.installEventFilter(self)

    def bars_width(self, folded: bool | None = None) -> int:
        """The width the toolbars' items ask for, side by side: as they are now, or with the exercises'
        bar ``folded`` into its button or not.

        Summed item by item: a bar that overflows reports only the part it shows. Nothing is shown
        or hidden to measure: showing a bar lays the window out at once, and the model bar then kept
        the width it had beside the exercises' bar after they folded (its end behind its "»").
        """
        folded = self.folded if folded is None else folded
        exercises = self.exercises_bar()
        total = 0
        for bar in self.window.findChildren(QToolBar):
            if (bar is exercises and folded) or (bar is not exercises and bar.isHidden()):
                continue
            layout = bar.layout()
            spacing = max(0, layout.spacing()) if layout is not None else 0
            margins = layout.contentsMargins() if layout is not None else None
            total += BAR_ALLOWANCE + (margins.left() + margins.right() if margins is not None else 0)
            for action in bar.actions():
                widget = bar.widgetForAction(action)
                # The fold button counts while hidden too: this sum falls a few pixels short of what
                # Qt's layout takes, and the margin keeps the model bar from overflowing ("»").
                if (action.isVisible() or action is self._fold_action) and widget is not None:
                    total += _laid_out_width(widget) + spacing
        return total

    def fit(self) -> None:
        # Measured in full each time (sizes are asked for, nothing is painted in between): the
        # font may have changed since (presentation mode), the note come or gone, the name changed.
        width = self.window.width()
        self._set(False)
        if self.bars_width(folded=False) > width:
            self._set(True)
        folded = self.bars_width(folded=False) > width
        self._fold(folded)
        excess = self.bars_width(folded) - width
        if excess > 0:
            self._narrow_box(excess)
        # A control the bar hid for want of room tells nobody of its new width: the bar is laid out again.
        bar = self.model_box.parentWidget()
        layout = bar.layout() if bar is not None else None
        if layout is not None:
            layout.invalidate()

    def exercises_bar(self) -> QToolBar | None:
        """The bar that folds into one button when the two do not fit side by side."""
        bars = [bar for bar in self.window.findChildren(QToolBar) if not bar.isAncestorOf(self.model_box)]
        return bars[0] if bars else None

    def _fold(self, on: bool) -> None:
        bar = self.exercises_bar()
        if bar is None or on == self.folded:
            return
        self.folded = on
        self._fold_button(bar)
        bar.setHidden(on)
        if self._fold_action is not None:
            # Through its action: a toolbar shows its widgets again on its next layout otherwise.
            self._fold_action.setVisible(on)

    def _fold_button(self, bar: QToolBar) -> QToolButton:
        if self.fold_button is None:
            model_bar = self.model_box.parentWidget()
            button = QToolButton()
            button.setText(bar.windowTitle() or "Exercises")
            button.setToolTip("The exercises: on this narrow window their bar is folded into this button")
            button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
            menu = QMenu(button)
            for action in bar.actions():
                menu.addAction(action)
            button.setMenu(menu)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            button.setAccessibleName("Exercises")
            if isinstance(model_bar, QToolBar):
                self._fold_action = model_bar.addWidget(button)
                self._fold_action.setVisible(False)
            else:
                button.hide()
            self.fold_button = button
            self.controls_changed.emit()
        return self.fold_button

    def _set(self, compact: bool) -> None:
        self.compact = compact
        self.notice.set_compact(compact)
        # Never narrower than the whole name, never wider than half the window.
        most = self.window.width() // 2 // max(1, self.model_box.fontMetrics().horizontalAdvance("x"))
        least = COMPACT_MODEL_BOX_CHARS if compact else MODEL_BOX_CHARS
        self.model_box.setMinimumContentsLength(chars_for_name(self.model_box, min(least, most), most))
        # QComboBox keeps its first width hint, and the bar its first layout: say the width outright.
        self.model_box.setFixedWidth(self.model_box.sizeHint().width())
        show_name_start(self.model_box)

    def _narrow_box(self, excess: int) -> None:
        """The box ``excess`` pixels narrower, never narrower than its compact width: the bar's other
        controls stay in sight (not behind its "»"), the name shows its start."""
        box = self.model_box
        box.setMinimumContentsLength(COMPACT_MODEL_BOX_CHARS)
        least = box.sizeHint().width()
        box.setFixedWidth(max(least, box.width() - excess))
        show_name_start(box)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        # A new width, a new size of type (presentation), or the chapter's note coming or going.
        kinds = (
            QEvent.Type.Resize, QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange,
            QEvent.Type.Show, QEvent.Type.Hide,
        )
        if event.type() in kinds:
            self._later.start()
        return False


def _laid_out_width(widget: QWidget) -> int:
    """The width a layout gives ``widget``: its size hint within its least and most widths (the model
    box's fixed width, not the hint of its contents)."""
    return min(max(widget.sizeHint().width(), widget.minimumWidth()), widget.maximumWidth())


def _later(owner: QObject, call: Callable[[], None]) -> QTimer:
    """A single-shot timer of ``owner`` that runs ``call`` once the events now posted are handled."""
    return after_pause(owner, call, 0)


# How long after showing the window manager's frame (its title bar) may still arrive.
FRAME_WAIT_MS = 2000


# What a window manager's title bar takes beside the title: the icon, the buttons, the margins (openbox,
# GNOME and KDE alike take 100 to 150 pixels); and how much larger its type may be than the window's.
TITLE_BAR_ROOM = 160
TITLE_FONT_SCALE = 1.15


def room_for_title(dialog: QWidget) -> None:
    """A dialog at least as wide as its whole title needs in the title bar (never wider than the screen).

    A small dialog (a width to export, a name to type) is laid out for its field alone, and the
    window manager then cuts its title in the middle: "Export...e map". Called as it shows: a
    dialog's layout may set its least size itself (QInputDialog's does), so it is widened instead.
    """
    font = QFont(dialog.font())
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * TITLE_FONT_SCALE)
    needed = QFontMetrics(font).horizontalAdvance(dialog.windowTitle()) + TITLE_BAR_ROOM
    screen = dialog.screen() or QGuiApplication.primaryScreen()
    if screen is not None:
        needed = min(needed, screen.availableGeometry().width())
    if dialog.width() < needed and dialog.maximumWidth() >= needed:
        dialog.resize(needed, dialog.height())


def fit_to_screen(window: QWidget) -> None:
    """Never larger than the screen's free area (a laptop's 1366x768 or 1024x640), frame included, and on it."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    free = screen.availableGeometry()
    # The frame (title bar, borders) is not part of the window's own size.
    frame_w = max(0, window.frameGeometry().width() - window.geometry().width())
    frame_h = max(0, window.frameGeometry().height() - window.geometry().height())
    width = min(window.width(), free.width() - frame_w)
    height = min(window.height(), free.height() - frame_h)
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    x = min(max(window.x(), free.left()), free.right() - width - frame_w + 1)
    y = min(max(window.y(), free.top()), free.bottom() - height - frame_h + 1)
    if (x, y) != (window.x(), window.y()):
        window.move(x, y)


class ScreenFit(QObject):
    """Keeps the framed window inside the screen when something other than a person sized it.

    The window manager adds its title bar after the window is shown: until that frame is known
    the window hangs below the screen's edge with its status bar, so the window is fitted again
    as the frame arrives (it comes as a move). And Qt grows a window to what its panes need at
    least (a pane on its way to another place, larger type): once they need less, it goes back
    inside the screen. A size asked for (a person's, a test's) is left alone.
    """

    def __init__(self, window: QWidget, title_room: bool = False) -> None:
        super().__init__(window)
        self.window = window
        self._title_room = title_room  # a dialog: as wide as its title needs
        self._frame_pending = False
        self._grown_by_panes = False
        # The fits given to this window's dialogs, held until each dialog is gone (``_hold``).
        self._dialog_fits: list[ScreenFit] = []
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind == QEvent.Type.ChildPolished and isinstance(event, QChildEvent):
            # A dialog of this window (or of one of its dialogs) is about to show: it fits the screen too.
            child = event.child()
            own = Qt.FindChildOption.FindDirectChildrenOnly
            if isinstance(child, QDialog) and child.isWindow() and not child.findChildren(ScreenFit, "", own):
                self._hold(ScreenFit(child, title_room=True))
        elif kind == QEvent.Type.Show:
            if self._title_room:
                room_for_title(self.window)
            self._frame_pending = True
            QTimer.singleShot(FRAME_WAIT_MS, self._frame_came)
            QTimer.singleShot(0, self._fit)
        elif kind == QEvent.Type.Move and self._frame_pending:
            QTimer.singleShot(0, self._fit)
        elif kind == QEvent.Type.Resize and isinstance(event, QResizeEvent):
            new, old, least = event.size(), event.oldSize(), self.window.minimumSizeHint()
            grown = new.height() > old.height() >= 0 or new.width() > old.width() >= 0
            at_least = new.height() <= least.height() or new.width() <= least.width()
            if grown and at_least and not self.inside_screen():
                self._grown_by_panes = True
        elif kind == QEvent.Type.LayoutRequest and self._grown_by_panes:
            QTimer.singleShot(0, self._refit_after_growth)
        return False

    def _hold(self, fit: ScreenFit) -> None:
        """Keep ``fit`` (and through it its dialog's Python side) alive as long as the dialog lives.

        A dialog that Qt makes itself (a static QFileDialog or QInputDialog call) has a Python side
        that nobody holds but its fit, and the two form a cycle: a collection while the dialog was
        up freed both, and the dialog's next event then reached a fit without its Python side (a
        crash, or a filter without its state).
        """
        self._dialog_fits.append(fit)
        fit.window.destroyed.connect(partial(self._let_go, fit))

    def _let_go(self, fit: ScreenFit) -> None:
        self._dialog_fits = [held for held in self._dialog_fits if held is not fit]

    def _frame_came(self) -> None:
        self._frame_pending = False

    def _fit(self) -> None:
        fit_to_screen(self.window)

    def _refit_after_growth(self) -> None:
        if self._grown_by_panes:
            fit_to_screen(self.window)
            self._grown_by_panes = not self.inside_screen()

    def inside_screen(self) -> bool:
        screen = self.window.screen()
        if screen is None:
            return True
        free, frame = screen.availableGeometry(), self.window.frameGeometry()
        return frame.width() <= free.width() and frame.height() <= free.height()

