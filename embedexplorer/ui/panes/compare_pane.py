"""Two tables side by side: how far each token's neighbours moved from table A (the open model) to table B.

The pane asks for a comparison (``compare_requested``), shows its progress, and draws the
answer: the distribution of neighbour overlaps and of row cosines, the most and least
changed tokens (a click looks the token up in the main window), and for one token both
neighbour lists side by side. It computes nothing itself.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.common.constants import COMPARE_K
from ...core.readers import file_dialog_filter
from ...jobs.compare_jobs import COMPARE, CompareRequest
from ...state import Selection
from ..style import fonts, theme
from ..style.plot_type import size_plot_text
from ..window.plugging import PaneContext, Place

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.comparison import Comparison
    from ...core.compare.map_change import MapChange

# Each listed token carries its comparison with its place in it, so a list can never name a place
# in a comparison that is gone (clearing a list moves its current item while it empties).
ENTRY_ROLE = Qt.ItemDataRole.UserRole
SHARED_COLOUR = QColor(40, 120, 60)
INVITATION = "Choose a second table of the same vocabulary: a quantised GGUF, a fine-tune, a larger model."


class ComparePane(QWidget):
    """Choose table B, compare, and read what changed token by token."""

    compare_requested = Signal(str, int, bool)  # B as typed, k, compare with the output head instead
    stop_requested = Signal()
    token_clicked = Signal(str)  # the text to look up in the main window
    map_change_chosen = Signal(object)  # a MapChange to colour the map with, or None for its families

    def __init__(self, k: int = COMPARE_K, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comparison: Comparison | None = None
        # A token clicked here and being looked up in the main window: its text may split into
        # several tokens there ("[unused671]"), whose first must not replace it here.
        self._looked_up: int | None = None
        self.source = QLineEdit()
        self.source.setPlaceholderText("table B: a model folder, a .gguf file, ollama:NAME or a Hugging Face id")
        self.source.setAccessibleName("table B")
        browse_file = QPushButton("File...")
        browse_file.clicked.connect(self._choose_file)
        browse_folder = QPushButton("Folder...")
        browse_folder.clicked.connect(self._choose_folder)
        self.k_box = QSpinBox()
        self.k_box.setRange(1, 100)
        self.k_box.setValue(k)
        self.k_box.setPrefix("k = ")
        self.k_box.setAccessibleName("neighbours per token")
        self.compare_button = QPushButton("&Compare")
        self.compare_button.clicked.connect(self.request)
        self.head_button = QPushButton("Its &output head")
        self.head_button.setToolTip("Compare the open model's token table with its own output head (lm_head)")
        self.head_button.clicked.connect(lambda: self.compare_requested.emit("", self.k_box.value(), True))
        self.stop_button = QPushButton("&Stop")
        self.stop_button.clicked.connect(self._stop)
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.hide()

        # In a dialog, Enter presses the default button: Compare, never a file chooser.
        for button in (browse_file, browse_folder, self.head_button, self.stop_button):
            button.setAutoDefault(False)
        self.compare_button.setDefault(True)

        chooser = QHBoxLayout()
        chooser.addWidget(QLabel("Compare with:"))
        chooser.addWidget(self.source, 1)
        for widget in (browse_file, browse_folder, self.k_box, self.compare_button, self.head_button, self.stop_button):
            chooser.addWidget(widget)

        # What was compared (paths, the files' types) in bold by the label's font, and the notes under it in
        # the usual weight: plain text, both (a path is shown as typed, markup and all).
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.header.font()
        bold.setBold(True)
        self.header.setFont(bold)
        self.header.hide()
        self.notes = QLabel(INVITATION)
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #a01010; font-weight: bold;")
        self.message.hide()

        self.colour_map = QCheckBox("Colour the &map by change")
        self.colour_map.setToolTip("Colour each point of the main window's map by how much its token changed")
        self.colour_map.setEnabled(False)
        self.measure = QComboBox()
        self.measure.addItems(["neighbours kept (overlap@k)", "row cosine"])
        self.measure.setAccessibleName("the change the map's colours show")
        self.measure.setEnabled(False)
        self.colour_map.toggled.connect(lambda _on: self._publish_map_change())
        self.measure.currentIndexChanged.connect(lambda _index: self._publish_map_change())
        colouring = QHBoxLayout()
        colouring.addWidget(self.colour_map)
        colouring.addWidget(self.measure)
        colouring.addStretch(1)

        self.overlap_plot = _plot("tokens", "neighbours kept (of k)")
        self.cosine_plot = _plot("tokens", "cosine of a token's two rows")
        self.set_scale(1.0)
        self.stats = QLabel()
        self.stats.setWordWrap(True)
        self.stats.setTextFormat(Qt.TextFormat.RichText)
        plots = QWidget()
        plots_layout = QVBoxLayout(plots)
        plots_layout.setContentsMargins(0, 0, 0, 0)
        plots_layout.addWidget(self.overlap_plot, 1)
        plots_layout.addWidget(self.cosine_plot, 1)
        plots_layout.addWidget(self.stats)

        self.most = _token_list("most changed tokens")
        self.least = _token_list("least changed tokens")
        for listing in (self.most, self.least):
            listing.currentItemChanged.connect(self._on_current)
            listing.itemActivated.connect(self._on_activated)
            listing.itemClicked.connect(self._on_activated)
        lists = QWidget()
        lists_layout = QGridLayout(lists)
        lists_layout.setContentsMargins(0, 0, 0, 0)
        lists_layout.addWidget(_bold_title("Most changed", " (click: look it up)"), 0, 0)
        lists_layout.addWidget(self.most, 1, 0)
        lists_layout.addWidget(_bold_title("Least changed"), 2, 0)
        lists_layout.addWidget(self.least, 3, 0)

        self.token_title = QLabel("Select a token to see its neighbours in both tables.")
        self.token_title.setWordWrap(True)
        self.token_title.setTextFormat(Qt.TextFormat.RichText)
        self.neighbours = QTableWidget(0, 4)
        self.neighbours.setHorizontalHeaderLabels(["in A", "cosine", "in B", "cosine"])
        self.neighbours.verticalHeader().setVisible(False)
        self.neighbours.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.neighbours.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.neighbours.setAccessibleName("the selected token's neighbours in A and in B")
        detail = QWidget()
        detail_layout = QVBoxLayout(detail)
        detail_layout.setContentsMargins(0, 0, 0, 0)
        detail_layout.addWidget(self.token_title)
        detail_layout.addWidget(self.neighbours, 1)

        body = QSplitter(Qt.Orientation.Horizontal)
        for part in (plots, lists, detail):
            body.addWidget(part)
        body.setSizes([420, 240, 420])
        body.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.addLayout(chooser)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(self.header)
        layout.addWidget(self.notes)
        layout.addLayout(colouring)
        layout.addWidget(body, 1)

    # ----- what the window calls ---------------------------------------------------------
    def k(self) -> int:
        return int(self.k_box.value())

    def set_source(self, spec: str) -> None:
        self.source.setText(spec)

    def request(self) -> None:
        spec = self.source.text().strip()
        if not spec:
            self.show_failure("Name table B first: a model folder, a .gguf file, ollama:NAME or a Hugging Face id.")
            return
        self.compare_requested.emit(spec, self.k(), False)

    def show_started(self, what: str) -> None:
        self.message.hide()
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"Comparing with {what}...")
        self.progress.show()
        self.stop_button.setEnabled(True)

    def show_progress(self, share: float, message: str) -> None:
        if share < 0:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(share * 1000))
        self.progress.setFormat(f"{message}: %p%")
        self.progress.show()

    def show_failure(self, message: str) -> None:
        self._finished()
        self.message.setText(message)
        self.message.show()

    def show_comparison(self, comparison: Comparison) -> None:
        self._finished()
        self.comparison = comparison
        summary = comparison.summary()
        self.header.setText(f"A: {comparison.a} ({comparison.storage_a})   B: {comparison.b} ({comparison.storage_b})")
        self.header.show()
        self.notes.setText("\n".join(comparison.notes))
        self.notes.setVisible(bool(comparison.notes))
        self._draw_overlaps(comparison)
        self._draw_cosines(comparison)
        lines = [
            f"{len(comparison):,} tokens, k = {comparison.k}, in {comparison.seconds:.1f} s",
            f"neighbours kept: mean <b>{summary['mean_overlap']:.2f}</b>, median {summary['median_overlap']:g}",
            f"A's nearest still nearest in B: {summary['nearest_kept']:.1%}",
        ]
        if comparison.row_cosine is not None:
            lines.append(
                f"row cosine: mean <b>{summary['mean_row_cosine']:.4f}</b>, median {summary['median_row_cosine']:.4f}"
            )
            lines.append(f"row error |a-b|/|a|: mean {summary['mean_relative_error']:.4f}")
        self.stats.setText("<br>".join(lines))
        self._fill(self.most, comparison, comparison.most_changed())
        self._fill(self.least, comparison, comparison.least_changed())
        self.most.setCurrentRow(0)
        self.colour_map.setEnabled(True)
        self.measure.setEnabled(comparison.row_cosine is not None)
        if comparison.row_cosine is None:
            from ...core.compare.map_change import MEASURES, OVERLAP

            self.measure.setCurrentIndex(MEASURES.index(OVERLAP))
        self._publish_map_change()

    def show_token_id(self, token_id: int) -> bool:
        """Show the token of A with this id, if it was compared (the main window's selection)."""
        looked_up, self._looked_up = self._looked_up, None
        if self.comparison is None or (looked_up is not None and looked_up != token_id):
            return False
        position = self.comparison.position_of(token_id)
        if position is None:
            return False
        self._show_token(self.comparison, position)
        return True

    def set_scale(self, scale: float) -> None:
        """Presentation mode: the plots' numbers and axis titles ``scale`` times their size, as the other plots'."""
        for plot in (self.overlap_plot, self.cosine_plot):
            size_plot_text(plot, self.font(), scale)

    def clear(self) -> None:
        """Back to how the pane first showed: nothing of the comparison (or of one under way) is left."""
        self.comparison = None
        self._finished()  # a comparison under way was of the model that went: its answer never comes
        self.message.hide()
        self.colour_map.setChecked(False)
        self.colour_map.setEnabled(False)
        self.measure.setEnabled(False)
        for plot in (self.overlap_plot, self.cosine_plot):
            plot.clear()
            plot.setTitle(None)  # "neighbours kept of k" named the old comparison's k
            plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)  # not the old comparison's axes
            plot.enableAutoRange()  # the next comparison's bars set them again
        self.most.clear()
        self.least.clear()
        self.neighbours.setRowCount(0)
        self.stats.clear()
        self.header.clear()
        self.header.hide()
        self.notes.setText(INVITATION)
        self.notes.show()
        self.token_title.setText("Select a token to see its neighbours in both tables.")

    def map_change(self) -> MapChange | None:
        """The map's colouring as chosen here: None unless a comparison is shown and the box is ticked."""
        if self.comparison is None or not self.colour_map.isChecked():
            return None
        from ...core.compare.map_change import MEASURES, map_change_of

        return map_change_of(self.comparison, MEASURES[self.measure.currentIndex()])

    # ----- inside ------------------------------------------------------------------------
    def _publish_map_change(self) -> None:
        self.map_change_chosen.emit(self.map_change())

    def _finished(self) -> None:
        self.progress.hide()
        self.stop_button.setEnabled(False)

    def _stop(self) -> None:
        self.stop_requested.emit()
        self.show_failure("Stopped; table A is still open.")

    def _choose_file(self) -> None:
        # The kinds of file the readers say they open, as File > Open model file offers them.
        path, _ = QFileDialog.getOpenFileName(self.window(), "Table B: a model file", "", file_dialog_filter())
        if path:
            self.source.setText(path)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.window(), "Table B: a model folder")
        if folder:
            self.source.setText(folder)

    def _draw_overlaps(self, comparison: Comparison) -> None:
        counts = np.bincount(comparison.overlap, minlength=comparison.k + 1)
        self.overlap_plot.clear()
        bars = pg.BarGraphItem(x=np.arange(counts.size), height=counts, width=0.8, brush=theme.FAMILY_COLOURS[0])
        self.overlap_plot.addItem(bars)
        self.overlap_plot.setTitle(f"neighbours kept of {comparison.k}, per token")
        self.overlap_plot.setXRange(-0.6, comparison.k + 0.6, padding=0)

    def _draw_cosines(self, comparison: Comparison) -> None:
        self.cosine_plot.clear()
        if comparison.row_cosine is None:
            self.cosine_plot.setTitle("row cosines: the widths differ")
            return
        counts, edges = comparison.cosine_histogram()
        width = float(edges[1] - edges[0])
        middles = (edges[:-1] + edges[1:]) / 2
        bars = pg.BarGraphItem(x=middles, height=counts, width=width * 0.9, brush=theme.FAMILY_COLOURS[0])
        self.cosine_plot.addItem(bars)
        self.cosine_plot.setTitle("row cosine of A and B, per token")

    def _fill(self, listing: QListWidget, comparison: Comparison, positions: list[int]) -> None:
        listing.clear()
        for position in positions:
            change = comparison.token(position)
            cosine = "" if change.row_cosine is None else f"  {change.row_cosine:.4f}"
            # The left-to-right mark keeps the figures after a right-to-left token (Arabic, Hebrew) in order.
            item = QListWidgetItem(f"{fonts.for_window(change.token)}\u200e   {change.overlap}/{comparison.k}{cosine}")
            item.setData(ENTRY_ROLE, (comparison, position))
            listing.addItem(item)

    def _on_current(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        if item is not None and item.data(ENTRY_ROLE) is not None:
            self._show_token(*item.data(ENTRY_ROLE))

    def _on_activated(self, item: QListWidgetItem) -> None:
        comparison, position = item.data(ENTRY_ROLE)
        self._show_token(comparison, position)
        self._looked_up = int(comparison.ids_a[position])
        self.token_clicked.emit(comparison.text_of(position))

    def _show_token(self, comparison: Comparison, position: int) -> None:
        change = comparison.token(position)
        cosine = "none (the widths differ)" if change.row_cosine is None else f"{change.row_cosine:.4f}"
        error = "" if change.relative_error is None else f", row error {change.relative_error:.4f}"
        self.token_title.setText(
            f"<b>{escape(fonts.for_window(change.token))}</b> (id {change.id}): row cosine {cosine}{error}; "
            f"<b>{change.overlap}</b> of its {comparison.k} neighbours kept; A's nearest is "
            f"number {change.rank_in_b:,} in B"
        )
        self.neighbours.setRowCount(comparison.k)
        bold = QFont(self.neighbours.font())
        bold.setBold(True)
        lists = zip(change.near_a, change.kept_a, change.near_b, change.kept_b, strict=True)
        for row, ((name_a, cos_a), kept_a, (name_b, cos_b), kept_b) in enumerate(lists):
            for column, (text, shared) in enumerate(
                ((name_a, kept_a), (f"{cos_a:.3f}", False), (name_b, kept_b), (f"{cos_b:.3f}", False))
            ):
                cell = QTableWidgetItem(fonts.for_window(text))
                if shared:
                    cell.setFont(bold)
                    cell.setForeground(SHARED_COLOUR)
                    cell.setToolTip("in both lists")
                self.neighbours.setItem(row, column, cell)


class CompareDialog(QDialog):
    """The Compare pane in a window of its own beside the main window (File > Compare with...).

    The pane inside (two plots, three lists) is built the first time it is needed (the dialog
    shown, an answer or a test reaching for it), not while the main window is built.
    """

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Compare two tables"
    PLACE = Place.NOWHERE  # a window of its own, opened from File > Compare with...
    MENUS = ("&File",)
    ctx: PaneContext
    _pane: ComparePane | None

    def bind(self, ctx: PaneContext) -> None:
        """File > Compare with...; the open model is table A, the one named in the dialog table B."""
        self.ctx = ctx
        self.setParent(ctx.shell.window_widget(), self.windowFlags())  # beside the window, above it
        state, client = ctx.state, ctx.client
        ctx.shell.menu("&File").addAction("&Compare with...").triggered.connect(self.show_beside)
        channel = client.channel(COMPARE, self)
        channel.progress.connect(lambda share, message: self.pane.show_progress(share, message))
        channel.ready.connect(lambda comparison: self.pane.show_comparison(comparison))
        channel.failed.connect(lambda failure: self.pane.show_failure(failure.message))
        state.watch("selection", self._on_selection_changed)
        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("presentation", self._on_presentation_changed)
        if self._pane is not None:  # reached for before the dialog was bound
            self._connect(self._pane)

    @property
    def pane(self) -> ComparePane:
        if self._pane is None:
            pane = self._pane = ComparePane(self._k)
            self.layout().addWidget(pane)  # type: ignore[union-attr]
            if self.isVisible():
                pane.show()  # a child added to a shown window waits for a later turn otherwise
            if hasattr(self, "ctx"):
                self._connect(pane)
        return self._pane

    def _connect(self, pane: ComparePane) -> None:
        state, client = self.ctx.state, self.ctx.client
        pane.set_scale(theme.presentation_scale(state.presentation))
        pane.compare_requested.connect(self._ask)
        pane.stop_requested.connect(lambda: client.cancel(COMPARE, self))
        pane.token_clicked.connect(lambda text: state.update(text=text))
        pane.map_change_chosen.connect(lambda change: state.update(map_change=change))

    def _ask(self, spec: str, k: int, output_head: bool) -> None:
        if not self.ctx.state.loaded:
            self.pane.show_failure("Open a model first: it is table A of the comparison.")
            return
        self.pane.show_started("its output head" if output_head else spec)
        self.ctx.client.ask(COMPARE, CompareRequest(spec, k, output_head), self)

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is not None and self._pane is not None:  # a pane never built compared nothing
            self._pane.show_token_id(selection.token_id)

    def _on_model_serial_changed(self, _serial: int) -> None:
        if self._pane is not None:
            self._pane.clear()  # unticks the box: the map shows families

    def _on_presentation_changed(self, on: bool) -> None:
        if self._pane is not None:  # a pane built later takes the scale as it is bound
            self._pane.set_scale(theme.presentation_scale(on))

    def __init__(self, k: int = COMPARE_K, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("EmbedExplorer — compare two tables")
        self._k = k
        self._pane = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.resize(1200, 640)

    def show_beside(self) -> None:
        self.pane  # noqa: B018 - built before the dialog shows, so that it shows with it
        self.show()
        self.raise_()
        self.activateWindow()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.pane.source.setFocus()


def _plot(left: str, bottom: str) -> pg.PlotWidget:
    plot = pg.PlotWidget(enableMenu=False)  # no context menu: not even built
    plot.setBackground(theme.plot_background())
    plot.setLabel("left", left)
    plot.setLabel("bottom", bottom)
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.setMinimumHeight(140)
    return plot


def _token_list(name: str) -> QListWidget:
    listing = QListWidget()
    listing.setAccessibleName(name)
    listing.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    return listing


def _bold_title(title: str, rest: str = "") -> QLabel:
    label = QLabel(f"<b>{title}</b>{rest}")
    label.setTextFormat(Qt.TextFormat.RichText)  # our own words only
    return label
