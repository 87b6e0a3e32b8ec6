"""The numbers behind one token: its row, its position row, and what enters layer 1."""

from __future__ import annotations

import math
from dataclasses import replace
from html import escape
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFontDatabase, QFontMetricsF, QGuiApplication, QKeySequence, QResizeEvent
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ...core.tables.position_rows import row_name
from ...jobs.table_jobs import ROW, RowAnswer, RowRequest
from ...state import Selection, ShownLayerInput
from ..style import theme
from ..style.plot_type import TICK_TEXT_PT, size_plot_text
from ..widgets.pause import after_pause
from ..widgets.plot_legend import TitleRowLegend
from ..widgets.steady_label import SteadyLabel
from ..window.plugging import PaneContext, Place

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.layers.trace import LayerInput

SHOWN_NUMBERS = 6  # the chapter prints the first six numbers of a row
SUM_NAMES = ("sum: what enters layer 1", "after LayerNorm (right axis)")
# The legend's lines with a row shown, the third named after what enters layer 1.
LEGEND_NAMES = tuple(("token row", "position row", name) for name in SUM_NAMES)
LEGEND_TEXT_PT, LINE_WIDTHS = 8.0, {"token": 1.5, "position": 1.0, "sum": 1.0}


def format_row(row: np.ndarray, shown: int = SHOWN_NUMBERS) -> str:
    """The chapter's way to print a row: ``[-0.219, +0.042, ... 762 more]``."""
    head = ", ".join(f"{value:+.3f}" for value in row[:shown])
    rest = len(row) - shown
    if rest <= 0:
        return f"[{head}]"
    return f"[{head}, ... {rest:,} more]" if head else f"[... {rest:,} more]"


def _short_name(name: str) -> str:
    """A row's name for a narrow pane: "position row 3" -> "pos 3", "..., enters layer 1" -> "layer 1"."""
    if name.endswith("layer 1"):
        return "layer 1"
    return name.replace("position row", "pos").replace("token row", "token")



# The plot at least this tall where the row sits above the neighbours: shorter, its curves are a strip.
MIN_ROW_PLOT_HEIGHT = 100


