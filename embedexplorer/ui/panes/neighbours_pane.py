"""The nearest rows of the selected token, with a cosine bar and the model's baseline."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QKeySequence, QPainter, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.common.constants import K_RANGE
from ...core.text.texts import fixed
from ...jobs.table_jobs import COSINE, NEIGHBOURS, CosineAnswer, CosineRequest, NeighboursAnswer, NeighboursRequest
from ...state import Selection
from ..style import fonts, theme
from ..widgets.pause import K_PAUSE_MS, TYPING_PAUSE_MS, after_pause
from ..widgets.steady_label import SteadyLabel
from ..widgets.wrapped_label import WrappedLabel
from ..window.fitting import MIN_NEIGHBOUR_ROWS
from ..window.plugging import PaneContext, Place

COSINE_COLUMN = 2
# A row's height: its text's and this many pixels around it. Presentation's larger type makes the text
# taller, not the gap: eight whole rows then fit a 1024x640 laptop in presentation mode under a tall title
# bar (GNOME's, KDE's), above the note and the Cosine with box. (Rows of 1.3 lines of their type left the
# eighth row a scroll away there; 1.55 lines left two rows out under openbox's thin one.)
ROW_GAP = 4
COSINE_ROLE = Qt.ItemDataRole.UserRole + 1
# The title of a usual word: the column is made wide enough for it where the map can spare the room (wider,
# the Layers pane's boxes beside the map would cut their hints).
USUAL_TITLE = "Nearest to <b>monday</b> (id 10,000)"


class CosineBarDelegate(QStyledItemDelegate):
    """Draws a cosine as a bar from 0 to 1, with a tick where unrelated tokens sit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.baseline = 0.0

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().paint(painter, option, index)
        value = index.data(COSINE_ROLE)
        if value is None:
            return
        rect: QRect = option.rect.adjusted(56, 5, -6, -5)
        if rect.width() < 10:
            return
        painter.save()
        colour = QColor(theme.family_colour(0))
        colour.setAlpha(170)
        filled = int(rect.width() * max(0.0, min(1.0, float(value))))
        painter.fillRect(rect.x(), rect.y(), filled, rect.height(), colour)
        painter.setPen(QPen(theme.accent(), 2))
        tick = rect.x() + int(rect.width() * max(0.0, min(1.0, self.baseline)))
        painter.drawLine(tick, rect.y() - 3, tick, rect.bottom() + 3)
        painter.restore()


