"""Text in, token chips out: each chip shows a token's readable form and its id."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QKeySequence, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from ...core.text.texts import Token
from ...jobs.table_jobs import TOKENS, TokensAnswer, TokensRequest
from ...state import Selection
from ..style import fonts
from ..widgets.steady_label import SteadyLabel
from ..window.plugging import PaneContext, Place

TYPING_PAUSE_MS = 120  # wait for a pause in typing before asking the worker
TOKEN_ROLE = Qt.ItemDataRole.UserRole + 1
INPUT_SCALE = 1.25  # the text field's type, against the window's: the text is what the pane is about

# Chips are items of one wrapping list view: a thousand of them cost no widgets at all.
CHIP_STYLE = """
QListWidget { background: transparent; border: 2px solid transparent; border-radius: 6px; }
QListWidget:focus { border: 2px solid palette(highlight); }
QListWidget::item {
    border: 1px solid palette(mid); border-radius: 5px; padding: 3px 8px; margin: 2px;
    background: palette(base);
}
QListWidget::item:selected { border: 1px solid palette(highlight); background: palette(highlight);
    color: palette(highlighted-text); }
"""


def chip_label(token: Token) -> str:
    """The token as the window can draw it (``U+XXXX`` where no font has a glyph), then its id."""
    return f"{fonts.for_window(token.token)}\n{token.id}"


# Pixels between a chip's token and its id: "_" hangs below its line and would touch the id.
CHIP_LINE_GAP = 4


class ChipDelegate(QStyledItemDelegate):
    """Draws a chip's two lines (token, id) a few pixels apart, so "_" never sits on the id."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        plain = QStyleOptionViewItem(option)
        self.initStyleOption(plain, index)
        plain.text = ""  # the frame and the background as the style sheet says, then our text
        widget = option.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, plain, painter, widget)
        lines = text.split("\n")
        metrics = option.fontMetrics  # type: ignore[attr-defined]
        height = metrics.height()
        total = height * len(lines) + CHIP_LINE_GAP * (len(lines) - 1)
        rect = option.rect  # type: ignore[attr-defined]
        top = rect.top() + (rect.height() - total) // 2
        selected = bool(option.state & QStyle.StateFlag.State_Selected)  # type: ignore[attr-defined]
        painter.save()
        painter.setPen(option.palette.highlightedText().color() if selected else option.palette.text().color())  # type: ignore[attr-defined]
        for number, line in enumerate(lines):
            y = top + number * (height + CHIP_LINE_GAP)
            painter.drawText(QRect(rect.left(), y, rect.width(), height), Qt.AlignmentFlag.AlignCenter, line)
        painter.restore()

    def sizeHint(  # noqa: N802 - Qt's name
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        size = super().sizeHint(option, index)
        lines = str(index.data(Qt.ItemDataRole.DisplayRole) or "").count("\n")
        return QSize(size.width(), size.height() + CHIP_LINE_GAP * lines)


class TokenPane(QWidget):
    """A line edit (debounced) and a row of chips; clicking a chip selects that token."""

    text_changed = Signal(str)  # after a pause in typing
    token_selected = Signal(int, int, str)  # id, place in the text (0-based), readable token

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._wanted: int | None = None  # a chip to select when the next tokens arrive
        self.input = QLineEdit()
        self.input.setPlaceholderText('Type a word or a sentence, e.g. " Paris" or "The capital of France is"')
        self.input.setClearButtonEnabled(True)
        # Qt cuts a line at 32,767 characters by default; the engine reads a long paste
        # itself and says in the summary how much of it was read.
        self.input.setMaxLength(1_000_000)
        self.input.setAccessibleName("text to split into tokens")
        self._size_input()

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(TYPING_PAUSE_MS)
        self._debounce.timeout.connect(lambda: self.text_changed.emit(self.input.text()))
        self.input.textChanged.connect(lambda _text: self._debounce.start())

        self.summary = SteadyLabel(1)  # one line: the tooltip has a long note whole
        self.summary.setObjectName("hint")

        self.chip_list = QListWidget()
        self.chip_list.setFlow(QListView.Flow.LeftToRight)
        self.chip_list.setWrapping(True)
        self.chip_list.setResizeMode(QListView.ResizeMode.Adjust)
        self.chip_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.chip_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chip_list.setStyleSheet(CHIP_STYLE)
        self.chip_list.setItemDelegate(ChipDelegate(self.chip_list))
        self.chip_list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.chip_list.setFixedHeight(48)
        self.chip_list.setAccessibleName("tokens of the text")
        self.chip_list.setToolTip("Each chip is one token and its id. Click one to see its row and neighbours.")
        self.chip_list.itemSelectionChanged.connect(self._on_selection_changed)
        # As tall from the start as one row of chips will be, so the first answer moves nothing.
        self.chip_list.addItem(QListWidgetItem("x\n0"))
        self._fit_height()
        self.chip_list.clear()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)  # the window's gap: every pixel counts on a short screen, the neighbours' list gets them
        row = QHBoxLayout()
        label = QLabel("&Text:")
        label.setBuddy(self.input)
        row.addWidget(label)
        row.addWidget(self.input, 1)
        layout.addLayout(row)
        layout.addWidget(self.chip_list)
        layout.addWidget(self.summary)

    def _size_input(self) -> None:
        """The text a quarter larger than the window's, whatever the window's is (presentation: larger)."""
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * INPUT_SCALE)
        self.input.setFont(font)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "chip_list"):
            self._size_input()  # its font is its own, so it does not follow the application's by itself
            self.chip_list.setFont(self.font())  # nor do the chips: a style sheet holds their font still
            self._fit_height()  # the chips' rows are taller or shorter now

    def flush(self) -> None:
        """Send the text now instead of after the typing pause (used when a model opens)."""
        self._debounce.stop()
        self.text_changed.emit(self.input.text())

    def select_when_shown(self, index: int | None) -> None:
        """Select the chip at ``index`` when the next tokens arrive (a lesson's token)."""
        self._wanted = index

    def set_text(self, text: str) -> None:
        self.input.setText(text)

    def set_text_quietly(self, text: str) -> None:
        """Show ``text`` without asking for its tokens (restoring a saved session)."""
        self.input.blockSignals(True)
        self.input.setText(text)
        self.input.blockSignals(False)

    def text(self) -> str:
        return self.input.text()

    def focus(self) -> None:
        """Put the cursor in the text field with its text selected, ready to be typed over."""
        self.input.setFocus()
        self.input.selectAll()

    def show_tokens(self, answer: TokensAnswer) -> None:
        """Replace the chips with a text's tokens and keep the selected place when it still exists."""
        result = answer.report
        previous = self.selected_index()
        self.chip_list.blockSignals(True)
        self.chip_list.clear()
        for index, token in enumerate(result.tokens):
            item = QListWidgetItem(chip_label(token))
            item.setData(TOKEN_ROLE, token)
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            item.setToolTip(f"token {fonts.for_window(token.token)}, id {token.id}, place {index + 1} in the text")
            self.chip_list.addItem(item)
        self.chip_list.blockSignals(False)
        self._fit_height()
        if not result.tokens:
            note = f" {result.note}" if result.note else ""
            self.summary.setText(
                f"No tokens.{note} The chips show each token and its id; click one to see its row and neighbours."
            )
            return
        count = f"{result.count:,} token{'s' if result.count != 1 else ''}"
        self.summary.setText(f"{count}. Each id picks one row of the embedding table. {result.note}".strip())
        wanted, self._wanted = self._wanted, None
        if wanted is not None and wanted < self.chip_list.count():
            previous = wanted
        self.select(previous if previous is not None and previous < self.chip_list.count() else 0)

    def _fit_height(self) -> None:
        """As tall as the rows of chips need, up to three rows; the list scrolls beyond that."""
        self.chip_list.doItemsLayout()
        count = self.chip_list.count()
        bottom = self.chip_list.visualItemRect(self.chip_list.item(count - 1)).bottom() if count else 0
        frame = 2 * self.chip_list.frameWidth()  # the focus frame's room, drawn or not
        self.chip_list.setFixedHeight(max(48, min(bottom + 8 + frame, 150 + frame)))

    @property
    def chip_tokens(self) -> list[Token]:
        return [self.chip_list.item(i).data(TOKEN_ROLE) for i in range(self.chip_list.count())]

    @property
    def chip_labels(self) -> list[str]:
        return [self.chip_list.item(i).text() for i in range(self.chip_list.count())]

    def select(self, index: int) -> None:
        if 0 <= index < self.chip_list.count():
            self.chip_list.setCurrentRow(index)  # the list was rebuilt, so this always changes it

    def selected_index(self) -> int | None:
        rows = self.chip_list.selectedIndexes()
        return rows[0].row() if rows else None

    def show_message(self, message: str) -> None:
        self.summary.setText(message)

    def _on_selection_changed(self) -> None:
        index = self.selected_index()
        if index is not None:
            token = self.chip_list.item(index).data(TOKEN_ROLE)
            self.token_selected.emit(token.id, index, token.token)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        # No taller than its parts: every spare pixel belongs to the panes below.
        layout = self.layout()
        return QSize(800, layout.sizeHint().height() if layout is not None else 150)

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Text and tokens"
    PLACE = Place.TOP
    MENUS = ("&View",)
    ctx: PaneContext

    def bind(self, ctx: PaneContext) -> None:
        """The text of the state, split into tokens by the worker; a chip clicked is the state's selection."""
        self.ctx = ctx
        state, client = ctx.state, ctx.client
        self.set_text_quietly(state.text)
        state.watch("text", self._on_text_changed)
        state.watch("place_wanted", self._on_place_wanted_changed)
        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("selection", self._on_state_selection_changed)
        self.text_changed.connect(self._on_typed)
        self.token_selected.connect(self._on_chip_selected)
        client.channel(TOKENS, self).ready.connect(self.show_tokens)
        client.channel(TOKENS, self).failed.connect(lambda failure: self.show_message(failure.message))
        focus = ctx.shell.menu("&View").addAction("Focus the &text")
        focus.triggered.connect(self.focus)
        focus.setShortcut(QKeySequence("Ctrl+L"))

    def _ask_tokens(self, text: str) -> None:
        state = self.ctx.state
        if not text.strip():
            state.update(selection=None)  # no text, no token: nothing of the last one stays on screen
        if state.loaded:
            self.ctx.client.ask(TOKENS, TokensRequest(text), self)

    def _on_text_changed(self, text: str) -> None:
        if self.text() != text:
            self.set_text_quietly(text)
        self._ask_tokens(text)

    def _on_place_wanted_changed(self, place: int | None) -> None:
        self.select_when_shown(place)
        if place is not None and place < self.chip_list.count():
            self.select(place)  # the tokens are there already (the same text)

    def _on_model_serial_changed(self, _serial: int) -> None:
        self.flush()

    def _on_state_selection_changed(self, selection: Selection | None) -> None:
        if selection is not None and not selection.in_text:
            # A token chosen elsewhere by its id: no chip stands for it, and a lit one could not be clicked again.
            self.chip_list.clearSelection()

    def _on_typed(self, text: str) -> None:
        if self.ctx.state.text == text:
            self._ask_tokens(text)
        else:
            self.ctx.state.update(text=text)

    def _on_chip_selected(self, token_id: int, place: int, token: str) -> None:
        state = self.ctx.state
        selection = Selection(token_id, place, token)
        if selection == state.selection:
            state.touch("selection")  # picked again (the same text typed again): asked again
        state.update(selection=selection, place_wanted=None)

    def focus_chain(self) -> list[QWidget]:
        """The pane's controls in the order Tab walks them."""
        return [self.input, self.chip_list]