class RowView(QWidget):
    """Shows a RowAnswer; the plot draws every value, the text the first few as in the book."""

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._result: RowAnswer | None = None
        self.title = SteadyLabel(1, "Select a token to see its row.", wrap=False)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        # The token row, its position row and their sum, one line each (the tooltip has them whole).
        self.numbers = SteadyLabel(3, wrap=False)
        self.numbers.setTextFormat(Qt.TextFormat.RichText)  # "&nbsp;" is markup, also on a single line
        self._size_numbers()
        self.numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = SteadyLabel(2)
        self.note.setObjectName("hint")
        self.note.setTextFormat(Qt.TextFormat.RichText)  # values escaped

        self.plot_widget = pg.PlotWidget(enableMenu=False)  # no context menu: not even built
        # Small enough that the row, its plot and eight neighbours fit a 768-pixel laptop screen.
        self.plot_widget.setMinimumHeight(40)
        self.plot_widget.setLabel("bottom", "number in the row")
        self.plot_widget.setLabel("left", "value")
        self.plot_widget.showGrid(x=False, y=True, alpha=0.2)
        for axis in ("bottom", "left"):  # the book prints plain values, not "x0.001" units
            self.plot_widget.getAxis(axis).enableAutoSIPrefix(False)
        self._legend_row = TitleRowLegend(self.plot_widget, LEGEND_TEXT_PT, columns=3)
        self.legend = self._legend_row.legend
        self._curves = {
            "token": self.plot_widget.plot(name="token row"),
            "position": self.plot_widget.plot(name="position row"),
            "sum": self.plot_widget.plot(name=SUM_NAMES[0]),
        }
        self._legend_entries: tuple[tuple[str, str], ...] = ()  # the legend's lines now: (curve, name)
        self._curves["token"].setZValue(3)  # the token's own row on top: it is what the pane is about
        # After LayerNorm the numbers are ten times larger: on the left axis they would flatten the token
        # row into a line under them. They get their own scale, on the right axis.
        plot = self.plot_widget.getPlotItem()
        self._normalised_view = pg.ViewBox(enableMenu=False)
        plot.scene().addItem(self._normalised_view)
        plot.getAxis("right").linkToView(self._normalised_view)
        self._normalised_view.setXLink(plot.vb)
        plot.vb.sigResized.connect(self._fit_normalised_view)
        # After the resize, not inside it: a title shown or hidden changes its axis's width, and a
        # change made while the plot lays itself out waited for the next resize (a title cut at the edge).
        self._refit = after_pause(self, self._refit_to_size, 0)
        plot.vb.sigResized.connect(self._refit.start)
        self._sum_on_right = False

        self.show_position = QCheckBox("Position row and sum")
        self.show_position.setChecked(True)
        self.show_position.setToolTip("Also draw the row of the token's place in the text, and the sum of both")
        self.show_position.toggled.connect(lambda _on: self._redraw())
        self.copy_button = QPushButton("Copy row")
        self.copy_button.setToolTip("Copy every number of the token's row to the clipboard")
        self.copy_button.clicked.connect(self.copy_row)
        self.copy_button.setEnabled(False)

        controls = QHBoxLayout()
        controls.addWidget(self.show_position)
        controls.addStretch(1)
        controls.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.numbers)
        layout.addWidget(self.plot_widget, 1)
        layout.addLayout(controls)
        layout.addWidget(self.note)
        self.scale = 1.0  # presentation mode: the plot's text and lines larger
        self.set_scale(1.0)
        self.apply_palette()

    def _size_numbers(self) -> None:
        """Numbers in a fixed-width font as large as the window's type (presentation: larger), so columns line up."""
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(self.font().pointSizeF())
        self.numbers.setFont(font)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "numbers"):
            self._size_numbers()
            if self._result is not None:
                self._fill_numbers()

    def set_scale(self, scale: float) -> None:
        """Draw the plot's tick numbers, axis titles, legend and lines ``scale`` times their size."""
        self.scale = float(scale)
        size_plot_text(self.plot_widget, self.font(), scale, ("bottom", "left", "right"))
        self._legend_row.set_text_size(LEGEND_TEXT_PT * scale)
        self.apply_palette()
        self._fit_axis_titles()
        self._fold_numbers()

    def _refit_to_size(self) -> None:
        self._fold_numbers()
        self._fit_axis_titles()

    def _fold_numbers(self) -> None:
        """Presentation: the plot is what a class reads, so what is for reading up close folds away.

        The lines of numbers and the recipe's note fold into the title's tooltip (the whole rows
        one hover away, Copy row copies them) and the bottom axis drops its title (the title says
        "384 numbers"). So presentation's larger type gives the plot more room than normal mode,
        not less, on every pane height; normal mode shows them all again.
        """
        fold = self.scale > 1
        bottom = self.plot_widget.getAxis("bottom")
        if bottom.label.isVisible() == fold:  # a new size of type shows the title again: folded again
            bottom.showLabel(not fold)
        if fold != self.numbers.isHidden():
            self.numbers.setVisible(not fold)
            self.note.setVisible(not fold)
        self._tip_folded()

    def _tip_folded(self) -> None:
        """The title's tooltip: in presentation what folded away (the rows whole, the note), else the title itself."""
        if not self.numbers.isHidden():
            self.title.setToolTip(self.title.shown_text())
            return
        parts = (self.numbers.toolTip(), self.note.toolTip())
        self.title.setToolTip("\n\n".join(part for part in parts if part))

    def plot_chrome_height(self, width: int | None = None) -> int:
        """The plot widget's pixels around its drawing area at pane width ``width`` (now's if None).

        The legend's rows above (as many as it folds into at that width), the bottom axis below
        (its numbers, and its title unless folded) and the plot's margins. Derived from the type,
        not measured: the pane may be elsewhere (a tab) or not laid out yet (presentation just
        turned on), and the axis grows to its larger numbers only once it has drawn them.
        """
        plot = self.plot_widget.getPlotItem()
        layout = self.layout()
        margins = layout.contentsMargins() if layout is not None else None
        sides = margins.left() + margins.right() if margins is not None else 0
        plot_width = (self.width() if width is None else width) - sides
        # The legend as a row fills it (all three lines, the longer name of the third), not as it is
        # now: an answer must not move the pane to a tab (its height is reserved, like its labels').
        legend = max(self._legend_row.height_for(plot_width, names) for names in LEGEND_NAMES)
        bottom = plot.getAxis("bottom")
        # As pyqtgraph sizes a bottom axis: the numbers' offset, their height (drawn at 0.8 of the
        # font's), and 0.8 of the title's; never less than it is now.
        tick_font = bottom.style["tickFont"] or self.font()
        numbers = bottom.style["tickTextOffset"][1] + QFontMetricsF(tick_font).height() * 0.8
        numbers += max(0, bottom.style["tickLength"])
        if bottom.label.isVisible():
            numbers += bottom.label.boundingRect().height() * 0.8
        below = max(numbers, bottom.minimumHeight())
        top = plot.getAxis("top")
        above = top.minimumHeight() if top.isVisible() else 0.0
        _left, top_margin, _right, bottom_margin = plot.layout.getContentsMargins()
        return math.ceil(legend + above + below + top_margin + bottom_margin)

    def _fit_axis_titles(self) -> None:
        """Each side's title where the plot is tall enough for all of it; else none, never a cut one.

        A short plot (a laptop in presentation mode) cut "after LayerNorm" at both ends; the
        legend names that line's scale too ("(right axis)").
        """
        plot = self.plot_widget.getPlotItem()
        room = plot.vb.height()
        for axis_name in ("left", "right"):
            axis = plot.getAxis(axis_name)
            fits = axis.label.boundingRect().width() <= room  # its length, drawn upright along the axis
            if axis.label.isVisible() != fits:
                axis.showLabel(fits)

    def show_row(self, result: RowAnswer) -> None:
        self._result = result
        row = result.row
        length = float(np.linalg.norm(row))
        # Escaped: a byte token such as <0x8D> would otherwise vanish as an unknown tag.
        self.title.setText(
            f"<b>row {result.token.id:,}</b>&nbsp; {escape(result.token.token)}&nbsp; "
            f"({len(row):,} numbers, length {length:.2f}; {escape(result.place_text())})"
        )
        self._fill_numbers()
        short = result.recipe_short or result.recipe
        self.note.setText(escape(" ".join(part for part in (short, result.note) if part)))
        self.note.setToolTip(" ".join(part for part in (result.recipe, result.note) if part))
        self._tip_folded()
        self._curves["sum"].opts["name"] = self._sum_label(result)
        self.copy_button.setEnabled(True)
        self._redraw()

    @staticmethod
    def _sum_label(result: RowAnswer) -> str:
        return SUM_NAMES[1] if result.normalised else SUM_NAMES[0]

    def row_lines(self) -> list[tuple[str, np.ndarray]]:
        """The rows the text shows, each with its name: token row, position row, what enters layer 1."""
        result = self._result
        if result is None:
            return []
        lines = [("token row", result.row)]
        if result.position_row is not None:
            name = "position row" if result.position_index is None else row_name(result.position_index)
            lines.append((name, result.position_row))
        combined = result.combined
        if combined is not None and (
            result.position_row is not None or result.normalised or not np.array_equal(combined, result.row)
        ):
            lines.append(("LayerNorm, enters layer 1" if result.normalised else "sum, enters layer 1", combined))
        return lines

    def _fill_numbers(self) -> None:
        """One line per row, with as many numbers as fit, so each line shows its end ("... 762 more]")."""
        lines = self.row_lines()
        if not lines:
            self.numbers.clear()
            return
        metrics = self.numbers.fontMetrics()
        room = max(20, (self.numbers.contentsRect().width() - 4) // max(1, metrics.horizontalAdvance("0")))
        widest = max(len(format_row(row, 1)) for _, row in lines)
        if max(len(name) for name, _ in lines) + 2 + widest > room:  # narrow: short names
            lines = [(_short_name(name), row) for name, row in lines]
        width = max(len(name) for name, _ in lines) + 2
        shown = []
        for name, row in lines:
            count = SHOWN_NUMBERS
            while count > 0 and width + len(format_row(row, count)) > room:
                count -= 1
            # Rich text folds runs of spaces: the padding that lines the rows up is made of &nbsp;.
            padding = "&nbsp;" * (width - len(name) - 1)
            shown.append(f"{escape(name)}:{padding}{escape(format_row(row, count))}")
        self.numbers.setText("<br>".join(shown))
        self.numbers.setToolTip("\n".join(f"{name}: {format_row(row)}" for name, row in lines))
        self._tip_folded()  # folded (presentation): the whole rows one hover away

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._legend_row.fit()
        if self._result is not None:
            self._fill_numbers()

    def show_layer_input(self, token_id: int, place: int, given: LayerInput) -> None:
        """What really enters layer 1 for the shown token (``place`` 0-based), from the model's own embedding step.

        The table alone gives token row + position row; a model may add more (BERT: a
        token type row, then LayerNorm; [CLS] first, so the position row is one further).
        Once the whole model has run, the sum shown is exact for every model.
        """
        result = self._result
        if result is None or result.token.id != token_id or result.place != place:
            return  # an answer about a token no longer shown
        parts = dict(given.parts)
        position = next((row for name, row in parts.items() if name.startswith("position")), result.position_row)
        self._result = replace(result, position_row=position, combined=given.enters)
        self._fill_numbers()
        self.note.setText(escape(f"Exact, from the model itself: {given.note}"))
        self.note.setToolTip(f"Exact, from the model itself: {given.note}")
        self._tip_folded()
        self._redraw()

    def clear(self) -> None:
        self._result = None
        self.title.setText("Select a token to see its row.")
        self.numbers.clear()
        self.numbers.setToolTip("")
        self.note.clear()
        self.note.setToolTip("")
        self._tip_folded()
        self.copy_button.setEnabled(False)
        for curve in self._curves.values():
            curve.setData([], [])

    def _redraw(self) -> None:
        result = self._result
        if result is None:
            return
        x = np.arange(len(result.row))
        position, combined = result.position_row, result.combined
        with_position = self.show_position.isChecked() and position is not None and combined is not None
        self._put_sum_on_right(with_position and result.normalised)
        self._curves["token"].setData(x, result.row)
        self._curves["position"].setData(x if with_position else [], position if with_position else [])
        self._curves["sum"].setData(x if with_position else [], combined if with_position else [])
        if self._sum_on_right:
            self._normalised_view.enableAutoRange(axis=pg.ViewBox.YAxis)
        shown = tuple((key, curve.name()) for key, curve in self._curves.items() if key == "token" or with_position)
        if shown != self._legend_entries:  # each entry is a new label to lay out: only when they change
            for curve in self._curves.values():
                self.legend.removeItem(curve)
            for key, name in shown:
                self.legend.addItem(self._curves[key], name)
            self._legend_entries = shown
            self._legend_row.fit()

    def _put_sum_on_right(self, right: bool) -> None:
        """The LayerNorm line on its own right-hand scale, or the sum on the left one with the rows."""
        if right == self._sum_on_right:
            return
        plot, curve = self.plot_widget.getPlotItem(), self._curves["sum"]
        (plot.removeItem if right else self._normalised_view.removeItem)(curve)
        (self._normalised_view.addItem if right else plot.addItem)(curve)
        self._sum_on_right = right
        plot.showAxis("right", right)
        axis = plot.getAxis("right")
        axis.setLabel("after LayerNorm", **{"font-size": f"{TICK_TEXT_PT * self.scale:g}pt"})
        axis.enableAutoSIPrefix(False)
        self._fit_normalised_view()
        self._fit_axis_titles()

    def _fit_normalised_view(self) -> None:
        plot = self.plot_widget.getPlotItem()
        self._normalised_view.setGeometry(plot.vb.sceneBoundingRect())

    @property
    def sum_on_right_axis(self) -> bool:
        """True while what enters layer 1 (after LayerNorm) is drawn against the right-hand axis."""
        return self._sum_on_right

    def copy_row(self) -> None:
        if self._result is None:
            return
        text = ", ".join(f"{value:.6g}" for value in self._result.row)
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(f"Copied the {len(self._result.row):,} numbers of row {self._result.token.id:,}.")

    def apply_palette(self) -> None:
        self.plot_widget.setBackground(theme.plot_background())
        self.legend.setLabelTextColor(theme.plot_foreground())
        for index, (name, width) in enumerate(LINE_WIDTHS.items()):
            self._curves[name].setPen(pg.mkPen(theme.family_colour(index), width=width * self.scale))

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "&Row"  # also its tab's title when a short window moves it beside the map
    PLACE = Place.LEFT_UPPER
    MENUS = ("&View",)
    ctx: PaneContext

    def bind(self, ctx: PaneContext) -> None:
        """The selected token's row; once the whole model ran, what really enters its layer 1."""
        self.ctx = ctx
        state = ctx.state
        state.watch("selection", self._on_selection_changed)
        state.watch("model_serial", self._on_model_serial_changed)
        state.watch("presentation", self._on_presentation_changed)
        state.watch("layer_input", self._on_layer_input_changed)  # the Layers pane's answer, through the state
        self.set_scale(theme.presentation_scale(state.presentation))
        ctx.client.channel(ROW, self).ready.connect(self.show_row)
        ctx.client.channel(ROW, self).failed.connect(lambda failure: ctx.shell.show_message(failure.message))
        self.copied.connect(lambda text: ctx.shell.show_status(text, 4000))
        theme.on_colour_scheme_change(self.apply_palette)
        copy_row = ctx.shell.menu("&View").addAction("Copy the selected &row")
        copy_row.triggered.connect(self.copy_row)
        copy_row.setShortcut(QKeySequence("Ctrl+Shift+C"))

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is None:
            self.ctx.client.cancel(ROW, self)
            self.clear()
        else:
            self.ctx.client.ask(ROW, RowRequest(selection.token_id, selection.place), self)

    def _on_model_serial_changed(self, _serial: int) -> None:
        self.clear()

    def _on_presentation_changed(self, on: bool) -> None:
        self.set_scale(theme.presentation_scale(on))

    def _on_layer_input_changed(self, shown: ShownLayerInput | None) -> None:
        if shown is not None:
            self.show_layer_input(shown.token_id, shown.place, shown.input)

    def focus_chain(self) -> list[QWidget]:
        return [self.show_position, self.copy_button]

    def prefers_tab(self) -> bool:
        """Presentation: the row is a tab beside the map at every size, one large plot at a time.

        Above the neighbours it would get what their larger rows leave (at 1600x1000 a plot about
        half as tall as normal mode's); on its tab it is taller than normal mode's wherever it is.
        """
        return self.scale > 1

    def least_height(self, width: int | None = None) -> int:
        """How tall the pane must be, at ``width`` pixels wide, for its plot to draw ``MIN_ROW_PLOT_HEIGHT`` pixels.

        Counts the drawing area, not the plot widget: the widget also holds the legend and the
        bottom axis (at 1366x768 a 118-pixel widget drew its curves in 41). The layout gives the
        plot its minimum height where one is set, else its hint: that one is replaced here.
        """
        plot = self.plot_widget.minimumHeight() or self.plot_widget.minimumSizeHint().height()
        return self.minimumSizeHint().height() - plot + MIN_ROW_PLOT_HEIGHT + self.plot_chrome_height(width)
