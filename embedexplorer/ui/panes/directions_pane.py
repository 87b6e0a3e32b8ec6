"""The Directions pane: a meaning made from example words, its two ends over the whole vocabulary, against chance.

Pairs (he->she, king->queen, man->woman) or two groups make a direction; every row is
scored by its cosine with it. The pane shows the tokens at each end (click one to look
it up), where the learner's own words fall, the same figures for 100 random directions,
and the best single number of the rows beside the direction.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.common.constants import END_SIZE, MAX_END_SIZE
from ...core.common.errors import QueryError
from ...core.directions.spec import DEFAULT_PAIRS, DirectionSpec, parse_pairs, parse_words
from ...core.text.texts import fixed
from ...jobs.direction_jobs import DIRECTION, DirectionRequest
from ..style import fonts
from ..widgets.scrolling import scroll_within
from ..widgets.steady_label import SteadyLabel
from ..widgets.table_rows import KeepRows
from ..window.plugging import PaneContext, Place

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.directions.report import DirectionReport
    from ...core.directions.scores import ScoredToken

TEXT_ROLE = Qt.ItemDataRole.UserRole + 3
_FIGURES = (
    ("std", "spread: std of all scores"),
    ("gap", f"gap: the {END_SIZE} at each end"),
    ("separation", "examples apart, in std"),
)


class DirectionsPane(QWidget):
    """Examples in; the direction's two ends, the learner's words, the random baseline and the best number out.

    ``requested`` carries a ``DirectionRequest``; ``token_activated`` the text of a token
    clicked at either end (to look it up).
    """

    requested = Signal(object)  # DirectionRequest
    token_activated = Signal(str)
    shown = Signal()

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "&Directions"
    PLACE = Place.RIGHT_TAB
    MENUS = ()
    ctx: PaneContext

    def bind(self, ctx: PaneContext) -> None:
        """Scores the pane's direction in the long lane; the first showing on each model asks for the default."""
        self.ctx = ctx
        self._asked = False  # this model has been asked about (a new model is asked again when the pane shows)
        self.requested.connect(self._ask)
        self.shown.connect(self._on_shown)
        self.token_activated.connect(lambda text: ctx.state.update(text=text))
        ctx.state.watch("model_serial", self._on_model_serial_changed)
        ctx.client.channel(DIRECTION, self).ready.connect(self.show_report)
        ctx.client.channel(DIRECTION, self).failed.connect(lambda failure: self.show_message(failure.message))
        ctx.client.channel(DIRECTION, self).progress.connect(self.show_progress)

    def _ask(self, request: DirectionRequest) -> None:
        if self.ctx.state.loaded:
            self._asked = True
            self.ctx.client.ask(DIRECTION, request, self)
        else:
            self.show_message("Open a model first.")

    def _on_shown(self) -> None:
        if not self._asked and self.ctx.state.loaded:
            self.submit()

    def _on_model_serial_changed(self, _serial: int) -> None:
        self._asked = False
        if self.isVisible():
            self._on_shown()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pairs_button = QRadioButton("&Pairs")
        self.groups_button = QRadioButton("Two &groups")
        self.pairs_button.setChecked(True)
        modes = QButtonGroup(self)
        modes.addButton(self.pairs_button)
        modes.addButton(self.groups_button)
        self.pairs_box = QLineEdit(", ".join(f"{a}->{b}" for a, b in DEFAULT_PAIRS))
        self.pairs_box.setAccessibleName("word pairs, as he->she")
        self.pairs_box.setToolTip("Pairs A->B, separated by commas: the direction is the mean of unit(B) - unit(A)")
        self.from_box = QLineEdit("he, king, man, boy")
        self.to_box = QLineEdit("she, queen, woman, girl")
        for box, name in ((self.from_box, "from group"), (self.to_box, "to group")):
            box.setAccessibleName(name)
        self.words_box = QLineEdit("nurse, doctor, actress, actor")
        self.words_box.setAccessibleName("your words")
        self.words_box.setPlaceholderText("your words, separated by commas")
        self.k_box = QSpinBox()
        self.k_box.setRange(1, MAX_END_SIZE)
        self.k_box.setValue(END_SIZE)
        self.k_box.setPrefix("ends of ")
        self.go = QPushButton("&Score every token")
        self.go.clicked.connect(self.submit)
        for box in (self.pairs_box, self.from_box, self.to_box, self.words_box):
            box.returnPressed.connect(self.submit)
        self.pairs_button.toggled.connect(self._on_mode)

        self.heading = SteadyLabel(2)
        self.progress = QLabel("")
        self.progress.setObjectName("hint")
        self.low_table = _ends_table("lowest: toward the first side")
        self.high_table = _ends_table("highest: toward the second side")
        for table in (self.low_table, self.high_table):
            table.cellClicked.connect(lambda row, _column, t=table: self._activate(t, row))
        self.words_table = QTableWidget(0, 4)
        self.words_table.setHorizontalHeaderLabels(["word", "token", "score", "above"])
        above = QTableWidgetItem("above")
        above.setToolTip("The share of all rows whose score is lower")
        self.words_table.setHorizontalHeaderItem(3, above)
        _fit_columns(self.words_table)
        self.baseline_table = QTableWidget(len(_FIGURES), 4)
        self.baseline_table.setHorizontalHeaderLabels(["", "this direction", "random: mean", "random: largest"])
        _fit_columns(self.baseline_table)
        self.baseline_line = SteadyLabel(1)
        self.best_line = SteadyLabel(2)
        for label in (self.heading, self.best_line):  # markup of their own; values escaped
            label.setTextFormat(Qt.TextFormat.RichText)

        inputs = QGridLayout()
        inputs.addWidget(self.pairs_button, 0, 0)
        inputs.addWidget(self.pairs_box, 0, 1, 1, 3)
        inputs.addWidget(self.groups_button, 1, 0)
        inputs.addWidget(self.from_box, 1, 1)
        inputs.addWidget(QLabel("\u2192"), 1, 2)
        inputs.addWidget(self.to_box, 1, 3)
        words_label = QLabel("Your w&ords")
        words_label.setBuddy(self.words_box)
        inputs.addWidget(words_label, 2, 0)
        inputs.addWidget(self.words_box, 2, 1, 1, 3)
        buttons = QHBoxLayout()
        buttons.addWidget(self.k_box)
        buttons.addWidget(self.go)
        buttons.addWidget(self.progress, 1)
        ends = QHBoxLayout()
        ends.addWidget(self.low_table)
        ends.addWidget(self.high_table)
        lower = QHBoxLayout()
        lower.addWidget(self.words_table, 2)
        right = QVBoxLayout()
        right.addWidget(self.baseline_line)
        right.addWidget(self.baseline_table)
        lower.addLayout(right, 3)
        # Tables too short to read show nothing: below these heights the pane scrolls instead
        # (a 1024x640 laptop in presentation mode), and never makes the window taller than the screen.
        for table in (self.low_table, self.high_table):
            KeepRows(table)  # seven ends of each side in sight at once, at any type size
        self.words_table.setMinimumHeight(110)
        self.baseline_table.setMinimumHeight(110)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(inputs)
        layout.addLayout(buttons)
        layout.addWidget(self.heading)
        layout.addLayout(ends, 3)
        layout.addLayout(lower, 2)
        layout.addWidget(self.best_line)
        self.scroll_area = scroll_within(self, content)
        self._on_mode(True)

    # ----- what the learner asks -------------------------------------------------------------
    def spec(self) -> DirectionSpec:
        """The direction the boxes describe; a QueryError in one sentence when they describe none."""
        if self.pairs_button.isChecked():
            return DirectionSpec(pairs=parse_pairs(self.pairs_box.text()))
        first, second = parse_words(self.from_box.text()), parse_words(self.to_box.text())
        if not first or not second:
            raise QueryError("Type at least one word in each group.")
        return DirectionSpec(groups=(first, second))

    def request(self) -> DirectionRequest:
        return DirectionRequest(self.spec(), parse_words(self.words_box.text()), self.k_box.value())

    def submit(self) -> None:
        try:
            request = self.request()
        except QueryError as exc:
            self.show_message(str(exc))
            return
        self.progress.setText("Scoring every token...")
        self.requested.emit(request)

    def _on_mode(self, pairs: bool) -> None:
        self.pairs_box.setEnabled(pairs)
        self.from_box.setEnabled(not pairs)
        self.to_box.setEnabled(not pairs)

    def _activate(self, table: QTableWidget, row: int) -> None:
        item = table.item(row, 0)
        if item is not None:
            self.token_activated.emit(str(item.data(TEXT_ROLE)))

    # ----- answers ----------------------------------------------------------------------------------
    def show_report(self, report: DirectionReport) -> None:
        self.progress.setText("")
        notes = " ".join(report.notes)
        self.heading.setText(
            f"<b>{escape(report.label)}</b>: the cosine of every one of {report.rows:,} rows with it"
            + (f"<br>{escape(notes)}" if notes else "")
        )
        _fill_ends(self.low_table, report.bottom)
        _fill_ends(self.high_table, report.top)
        places = report.words + report.examples
        self.words_table.setRowCount(len(places))
        for row, place in enumerate(places):
            example = row >= len(report.words)
            cells = (
                place.word + (" (example)" if example else ""),
                fonts.for_window(place.query.token),
                f"{place.score:+.3f}",  # signed, as the ends beside it and the command line print a score
                f"{place.percentile:.1f}%",
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if place.query.note:
                    item.setToolTip(place.query.note)
                self.words_table.setItem(row, column, item)
        self._show_baseline(report)
        self.best_line.setText(escape(report.best_line()))

    def _show_baseline(self, report: DirectionReport) -> None:
        summary = report.baseline_summary()
        if summary is None:
            self.baseline_line.setText("No random baseline was asked for.")
            self.baseline_table.clearContents()
            return
        self.baseline_line.setText(f"Against {summary['directions']} random directions (seed {summary['seed']}):")
        self.baseline_line.setToolTip(
            "The same figures for random directions: how much more this direction orders the vocabulary than chance. "
            "The examples are apart by construction on their own direction; your words are the fair test."
        )
        for row, (key, name) in enumerate(_FIGURES):
            figure = summary[key]
            assert isinstance(figure, dict)
            cells = (
                name,
                f"{fixed(figure['direction'], 3)} ({figure['times_random_mean']:.1f}x)"
                if figure["times_random_mean"] is not None
                else fixed(figure["direction"], 3),
                fixed(figure["random_mean"], 3),
                f"{fixed(figure['random_max'], 3)} ({figure['random_at_least_as_large']} reach it)",
            )
            for column, text in enumerate(cells):
                self.baseline_table.setItem(row, column, QTableWidgetItem(text))

    def show_progress(self, share: float, message: str) -> None:
        self.progress.setText(message if share < 0 else f"{message}: {share:.0%}")

    def show_message(self, message: str) -> None:
        self.progress.setText("")
        self.heading.setText(escape(message))
        for table in (self.low_table, self.high_table, self.words_table):
            table.setRowCount(0)
        self.baseline_table.clearContents()
        self.best_line.setText("")

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.shown.emit()

    # ----- small questions the window may ask ----------------------------------------------------
    def end_tokens(self, highest: bool = True) -> list[str]:
        table = self.high_table if highest else self.low_table
        items = (table.item(r, 0) for r in range(table.rowCount()))
        return [item.text() for item in items if item is not None]


def _ends_table(title: str) -> QTableWidget:
    table = QTableWidget(0, 3)
    table.setHorizontalHeaderLabels([title, "id", "score"])
    table.setAccessibleName(title)
    _fit_columns(table)
    return table


def _fit_columns(table: QTableWidget) -> None:
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setTabKeyNavigation(False)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    # A title wider than its column (presentation mode on a small screen) ends in "...", its start
    # readable, and is whole in its tooltip: a header's own default clips its centred text at both edges.
    header.setTextElideMode(Qt.TextElideMode.ElideRight)
    for column in range(table.columnCount()):
        item = table.horizontalHeaderItem(column)
        if item is not None and item.text() and not item.toolTip():
            item.setToolTip(item.text())
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for column in range(1, table.columnCount()):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)


def _fill_ends(table: QTableWidget, ends: tuple[ScoredToken, ...]) -> None:
    table.setRowCount(len(ends))
    for row, token in enumerate(ends):
        items = (
            QTableWidgetItem(fonts.for_window(token.token)),
            QTableWidgetItem(str(token.id)),
            QTableWidgetItem(f"{token.score:+.3f}"),
        )
        items[0].setData(TEXT_ROLE, token.text or token.token)
        items[0].setToolTip("Click to look this token up")
        for column, item in enumerate(items):
            if column:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(row, column, item)
    table.scrollToTop()