class NeighboursPane(QWidget):
    k_changed = Signal(int)
    neighbour_activated = Signal(str)  # the neighbour's text, to become the new query
    compare_requested = Signal(str)

    def __init__(self, k: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = SteadyLabel(1, "Nearest neighbours by cosine")
        self.heading.setTextFormat(Qt.TextFormat.RichText)  # the token in bold, escaped
        self.k_box = QSpinBox()
        self.k_box.setRange(*K_RANGE)
        self.k_box.setValue(k)
        self.k_box.setPrefix("k = ")
        self.k_box.setToolTip("How many neighbours to list")
        self.k_box.setAccessibleName("number of neighbours")
        self._k_timer = after_pause(self, lambda: self.k_changed.emit(self.k_box.value()), K_PAUSE_MS)
        self.k_box.valueChanged.connect(lambda _v: self._k_timer.start())
        # The cosine answer's lines are fitted once the pane's new size or type is laid out.
        self._answer_fit = after_pause(self, self._fit_answer, 0)
        self.k_box.valueChanged.connect(lambda _v: self._answer_fit.start())

        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["token", "id", "cosine"])
        self.table.verticalHeader().setVisible(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.delegate = CosineBarDelegate(self.table)
        self.table.setItemDelegateForColumn(COSINE_COLUMN, self.delegate)
        self.table.setToolTip("Double-click a neighbour to look it up")
        # Rows as tall as their text: eight of them fit a laptop screen beside the row pane.
        rows = self.table.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self._size_rows()
        # Tab leaves the table for the next pane instead of walking its cells.
        self.table.setTabKeyNavigation(False)
        self.table.cellActivated.connect(self._on_activated)
        self.table.cellDoubleClicked.connect(self._on_activated)

        self.baseline_label = WrappedLabel(2)
        self.baseline_label.setObjectName("hint")

        self.compare_input = QLineEdit()
        self.compare_input.setPlaceholderText("e.g.  France")  # beside "Cosine with:"; a longer hint is cut
        self.compare_input.setClearButtonEnabled(True)
        self.compare_input.setAccessibleName("word to compare with")
        self.compare_input.returnPressed.connect(self._on_compare)
        self._size_compare()
        self._compare_timer = after_pause(self, self._on_compare, TYPING_PAUSE_MS)
        self.compare_input.textChanged.connect(lambda _t: self._compare_timer.start())
        # Beside the question, on two lines: the whole answer wrapped, or shortened with "…" and
        # whole in its tooltip; never cut mid-word. (A line of its own would cost the list a row.)
        # On a short pane it takes fewer lines, down to one, rather than the list a row (_fit_answer).
        self.compare_result = WrappedLabel(2)
        self._answer_lines = 2  # the lines it takes where there is room
        self.compare_result.setAccessibleName("cosine answer")
        self.hidden_note = QLabel()
        self.hidden_note.setWordWrap(True)
        self.hidden_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hidden_note.hide()
        self._hidden = False
        self._marked: int | None = None

        self._top = top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.k_box)
        compare = QHBoxLayout()
        self._compare_label = compare_label = QLabel("Cosine &with:")
        compare_label.setBuddy(self.compare_input)
        compare.addWidget(compare_label)
        compare.addWidget(self.compare_input, 1)  # a word or two: the answer beside it gets the room
        compare.addWidget(self.compare_result, 3)
        self._column = layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)  # the two-line cosine answer's room, taken from the gaps: the list keeps its rows
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.hidden_note, 1)
        layout.addWidget(self.baseline_label)
        layout.addLayout(compare)
        self._texts: list[str] = []

    def _size_rows(self) -> None:
        """Rows as tall as their text: in presentation's larger type, taller rows (never cut letters)."""
        rows = self.table.verticalHeader()
        rows.setDefaultSectionSize(round(QFontMetricsF(self.table.font()).height() + ROW_GAP))
        self.table.setMinimumHeight(rows.defaultSectionSize() * 2 + 30)

    def _size_compare(self) -> None:
        """The word to compare with in sight whole, its clear button beside it."""
        self.compare_input.setMinimumWidth(self.compare_input.fontMetrics().horizontalAdvance("wednesday") + 40)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange) and hasattr(self, "table"):
            self._size_rows()
            self._size_compare()
            self._answer_fit.start()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._answer_fit.start()

    def _table_height(self, rows: int) -> int:
        """The list's height for ``rows`` whole rows under its header."""
        table = self.table
        wanted = table.verticalHeader().defaultSectionSize() * rows
        return wanted + table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + 2

    def _compare_height(self, lines: int) -> int:
        """The Cosine with line's height with its answer on ``lines`` lines."""
        boxes = (self._compare_label.sizeHint().height(), self.compare_input.sizeHint().height())
        return max(*boxes, self.compare_result.height_for(lines))

    def _fit_answer(self) -> None:
        """The cosine answer on the lines it takes where there is room, fewer (down to one) where the list
        would otherwise lose one of its first ``MIN_NEIGHBOUR_ROWS`` rows: the list and the note come first.

        Only the pane's own height decides (never the list's, which this changes), so a size gives one layout.
        """
        lines = self._answer_lines
        # The rest of the pane (title, note, margins) as its layout counts it at least; the list is held out.
        rest = self._column.minimumSize().height() - self.table.minimumHeight()
        rest -= self._compare_height(self.compare_result.lines())
        room = self.height() - rest - self._table_height(min(self.k(), MIN_NEIGHBOUR_ROWS))
        while lines > 1 and not self._hidden and self._compare_height(lines) > room:
            lines -= 1
        if lines != self.compare_result.lines():
            self.compare_result.set_lines(lines)

    # ----- what the window asks of the pane ------------------------------------------------
    def k(self) -> int:
        return self.k_box.value()

    def set_k(self, k: int) -> None:
        self.k_box.setValue(k)

    def compare_text(self) -> str:
        return self.compare_input.text()

    def focus_compare(self) -> None:
        self.compare_input.setFocus()

    def set_hidden(self, hidden: bool, message: str = "") -> None:
        """Guess first: keep the list out of sight (answers still arrive and wait) until revealed."""
        self._hidden = hidden
        self.table.setVisible(not hidden)
        self.hidden_note.setVisible(hidden)
        self.hidden_note.setText(message or "The neighbours are hidden until you guess.")
        self._answer_fit.start()

    def is_hidden(self) -> bool:
        return self._hidden

    def mark(self, token_id: int | None) -> None:
        """Set the row of ``token_id`` (a guess) in bold and bring it into view; None unmarks."""
        self._marked = token_id
        for row in range(self.table.rowCount()):
            identifier = self.table.item(row, 1)
            marked = identifier is not None and token_id is not None and identifier.text() == f"{token_id}"
            for column in range(self.table.columnCount()):
                item = self.table.item(row, column)
                # Only rows whose state changes: a font set on every cell cost each answer milliseconds.
                if item is not None and item.font().bold() != marked:
                    font = item.font()
                    font.setBold(marked)
                    item.setFont(font)
            if marked and identifier is not None:
                self.table.scrollToItem(identifier)

    def visible_rows(self) -> int:
        """How many neighbour rows fit in the table's viewport as it is laid out now."""
        height = self.table.verticalHeader().defaultSectionSize()
        return self.table.viewport().height() // max(1, height) if self.table.isVisible() else 0

    def show_neighbours(self, answer: NeighboursAnswer) -> None:
        result, baseline = answer.result, answer.baseline
        # A new query starts at the top with nothing selected (the old selection meant another list).
        self.table.clearSelection()
        self.table.scrollToTop()
        if result.query is not None:
            shown = escape(fonts.for_window(result.query.token))
            self.heading.setText(f"Nearest to <b>{shown}</b> (id {result.query.id:,})")
        self.delegate.baseline = baseline
        self.table.setRowCount(len(result.neighbours))
        self._texts = list(answer.typed) or [n.token for n in result.neighbours]
        for row, neighbour in enumerate(result.neighbours):
            token, identifier, cosine = (self._cell(row, column) for column in range(3))
            token.setText(fonts.for_window(neighbour.token))
            identifier.setText(f"{neighbour.id}")
            cosine.setText(f"{neighbour.cosine:.3f}")
            cosine.setData(COSINE_ROLE, float(neighbour.cosine))
            cosine.setToolTip(f"cosine {neighbour.cosine:.4f}; unrelated tokens here average {fixed(baseline, 3)}")
        if not result.neighbours:
            self.heading.setText("No neighbours to show.")
        self.mark(self._marked)
        note = f" {result.note}" if result.note else ""
        self.baseline_label.setText(
            f"The tick marks {fixed(baseline, 3)}, the mean cosine of random unrelated tokens in this "
            f"model: judge every value against it.{note}"
        )

    def _cell(self, row: int, column: int) -> QTableWidgetItem:
        """The item at (row, column), made once and then reused: each answer only sets texts."""
        item = self.table.item(row, column)
        if item is None:
            item = QTableWidgetItem()
            if column == 1:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, column, item)
        return item

    def neighbour_tokens(self) -> list[str]:
        items = (self.table.item(r, 0) for r in range(self.table.rowCount()))
        return [item.text() for item in items if item is not None]

    def show_cosine(self, result: CosineAnswer) -> None:
        self.compare_result.setText(result.line)

    def show_compare_message(self, message: str) -> None:
        self.compare_result.setText(message)

    def clear(self) -> None:
        """No query: no rows, no heading, no cosine."""
        self.table.setRowCount(0)
        self.heading.setText("Nearest neighbours by cosine")
        self.compare_result.clear()
        self._marked = None

    def _on_activated(self, row: int, _column: int) -> None:
        if 0 <= row < len(self._texts):
            self.neighbour_activated.emit(self._texts[row])

    def _on_compare(self) -> None:
        self._compare_timer.stop()
        text = self.compare_input.text()
        if text.strip():
            self.compare_requested.emit(text)
        else:
            self.compare_result.clear()

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Nearest rows"
    PLACE = Place.LEFT_LOWER
    MENUS = ("&View",)
    ctx: PaneContext

    def bind(self, ctx: PaneContext) -> None:
        """The selected token's k nearest rows and the cosine with another word; k is the state's."""
        self.ctx = ctx
        state, client = ctx.state, ctx.client
        self.set_k(state.k)
        state.watch("selection", self._on_selection_changed)
        state.watch("k", self._on_k_changed)
        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("neighbours_held", self._on_neighbours_held_changed)
        state.watch("guess_mark", self._on_guess_mark_changed)
        # k is the state's at once (a lesson saved now has it); the request waits for the pause.
        self.k_box.valueChanged.connect(lambda k: state.update(k=k))
        # Larger type, the same sentences: a line more for each, so the baseline and the cosine stay whole.
        state.watch("presentation", self.set_presenting)
        self.set_presenting(state.presentation)
        self.k_changed.connect(self._ask_again)
        self.neighbour_activated.connect(lambda text: state.update(text=text))
        self.compare_requested.connect(self._on_compare_typed)
        client.channel(NEIGHBOURS, self).ready.connect(self.show_neighbours)
        client.channel(NEIGHBOURS, self).failed.connect(lambda failure: ctx.shell.show_message(failure.message))
        client.channel(COSINE, self).ready.connect(self.show_cosine)
        client.channel(COSINE, self).failed.connect(lambda failure: self.show_compare_message(failure.message))
        compare = ctx.shell.menu("&View").addAction("&Compare with another word")
        compare.triggered.connect(self.focus_compare)
        compare.setShortcut(QKeySequence("Ctrl+K"))

    def _on_selection_changed(self, selection: Selection | None) -> None:
        state, client = self.ctx.state, self.ctx.client
        if selection is None:
            client.cancel(NEIGHBOURS, self)
            client.cancel(COSINE, self)
            self.clear()
            return
        client.ask(NEIGHBOURS, NeighboursRequest(selection.token_id, state.k), self)
        if state.compare_text.strip():
            client.ask(COSINE, CosineRequest(selection.token_id, state.compare_text), self)

    def _on_k_changed(self, k: int) -> None:
        self.set_k(k)
        self._k_timer.start()  # the list is asked for once the spinning stops

    def _on_model_serial_changed(self, _serial: int) -> None:
        self.clear()

    def _on_neighbours_held_changed(self, held: str) -> None:
        self.set_hidden(bool(held), held)

    def _on_guess_mark_changed(self, mark: int | None) -> None:
        self.mark(mark)

    def _ask_again(self, _k: int) -> None:
        selection = self.ctx.state.selection
        if selection is not None:
            self.ctx.client.ask(NEIGHBOURS, NeighboursRequest(selection.token_id, self.ctx.state.k), self)

    def _on_compare_typed(self, other: str) -> None:
        state = self.ctx.state
        state.update(compare_text=other)
        if state.selection is not None:
            self.ctx.client.ask(COSINE, CosineRequest(state.selection.token_id, other), self)
        else:
            self.show_compare_message("Select a token first.")

    def set_presenting(self, on: bool) -> None:
        self.baseline_label.set_lines(3 if on else 2)
        self._answer_lines = 3 if on else 2
        self.compare_result.set_lines(self._answer_lines)
        self._answer_fit.start()  # in the new type, once it is laid out

    def focus_chain(self) -> list[QWidget]:
        return [self.k_box, self.table, self.compare_input]  # as drawn: k above the list, Cosine with below

    def wanted_width(self) -> int:
        """How wide the pane must be for a usual title whole beside the k box (the window widens its column
        to that where the map can spare it: on resizing, never as answers come, which would move the map)."""
        margins = self._column.contentsMargins()
        title = max(self.heading.whole_width(USUAL_TITLE), self.heading.whole_width())
        room = title + max(0, self._top.spacing()) + self.k_box.sizeHint().width()
        return room + margins.left() + margins.right()

    def growth_for_rows(self, rows: int) -> int:
        """How much taller than its least height the pane must be to show ``rows`` neighbours, with the cosine
        answer on all its lines (so that where the row pane goes never depends on how the answer was fitted)."""
        answer = self._compare_height(self._answer_lines) - self._compare_height(self.compare_result.lines())
        # Above the least height the layout gives the list: its own (set in _size_rows).
        return max(0, self._table_height(rows) - self.table.minimumHeight()) + answer
