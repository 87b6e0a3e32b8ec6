"""The selected token through every layer: lines across the layers, the model's own guess and the nearest
table rows per layer, two tokens compared."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.layers import output_head as oh
from ...jobs.layer_jobs import LAYERS, LAYERS_WARM, LayersReply, LayersRequest, ModelMissing, WarmRequest
from ...state import Selection, ShownLayerInput
from ...worker import Failure
from ..style import fonts, theme
from ..widgets.plot_legend import TitleRowLegend
from ..widgets.scrolling import scroll_within
from ..widgets.steady_label import SteadyLabel
from ..widgets.table_rows import KeepRows
from ..window.plugging import PaneContext, Place
from .layers_text import (
    BELOW_LOWEST,
    COLUMN_TIPS,
    COLUMNS,
    COSINE_BOTTOM,
    COSINE_TOP,
    GUESS_COLUMN,
    LAYER_COLUMN,
    LEGEND_TEXT_PT,
    NEAREST_COLUMN,
    ROW_COLUMN,
    TABLE_COSINE,
    TICK_TEXT_PT,
    TWO_COLUMN,
    head_words,
    label_fits,
    place_words,
    rich_text,
    size_words,
    top_with_room,
)

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.layers.trace import LayersAnswer, LayerStep


class LayersPane(QWidget):
    """One token of a text after each layer of the whole model.

    The window tells the pane which token is selected (``set_token``) and, from the
    "two texts" view or the pane's own field, which token to compare it with
    (``set_compare``); the pane asks for an answer with ``layers_requested`` and
    shows it with ``show_reply``. It never loads or computes anything itself.
    """

    layers_requested = Signal(object)  # LayersRequest
    download_requested = Signal(str)  # a Hub id whose whole model should be downloaded
    shown = Signal()

    def __init__(self, k: int = 5, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text: str | None = None
        self._place: int | None = None
        self._token = ""
        self._download_id: str | None = None
        self._ran_once = False

        self.heading = SteadyLabel(1, "Through the layers: select a token of a text")
        self.run_button = QPushButton("&Run through the layers")
        self.run_button.setToolTip("Load the whole model (once) and run the text through it")
        self.run_button.setEnabled(False)
        self.run_button.clicked.connect(self.request_layers)

        self.compare_input = QLineEdit()
        self.compare_input.setPlaceholderText("a second text, e.g.  my bank account")
        self.compare_input.setClearButtonEnabled(True)
        self.compare_input.setAccessibleName("second text")
        self.compare_input.returnPressed.connect(self.request_layers)
        self.compare_place = QSpinBox()
        self.compare_place.setRange(0, 4096)
        self.compare_place.setSpecialValueText("same token")
        self.compare_place.setPrefix("place ")
        self.compare_place.setToolTip("Which token of the second text (same token: the first with the same id)")
        self.compare_place.setAccessibleName("place in the second text")

        self.headline = SteadyLabel(2)
        self.headline.setAccessibleName("cosine of the two tokens")
        self.head_line = SteadyLabel(1)
        self.head_line.setAccessibleName("the model's output head")
        self.note = SteadyLabel(4)
        self.note.setObjectName("hint")
        for label in (self.heading, self.headline, self.head_line, self.note):
            label.setTextFormat(Qt.TextFormat.RichText)
        self._steps: tuple[LayerStep, ...] = ()

        self.missing = QWidget()
        self.missing_label = QLabel()
        self.missing_label.setTextFormat(Qt.TextFormat.RichText)  # rich_text() escapes its values
        self.missing_label.setWordWrap(True)
        self.download_button = QPushButton("&Download the whole model")
        self.download_button.clicked.connect(self._on_download)
        missing_layout = QHBoxLayout(self.missing)
        missing_layout.setContentsMargins(0, 0, 0, 0)
        missing_layout.addWidget(self.missing_label, 1)
        missing_layout.addWidget(self.download_button)
        self.missing.hide()

        pg.setConfigOptions(antialias=True)
        self.cosine_plot = pg.PlotWidget(background=theme.plot_background())
        self.cosine_plot.setAccessibleName("cosines across the layers")
        self.cosine_plot.setYRange(COSINE_BOTTOM, COSINE_TOP, padding=0)
        self.cosine_plot.showGrid(x=True, y=True, alpha=0.2)
        self.cosine_plot.setLabel("left", "cosine")
        self._legend_row = TitleRowLegend(self.cosine_plot, LEGEND_TEXT_PT, columns=2)
        self.cosine_legend = self._legend_row.legend
        self.cosine_legend.setLabelTextColor(theme.plot_foreground())
        self.cosine_plot.setMouseEnabled(x=False, y=False)
        self.length_plot = pg.PlotWidget(background=theme.plot_background())
        self.length_plot.setAccessibleName("lengths across the layers")
        self.length_plot.showGrid(x=True, y=True, alpha=0.2)
        self.length_plot.setLabel("left", "length")
        self.length_plot.setMouseEnabled(x=False, y=False)
        self.length_plot.setXLink(self.cosine_plot)
        foreground = theme.plot_foreground()
        self._table_line = pg.InfiniteLine(
            pos=TABLE_COSINE,
            angle=0,
            pen=pg.mkPen(foreground, width=1, style=Qt.PenStyle.DashLine),
            label="table rows: 1.000",
            # Above the line, where no cosine goes; ``_fit_cosine_axis`` keeps room for it.
            labelOpts={"position": 0.97, "color": foreground, "anchors": [(1, 1), (1, 1)]},
        )
        self._lowest = COSINE_BOTTOM  # the lowest cosine drawn now, or the axis's least bottom
        self._compare_curve = pg.PlotDataItem(symbol="o", symbolBrush=theme.accent())
        colour = theme.family_colour(0)
        self._row_curve = pg.PlotDataItem(symbol="s", symbolBrush=colour)
        grey = theme.family_colour(7)
        self._length_curve = pg.PlotDataItem(symbol="t", symbolBrush=grey)
        # Each curve's colour, line width and symbol size at presentation's scale 1 (see ``set_scale``).
        self._curve_styles = (
            (self._compare_curve, theme.accent(), 3.0, 7.0),
            (self._row_curve, colour, 2.0, 5.0),
            (self._length_curve, grey, 2.0, 6.0),
        )
        self.cosine_plot.addItem(self._table_line)
        self.cosine_plot.getViewBox().sigResized.connect(self._fit_cosine_axis)
        self.cosine_plot.addItem(self._compare_curve)
        self.cosine_plot.addItem(self._row_curve)
        self.length_plot.addItem(self._length_curve)
        # Each point tells its value when the mouse rests on it.
        for curve, what in (
            (self._compare_curve, "the two tokens"),
            (self._row_curve, "vs its own table row"),
            (self._length_curve, "length"),
        ):
            curve.scatter.opts["hoverable"] = True
            curve.scatter.opts["tip"] = lambda x, y, data, what=what: self.point_tip(what, x, y)

        self.nearest = QTableWidget(0, len(COLUMNS))
        self.nearest.setHorizontalHeaderLabels(list(COLUMNS))
        for column, tip in enumerate(COLUMN_TIPS):
            header_item = self.nearest.horizontalHeaderItem(column)
            if header_item is not None:
                header_item.setToolTip(tip)
        self.nearest.setWordWrap(False)
        self.nearest.verticalHeader().setVisible(False)
        self.nearest.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.nearest.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.nearest.setAlternatingRowColors(True)
        self.nearest.setAccessibleName("the model's guess and the nearest table rows per layer")
        header = self.nearest.horizontalHeader()
        for column in (LAYER_COLUMN, ROW_COLUMN, TWO_COLUMN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(GUESS_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(NEAREST_COLUMN, QHeaderView.ResizeMode.Stretch)

        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.run_button)
        compare = QHBoxLayout()
        compare_label = QLabel("Compare &with:")
        compare_label.setBuddy(self.compare_input)
        compare.addWidget(compare_label)
        compare.addWidget(self.compare_input, 1)
        compare.addWidget(self.compare_place)
        plots = QSplitter(Qt.Orientation.Vertical)
        plots.addWidget(self.cosine_plot)
        plots.addWidget(self.length_plot)
        plots.addWidget(self.nearest)
        plots.setSizes([260, 130, 220])
        # Below these heights a plot shows nothing readable; on a screen too short for them the pane scrolls.
        for part, least in ((self.cosine_plot, 130), (self.length_plot, 70)):
            part.setMinimumHeight(least)
        KeepRows(self.nearest)  # seven layers in sight at once, at any type size
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(compare)
        layout.addWidget(self.missing)
        layout.addWidget(self.headline)
        layout.addWidget(self.head_line)
        layout.addWidget(plots, 1)
        layout.addWidget(self.note)
        # On a short screen (a 1024x640 laptop in presentation mode) the pane scrolls rather than
        # squeezing its plots flat or making the window taller than the screen.
        self.scroll_area = scroll_within(self, content)

        self.scale = 1.0
        self.set_scale(1.0)

    def set_scale(self, scale: float) -> None:
        """Draw the plots' tick numbers, axis titles, legend and curves ``scale`` times their size (presentation).

        The fonts are the pane's own, not the application's: turning presentation off restores them exactly.
        """
        self.scale = float(scale)
        tick_font = QFont(self.font())
        tick_font.setPointSizeF(TICK_TEXT_PT * scale)
        for plot in (self.cosine_plot, self.length_plot):
            for name in ("bottom", "left"):
                axis = plot.getAxis(name)
                axis.setStyle(tickFont=tick_font)
                axis.setLabel(axis.labelText, **{"font-size": f"{TICK_TEXT_PT * scale:g}pt"})
        self._table_line.label.setFont(tick_font)
        self._legend_row.set_text_size(LEGEND_TEXT_PT * scale)
        for curve, colour, width, symbol in self._curve_styles:
            curve.setPen(pg.mkPen(colour, width=width * scale))
            curve.setSymbolSize(symbol * scale)
        self._fit_cosine_axis()

    def _fit_cosine_axis(self) -> None:
        """The cosine axis from just below the lowest value to a top with room for the table line's label."""
        bottom = min(COSINE_BOTTOM, self._lowest - BELOW_LOWEST)
        view = self.cosine_plot.getViewBox()
        label = self._table_line.label.boundingRect().height()
        self.cosine_plot.setYRange(bottom, top_with_room(bottom, view.height(), label), padding=0)
        # Too short a plot shows the line alone: the headline gives the table rows' 1.000 as well.
        self._table_line.label.setVisible(label_fits(view.height(), label))

    # ----- what the window asks of the pane ------------------------------------------------
    def set_token(self, text: str, place: int, token: str = "") -> None:
        """The selected token: ``place`` counts from 1 in ``text``. Runs at once once the model is loaded.

        The last token's numbers go at once: they never stand under the new token's heading.
        """
        if (text, place) != (self._text, self._place):
            self._clear_numbers()
        self._text, self._place, self._token = text, place, token
        shown = rich_text(token) if token else f"token {place}"
        self.heading.setText(f"Through the layers: <b>{shown}</b> at place {place} of “{rich_text(text)}”")
        self.run_button.setEnabled(True)
        if self._ran_once:
            self.request_layers()

    def set_compare(self, text: str | None, place: int | None = None) -> None:
        """The token to compare with: a second text and its place (None: the same token, found by its id)."""
        if (text or "", place or 0) != (self.compare_input.text(), self.compare_place.value()):
            self._clear_numbers()
        self.compare_input.setText(text or "")
        self.compare_place.setValue(place or 0)
        if self._ran_once and self._text is not None:
            self.request_layers()

    def request(self) -> LayersRequest | None:
        """The request for what the pane shows now, or None when no token is selected."""
        if self._text is None or self._place is None:
            return None
        second = self.compare_input.text()
        place = self.compare_place.value() or None
        return LayersRequest(self._text, self._place, second if second.strip() else None, place)

    def request_layers(self) -> None:
        request = self.request()
        if request is not None:
            self.layers_requested.emit(request)

    def show_reply(self, reply: LayersReply) -> None:
        if (reply.request.text, reply.request.place) != (self._text, self._place) and self._text is not None:
            return  # a late answer about a token no longer selected
        if reply.missing is not None:
            self.show_missing(reply.missing)
        elif reply.answer is not None:
            self.show_answer(reply.answer)

    def show_answer(self, answer: LayersAnswer) -> None:
        self._ran_once = True
        self.missing.hide()
        steps = answer.steps
        self._steps = steps
        self._show_axes(True)
        xs = [s.layer for s in steps]
        ticks = [(x, "input" if x == 0 else str(x)) for x in xs]
        for plot in (self.cosine_plot, self.length_plot):
            plot.getAxis("bottom").setTicks([ticks])
        self.length_plot.setLabel("bottom", "after layer")
        token = answer.token.token.token
        self.cosine_legend.clear()
        self._row_curve.setData(xs, [s.cosine_to_row for s in steps])
        self.cosine_legend.addItem(self._row_curve, f"{token} vs its own table row")
        self._length_curve.setData(xs, [s.length for s in steps])
        other = answer.compare
        if other is None:
            self._compare_curve.setData([], [])
            self.headline.setText(
                f"<b>{rich_text(token)}</b> after {answer.layers} layers: cosine to its own table row "
                f"<b>{steps[-1].cosine_to_row:.3f}</b>, length {steps[-1].length:.2f}. "
                "Give a second text to compare two tokens."
            )
        else:
            values = [s.cosine_to_compare or 0.0 for s in steps]
            self._compare_curve.setData(xs, values)
            self.cosine_legend.addItem(self._compare_curve, "the two tokens")
            same_row = other.token.id == answer.token.token.id
            start = f"table rows: <b>{TABLE_COSINE:.3f}</b>" if same_row else "table rows differ"
            self.headline.setText(
                f"<b>{rich_text(token)}</b> in “{rich_text(answer.token.text)}” vs "
                f"<b>{rich_text(other.token.token)}</b> in "
                f"“{rich_text(other.text)}”: {start} → input {values[0]:.3f} → after layer {answer.layers}: "
                f"<b>{values[-1]:.3f}</b>"
            )
        self._legend_row.fit()
        self.nearest.setRowCount(len(steps))
        for row, step in enumerate(steps):
            two = "" if step.cosine_to_compare is None else f"{step.cosine_to_compare:.3f}"
            items = (
                QTableWidgetItem("input" if step.layer == 0 else str(step.layer)),
                QTableWidgetItem(f"{step.cosine_to_row:.3f}"),
                QTableWidgetItem(two),
                QTableWidgetItem(", ".join(f"{fonts.for_window(g.token)} {oh.percent(g.prob)}" for g in step.guess)),
                QTableWidgetItem(", ".join(f"{fonts.for_window(n.token)} {n.cosine:.2f}" for n in step.nearest)),
            )
            for column, item in enumerate(items):
                if column in (GUESS_COLUMN, NEAREST_COLUMN):
                    item.setToolTip(item.text())
                self.nearest.setItem(row, column, item)
        self.nearest.setColumnHidden(TWO_COLUMN, other is None)
        # No head, no guess: the head line says so, and the nearest rows get the room.
        self.nearest.setColumnHidden(GUESS_COLUMN, answer.head_kind == oh.NONE)
        compared = [s.cosine_to_compare for s in steps if s.cosine_to_compare is not None]
        cosines = [s.cosine_to_row for s in steps] + compared
        self._lowest = min(cosines, default=COSINE_BOTTOM)
        self._fit_cosine_axis()
        self.head_line.setText(head_words(answer))
        self.note.setText(
            f"{rich_text(answer.guess_note)} {rich_text(answer.head_note)} {rich_text(place_words(answer))} "
            f"Input: {rich_text(answer.input.note)}"
        )

    def point_tip(self, what: str, x: float, y: float) -> str:
        """A point's tooltip: which layer, which line, its value."""
        layer = int(round(x))
        where = "input" if layer == 0 else f"after layer {layer}"
        if what == "length":
            return f"{where}\nlength {y:.3f}"
        token = self._token or "the token"
        line = "the two tokens" if what == "the two tokens" else f"{token} {what}"
        return f"{where}\n{line}: cosine {y:.3f}"

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._legend_row.fit()

    def show_missing(self, missing: ModelMissing) -> None:
        """Only the table is on disk: say how big the whole model is, and offer to download it."""
        self._download_id = missing.download_id
        size = f" The whole model is {size_words(missing.model_bytes)}." if missing.model_bytes else ""
        self.missing_label.setText(rich_text(missing.message) + size)
        self.download_button.setVisible(missing.download_id is not None)
        self.missing.show()

    def show_message(self, message: str) -> None:
        self.headline.setText(rich_text(message))

    def clear(self) -> None:
        self._ran_once = False
        self._text = self._place = None
        self.run_button.setEnabled(False)
        self.missing.hide()
        self._clear_numbers()
        self.heading.setText("Through the layers: select a token of a text")

    def _clear_numbers(self) -> None:
        """Forget the shown answer: plots, table, headline and notes (the heading stays)."""
        self._steps = ()
        self.headline.clear()
        self.head_line.clear()
        self.note.clear()
        self.nearest.setRowCount(0)
        for curve in (self._row_curve, self._compare_curve, self._length_curve):
            curve.setData([], [])
        self._lowest = COSINE_BOTTOM
        self._fit_cosine_axis()
        self.cosine_legend.clear()
        for plot in (self.cosine_plot, self.length_plot):
            plot.getAxis("bottom").setTicks(None)
        self._show_axes(False)

    def _show_axes(self, on: bool) -> None:
        """Layer numbers and lengths only with an answer: an empty chart keeps no other model's axes."""
        for axis in (self.cosine_plot.getAxis("bottom"), self.length_plot.getAxis("bottom"),
                     self.length_plot.getAxis("left")):
            axis.setStyle(showValues=on)
        if on:
            self.cosine_plot.enableAutoRange(axis="x")
            self.length_plot.enableAutoRange(axis="y")
        else:
            self.length_plot.setLabel("bottom", "")
            self.cosine_plot.setXRange(0, 1, padding=0)
            self.length_plot.setYRange(0, 1, padding=0)
    def _on_download(self) -> None:
        if self._download_id:
            self.download_requested.emit(self._download_id)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.shown.emit()

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Through the &layers"
    PLACE = Place.RIGHT_TAB
    MENUS = ()
    ctx: PaneContext

    def bind(self, ctx: PaneContext) -> None:
        """The selected token through every layer; the model's process starts once the pane was first shown."""
        self.ctx = ctx
        state, client, shell = ctx.state, ctx.client, ctx.shell
        self._seen = False  # shown once: from then on the model's process starts with each model
        self.shown.connect(self._on_first_shown)
        self.layers_requested.connect(lambda request: client.ask(LAYERS, request, self) if state.loaded else None)
        # The layers need every weight: the whole model into the HF cache, not the table alone.
        self.download_requested.connect(lambda hub_id: shell.open_model(hub_id, allow_download=True, whole_model=True))
        state.watch("selection", self._on_selection_changed)
        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("presentation", self._on_presentation_changed)
        self.set_scale(theme.presentation_scale(state.presentation))
        client.channel(LAYERS, self).progress.connect(shell.show_progress)
        client.channel(LAYERS, self).ready.connect(self._on_layers_ready)
        client.channel(LAYERS, self).failed.connect(self._on_layers_failed)

    def _warm(self) -> None:
        # So that torch is imported before the first question (its memory: docs/benchmarks.md).
        if self._seen and self.ctx.state.loaded:
            self.ctx.client.ask(LAYERS_WARM, WarmRequest(), self)

    def _on_first_shown(self) -> None:
        self._seen = True
        self._warm()

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is not None:
            self.set_token(self.ctx.state.text, selection.place + 1, selection.token)

    def _on_model_serial_changed(self, _serial: int) -> None:
        self.clear()
        self._warm()

    def _on_presentation_changed(self, on: bool) -> None:
        self.set_scale(theme.presentation_scale(on))

    def _on_layers_ready(self, reply: LayersReply) -> None:
        shell = self.ctx.shell
        shell.hide_progress()
        self.show_reply(reply)
        if reply.answer is not None:  # the row pane shows what really enters layer 1
            shown = reply.answer.token
            self.ctx.state.update(layer_input=ShownLayerInput(shown.token.id, shown.place - 1, reply.answer.input))
        if reply.load_seconds is not None and reply.answer is not None:
            shell.show_status(f"Loaded the whole model in {reply.load_seconds:.1f} s")

    def _on_layers_failed(self, failure: Failure) -> None:
        self.ctx.shell.hide_progress()
        self.show_message(failure.message)
