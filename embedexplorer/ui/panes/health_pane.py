"""The Health tab: which tokens of the open table look untrained, and why.

The pane asks the worker for the vocabulary's health (a long job with progress and Stop)
the first time it shows for a model, and draws the answer: the ranked tokens with their
reason chips and indicators, filters by reason, a histogram of the score with the
threshold marked, and exports. A click on a token makes it the state's selection, so the
row, the neighbours and the map follow; Map > Colour by health colours any map by the
score. It computes nothing itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QItemSelection, Qt, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...core.common.errors import EmbedExplorerError
from ...core.health.scoring import REASONS
from ...jobs.health_jobs import HEALTH, HealthRequest
from ...state import Selection
from ..style import theme
from ..style.plot_type import size_plot_text
from ..widgets.flow_layout import flow_row
from ..widgets.progress_bar import job_progress_bar, show_share
from ..widgets.save_target import ask_save_target, not_exported, refused_export
from ..widgets.scrolling import scroll_within
from ..widgets.side_or_below import SideOrBelow
from ..window.plugging import PaneContext, Place
from .health_table import ID_ROLE, REASONS_COLUMN, HealthTableModel, ReasonChips
from .health_verify import VerifyBar

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.map_change import MapChange
    from ...core.health.repeat_check import RepeatCheck
    from ...core.health.report import HealthReport

EXPORT_KINDS = "CSV (*.csv);;JSON (*.json)"
# Scores above this are drawn in the histogram's last bar (a broken row scores 100).
_DRAWN_UP_TO_THRESHOLDS = 3
_TOKEN_CHARS = 14  # the token column at its widest, in wide letters
_TITLE_PT = 9.0  # the histogram's title at presentation's scale 1
# The histogram's least width beside the list: its red line's "threshold 4" whole in presentation's type.
_HISTOGRAM_BESIDE = 280
# Under the list: the histogram's height, and the list's in rows (the pane scrolls to both).
_HISTOGRAM_BELOW = 220
_ROWS_BELOW = 8
# Room a header section keeps around its word.
_HEADER_PADDING = 8


# How many reasons a row of the filters holds.

# What the summary line says with no report on screen, and while the first one is made.
_NO_REPORT = "Open the tab with a model open to check its vocabulary."
_CHECKING = "Checking the vocabulary: each token's row, and its round trip through the tokenizer."


class HealthPane(QWidget):
    """Ask for the vocabulary's health, then read the ranked tokens, their reasons and the score's spread."""

    requested = Signal()
    stop_requested = Signal()
    shown = Signal()
    token_chosen = Signal(int, str)  # id and readable token: the state's selection
    filter_changed = Signal(list, bool)  # the ticked reasons and "flagged only", to remember
    exported = Signal(str)  # a status line

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: HealthReport | None = None
        self.repeat_check: RepeatCheck | None = None  # the check with the model, once asked
        self.colour_action = QAction("Colour by &health", self)  # Map > Colour by health, once bound
        self.colour_action.setCheckable(True)
        self.colour_action.setToolTip(
            "Colour every point of the map by its token's health score (red: untrained-looking)"
        )
        self.check_button = QPushButton("&Check the vocabulary")
        self.check_button.setToolTip("Round-trip every token through the tokenizer and read every row (long lane)")
        self.check_button.clicked.connect(self.requested.emit)
        # Two Stop buttons share the tab: each says what it stops (the model check's is below).
        self.stop_button = QPushButton("&Stop the vocabulary check")
        self.stop_button.setAccessibleName("stop the vocabulary check")
        self.stop_button.setToolTip("Stop reading the rows; the list on screen stays")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self._stop)
        self.export_button = QPushButton("&Export...")
        self.export_button.setToolTip("Save every token's score, reasons and indicators as CSV or JSON")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export_dialog)
        for button in (self.check_button, self.stop_button, self.export_button):
            button.setAutoDefault(False)
        self.progress = job_progress_bar(keep_room=False)  # on a line of its own
        self.summary = _plain_label(_NO_REPORT)
        self.message = _plain_label("")
        self.message.setStyleSheet("color: #a01010; font-weight: bold;")
        self.message.hide()
        # A row that wraps, the progress on a line of its own: one row held the pane wider than a laptop's.
        top = flow_row(self.check_button, self.stop_button, self.export_button)
        # The reasons in a menu, not a row of boxes: twelve boxes would make the tab as wide as a screen.
        self.filter_button = QToolButton()
        self.filter_button.setText("Reas&ons: all tokens")
        self.filter_button.setToolTip("Show only the tokens that carry any of the ticked reasons")
        self.filter_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        reasons_menu = QMenu(self.filter_button)
        self.filters: dict[str, QAction] = {}
        for reason in REASONS:
            action = reasons_menu.addAction(reason)
            action.setCheckable(True)
            action.toggled.connect(lambda _on: self._refilter())
            self.filters[reason] = action
        self.filter_button.setMenu(reasons_menu)
        self.flagged_only = QCheckBox("flagged o&nly")
        self.flagged_only.setToolTip("Only tokens whose score reaches the threshold")
        self.flagged_only.toggled.connect(lambda _on: self._refilter())
        self.shown_count = _plain_label("")
        self.verify = VerifyBar()  # the check with the model (health_verify.py)
        filters = QHBoxLayout()
        filters.addWidget(self.filter_button)
        filters.addWidget(self.flagged_only)
        filters.addWidget(self.shown_count, 1)
        self.model = HealthTableModel(self)
        self.verify.checked.connect(self._show_repeat)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setItemDelegate(ReasonChips(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setAccessibleName("tokens ranked by how untrained their rows look")
        self.table.clicked.connect(lambda index: self._choose(index.row()))
        self.table.activated.connect(lambda index: self._choose(index.row()))
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        # The histogram (a plot: 9 ms to build) comes when the tab first shows or a report does.
        self._histogram: pg.PlotWidget | None = None
        self._threshold_line: pg.InfiniteLine | None = None
        self.scale = 1.0  # presentation mode: the histogram's text larger (set_scale)
        self._histogram_box = QWidget()
        self._histogram_box.setMinimumWidth(200)
        QVBoxLayout(self._histogram_box).setContentsMargins(0, 0, 0, 0)
        # The histogram beside the list where the list can show every token's score and the reasons' header;
        # under it on a laptop or in presentation mode, where beside it would cut the list at "scor".
        self.body = SideOrBelow(
            self.table, self._histogram_box, self._list_wants, _HISTOGRAM_BESIDE, self._heights_below
        )
        self.body.setSizes([700, 380])
        # On a narrow or short window (a laptop, presentation mode) the pane scrolls rather than
        # holding the whole window wider or taller than the screen, as the Layers pane does.
        content = QWidget()
        self.scroll_area = scroll_within(self, content)
        layout = QVBoxLayout(content)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(self.summary)
        layout.addLayout(filters)
        layout.addWidget(self.verify)
        layout.addWidget(self.body, 1)
        self.export_dir = ""

    # ----- what the plug calls ---------------------------------------------------------------
    def show_started(self) -> None:
        self.message.hide()
        if self.report is None:  # "Open the tab..." no longer says what is going on
            self.summary.setText(_CHECKING)
        self.progress.setRange(0, 0)
        self.progress.setFormat("Checking the vocabulary...")
        self.progress.show()
        self.stop_button.setEnabled(True)
        self.check_button.setEnabled(False)

    def show_progress(self, share: float, message: str) -> None:
        show_share(self.progress, share, message)

    def show_failure(self, message: str) -> None:
        self._finished()
        self.message.setText(message)
        self.message.show()

    def show_report(self, report: HealthReport) -> None:
        self._finished()
        self.report = report
        summary = report.summary()
        counts = report.counts()
        head = "; its own output head was read too" if report.has_head else ""
        lines = [
            f"{report.model}: {report.size:,} tokens, {int(summary['flagged']):,} flagged "  # type: ignore[call-overload]
            f"(score >= {report.threshold:g}); {report.reference_count:,} unreachable tokens are the reference{head}.",
            *report.notes,
        ]
        self.summary.setText("\n".join(lines))
        for reason, action in self.filters.items():
            action.setText(f"{reason} ({counts.get(reason, 0):,})")
            action.setEnabled(counts.get(reason, 0) > 0)
        self.model.set_report(report, self._reasons(), self.flagged_only.isChecked())
        self._show_count()
        self._fit_columns()
        self.export_button.setEnabled(True)
        self.verify.clear()  # an earlier check belongs to the earlier list
        self.verify.set_ready(True)
        self._draw_histogram(report)

    def clear(self) -> None:
        self.report = None
        self.model.set_report(None, set(), False)
        if self._histogram is not None:
            self._histogram.clear()
        self._threshold_line = None
        self.summary.setText(_NO_REPORT)
        self.export_button.setEnabled(False)
        self.verify.clear()
        for reason, action in self.filters.items():
            action.setText(reason)
        self.shown_count.setText("")

    def select_token(self, token_id: int) -> None:
        """Show the state's selection in the list, if the filter shows it (without choosing it again)."""
        row = self.model.row_of(token_id)
        if row is None:
            return
        index = self.model.index(row, 0)
        blocked = self.table.selectionModel().blockSignals(True)
        self.table.selectRow(row)
        self.table.selectionModel().blockSignals(blocked)
        self.table.scrollTo(index)

    def export_dialog(self) -> None:
        if self.report is None:
            return
        # The folder any pane last saved to (the settings'), this pane's own until it is bound.
        folder = self.ctx.settings.export_dir if hasattr(self, "ctx") else self.export_dir
        start = Path(folder or Path.home()) / "vocabulary-health.csv"
        path = ask_save_target(self.window(), "Export vocabulary health", start, EXPORT_KINDS, (".csv", ".json"))
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> bool:
        """Write the report to ``path`` (CSV or JSON by its suffix); one sentence if it cannot be written."""
        if self.report is None:
            return False
        from ...core.health.export import write_health

        try:
            write_health(path, self.report, repeat=self.repeat_check)
        except OSError as exc:
            self.show_failure(not_exported("list", path, exc.strerror or str(exc)))
            return False
        except EmbedExplorerError as exc:
            self.show_failure(refused_export(str(exc)))
            return False
        self.export_dir = str(Path(path).parent)
        self.exported.emit(f"Vocabulary health exported to {path}")
        return True

    # ----- inside ------------------------------------------------------------------------------
    def _reasons(self) -> set[str]:
        return {reason for reason, action in self.filters.items() if action.isChecked()}

    def set_filter(self, reasons: list[str], flagged_only: bool) -> None:
        """Tick these reasons (unknown names are passed over) and "flagged only", as remembered."""
        for reason, action in self.filters.items():
            action.setChecked(reason in reasons)
        self.flagged_only.setChecked(flagged_only)
        self._refilter()

    def _refilter(self) -> None:
        reasons = self._reasons()
        self.filter_changed.emit(sorted(reasons), self.flagged_only.isChecked())
        self.filter_button.setText("Reas&ons: " + (", ".join(sorted(reasons)) if reasons else "all tokens"))
        self.model.set_filter(reasons, self.flagged_only.isChecked())
        self._show_count()

    def _show_count(self) -> None:
        if self.report is not None:
            self.shown_count.setText(f"{self.model.rowCount():,} of {self.report.size:,} tokens shown")

    def _finished(self) -> None:
        self.progress.hide()
        if self.report is None:  # stopped or failed before a report: no check is going on
            self.summary.setText(_NO_REPORT)
        self.stop_button.setEnabled(False)
        self.check_button.setEnabled(True)

    def _stop(self) -> None:
        self.stop_requested.emit()
        self.show_failure("Stopped; nothing was lost, and Check the vocabulary starts again.")

    def _top_ids(self, count: int) -> list[int]:
        """The ``count`` most suspicious tokens of the report, whatever the filter shows."""
        return [] if self.report is None else [int(i) for i in self.report.top(count)]

    def _show_repeat(self, check: RepeatCheck | None) -> None:
        self.repeat_check = check  # exported with the list
        self.model.set_repeat(check)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Columns as wide as their cells, but a long token (GPT-2 has 64 dashes) never pushes the rest away."""
        self.table.resizeColumnsToContents()
        widest = self.table.fontMetrics().horizontalAdvance("M" * _TOKEN_CHARS)
        self.table.setColumnWidth(2, min(self.table.columnWidth(2), widest))
        self.body.arrange()

    def _list_wants(self) -> int:
        """The list's width through the reasons' header: each token's rank, id, text and score whole, and the
        word "reasons" over the chips (the indicators after it are a sideways scroll away)."""
        table = self.table
        columns = sum(table.columnWidth(column) for column in range(REASONS_COLUMN))
        title = str(self.model.headerData(REASONS_COLUMN, Qt.Orientation.Horizontal))
        header = table.horizontalHeader().fontMetrics().horizontalAdvance(title) + 2 * _HEADER_PADDING
        return columns + header + table.verticalScrollBar().sizeHint().width() + 2 * table.frameWidth()

    def _heights_below(self) -> tuple[int, int]:
        rows = self.table.verticalHeader().defaultSectionSize() * _ROWS_BELOW
        return rows + self.table.horizontalHeader().sizeHint().height(), _HISTOGRAM_BELOW

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        # Presentation's larger type: the columns fitted to the smaller one would cut ids and scores with "…".
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange) and hasattr(self, "body"):
            if self.report is not None:
                self._fit_columns()
            self.body.arrange()

    def _choose(self, row: int) -> None:
        if self.report is None or not 0 <= row < self.model.rowCount():
            return
        token_id = int(self.model.index(row, 0).data(ID_ROLE))
        self.token_chosen.emit(token_id, str(self.report.tokens[token_id]))

    def _on_selection(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = {index.row() for index in selected.indexes()}
        if len(rows) == 1:  # the arrow keys move through the list: each token is looked at in turn
            self._choose(rows.pop())

    def _draw_histogram(self, report: HealthReport) -> None:
        self.histogram.clear()
        top = _DRAWN_UP_TO_THRESHOLDS * report.threshold
        drawn = np.clip(report.score, min(float(report.score.min()), 0.0), top)
        edges = np.linspace(float(drawn.min()), top, 61)
        counts, edges = np.histogram(drawn, bins=edges)
        # Counts span 1 to the whole vocabulary: drawn on a log scale, with ticks at powers of ten.
        heights = np.log10(1 + counts)
        self.histogram.plot(edges, heights, stepMode="center", fillLevel=0, brush=theme.family_colour(0))
        ticks = [(float(np.log10(1 + 10**p)), f"{10**p:,}") for p in range(int(heights.max()) + 1)]
        self.histogram.getAxis("left").setTicks([ticks])
        self._threshold_line = pg.InfiniteLine(
            report.threshold,
            angle=90,
            pen=pg.mkPen("#c03020", width=2),
            label=f"threshold {report.threshold:g}",
            labelOpts={"position": 0.9, "color": "#c03020"},
        )
        self.histogram.addItem(self._threshold_line)
        self.histogram.setLabel("bottom", f"score ({top:g}+ drawn at {top:g})")
        self._size_histogram_text()

    def set_scale(self, scale: float) -> None:
        """Presentation mode: the histogram's words and numbers ``scale`` times their size, as the other plots'."""
        self.scale = float(scale)
        if self._histogram is not None:
            self._size_histogram_text()

    def _size_histogram_text(self) -> None:
        plot = self.histogram
        tick_font = size_plot_text(plot, self.font(), self.scale)
        # The title stays short enough for a narrow histogram; what the last bar holds goes on its axis.
        plot.setTitle("every token's score", size=f"{_TITLE_PT * self.scale:g}pt")
        if self._threshold_line is not None:
            self._threshold_line.label.setFont(tick_font)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.histogram  # noqa: B018 - built as the tab shows
        self.shown.emit()

    @property
    def histogram(self) -> pg.PlotWidget:
        if self._histogram is None:
            plot = self._histogram = pg.PlotWidget(enableMenu=False)  # no context menu: not even built
            plot.setBackground(theme.plot_background())
            plot.setLabel("bottom", "score")
            plot.setLabel("left", "tokens (log scale)")
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            self._size_histogram_text()
            layout = self._histogram_box.layout()
            assert layout is not None
            layout.addWidget(plot)
            if self._histogram_box.isVisible():
                plot.show()
        return self._histogram

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Voca&bulary health"  # Alt+B: Alt+T is the Text box's
    PLACE = Place.RIGHT_TAB
    MENUS = ("&Map",)
    ctx: PaneContext

    def bind(self, ctx: PaneContext) -> None:
        """Asks for HEALTH on the long lane the first time it shows for a model; Map > Colour by health."""
        self.ctx = ctx
        state, client = ctx.state, ctx.client
        self.export_dir = ctx.settings.export_dir
        self.set_filter(ctx.settings.health_reasons, ctx.settings.health_flagged_only)
        self._asked = False
        self._ours: MapChange | None = None  # the colouring this pane gave the map, if it still shows
        ctx.shell.menu("&Map").addAction(self.colour_action)
        self.colour_action.toggled.connect(self._colour_map)
        channel = client.channel(HEALTH, self)
        channel.progress.connect(self.show_progress)
        channel.ready.connect(self._on_report)
        channel.failed.connect(lambda failure: self.show_failure(failure.message))
        self.requested.connect(self._ask)
        self.shown.connect(lambda: None if self._asked or not state.loaded else self._ask())
        self.stop_requested.connect(lambda: client.cancel(HEALTH, self))
        self.verify.bind(ctx, self, self._top_ids)
        self.token_chosen.connect(self._on_token_chosen)
        self.exported.connect(lambda text: ctx.shell.show_status(text))
        self.exported.connect(lambda _text: setattr(ctx.settings, "export_dir", self.export_dir))
        self.filter_changed.connect(self._remember_filter)
        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("map_change", self._on_map_change_changed)
        state.watch("selection", self._on_selection_changed)
        state.watch("presentation", lambda on: self.set_scale(theme.presentation_scale(on)))
        self.set_scale(theme.presentation_scale(state.presentation))

    def _ask(self) -> None:
        if not self.ctx.state.loaded:
            self.show_failure("Open a model first: its vocabulary is what is checked.")
            return
        self._asked = True
        self.show_started()
        self.ctx.client.ask(HEALTH, HealthRequest(), self)

    def _colour_map(self, on: bool) -> None:
        state = self.ctx.state
        if on and self.report is not None:
            from ...core.health.map_colouring import health_colouring

            self._ours = health_colouring(self.report)
            state.update(map_change=self._ours)
        elif on:
            if not self._asked:
                self._ask()  # the colours come with the answer
        elif state.map_change is not None and state.map_change is self._ours:
            state.update(map_change=None)

    def _on_report(self, report: HealthReport) -> None:
        self.show_report(report)
        if self.colour_action.isChecked():
            self._colour_map(True)

    def _on_map_change_changed(self, change: MapChange | None) -> None:
        if change is not self._ours and self.colour_action.isChecked():
            self.colour_action.blockSignals(True)  # another colouring (a comparison) took the map
            self.colour_action.setChecked(False)
            self.colour_action.blockSignals(False)

    def _on_model_serial_changed(self, _serial: int) -> None:
        self._asked = False
        self.verify.cancel()
        self.clear()
        if self.colour_action.isChecked():
            self.colour_action.setChecked(False)
        if self.isVisible():
            self._ask()

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is not None:
            self.select_token(selection.token_id)

    def _on_token_chosen(self, token_id: int, token: str) -> None:
        state = self.ctx.state
        # By its id: the listed tokens are often ones no text produces ([unusedN], a byte's half).
        selection = Selection(token_id, 0, token, in_text=False)
        if selection == state.selection:
            state.touch("selection")
        state.update(selection=selection)

    def _remember_filter(self, reasons: list[str], flagged_only: bool) -> None:
        self.ctx.settings.health_reasons = reasons
        self.ctx.settings.health_flagged_only = flagged_only

    def focus_chain(self) -> list[QWidget]:
        """The pane's controls in the order Tab walks them."""
        bar = self.verify
        return [self.check_button, self.export_button, self.filter_button, self.flagged_only, bar.count,
                bar.check_button, self.table]  # fmt: skip


def _plain_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # model names and notes come from files
    label.setWordWrap(True)
    return label


if __name__ == "__main__":  # a preview of the pane alone, on the bundled model
    import sys

    from PySide6.QtWidgets import QApplication

    from ...core.health.vocabulary_health import vocabulary_health
    from ...core.tables.opening import open_table

    app = QApplication(sys.argv)
    preview = HealthPane()
    preview.show_report(vocabulary_health(open_table("bundled")))
    preview.resize(1200, 700)
    preview.show()
    sys.exit(app.exec())
