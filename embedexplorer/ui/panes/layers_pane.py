"""The selected token through every layer: lines across the layers, the model's own guess and the nearest
table rows per layer, two tokens compared."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.layers import output_head as oh
from ...jobs.layer_jobs import LAYERS, LAYERS_WARM, LayersReply, LayersRequest, ModelMissing, Warmed, WarmRequest
from ...state import Selection, ShownLayerInput
from ...worker import Failure
from ..style import fonts, theme
from ..widgets.scrolling import scroll_within
from ..widgets.steady_label import SteadyLabel
from ..window.plugging import PaneContext, Place
from .layers_plots import PLOT_PARTS, LayersPlots
from .layers_text import (
    COSINE_BOTTOM,
    GUESS_COLUMN,
    NEAREST_COLUMN,
    TABLE_COSINE,
    TWO_COLUMN,
    head_words,
    place_words,
    rich_text,
    size_words,
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
        self._unavailable: str | None = None  # why this model's layers are not run here (a GGUF file)

        self.heading = SteadyLabel(1, "Through the layers: select a token of a text")
        self.run_button = QPushButton("R&un through the layers")
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

        self._plots: LayersPlots | None = None  # built when first shown or needed (layers_plots.py)
        self._plots_cleared = False  # a clear came before the plots were built: they start cleared

        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.run_button)
        compare = QHBoxLayout()
        compare_label = QLabel("Compare w&ith:")
        compare_label.setBuddy(self.compare_input)
        compare.addWidget(compare_label)
        compare.addWidget(self.compare_input, 1)
        compare.addWidget(self.compare_place)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(compare)
        layout.addWidget(self.missing)
        layout.addWidget(self.headline)
        layout.addWidget(self.head_line)
        self._plots_place = QVBoxLayout()
        self._plots_place.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._plots_place, 1)
        # The room the plots leave when hidden (a model not run here): the sentence above stays under the buttons.
        layout.addStretch(0)
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
        if self._plots is not None:
            self._plots.set_scale(self.scale, self.font())

    @property
    def plots(self) -> LayersPlots:
        """The plots and the table, built the first time they are needed."""
        if self._plots is None:
            self._plots = LayersPlots(self.point_tip)
            self._plots_place.addWidget(self._plots)
            # now, not when the event loop turns (Qt's way for a visible parent); none for a model not run here
            self._plots.setVisible(self._unavailable is None)
            self._plots.set_scale(self.scale, self.font())
            if self._plots_cleared:
                self._plots.clear()
        return self._plots

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - whichever part is asked for
        # The plots' parts read off the pane (``pane.cosine_plot``) build them when first asked for.
        if name in PLOT_PARTS:
            return getattr(self.plots, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
        self.run_button.setEnabled(self._unavailable is None)
        if self._ran_once:
            self.request_layers()

    def set_outside_token(self, token: str) -> None:
        """A token chosen from a list, not from the text: nothing to run until a token of a text is selected."""
        self._clear_numbers()
        self._text = self._place = None
        self._token = token
        self.heading.setText(
            f"Through the layers: <b>{rich_text(token)}</b> is not a token of the text; select a token of a text"
        )
        self.run_button.setEnabled(False)

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
        plots = self.plots
        plots.show_axes(True)
        xs = [s.layer for s in steps]
        ticks = [(x, "input" if x == 0 else str(x)) for x in xs]
        for plot in (plots.cosine_plot, plots.length_plot):
            plot.getAxis("bottom").setTicks([ticks])
        plots.length_plot.setLabel("bottom", "after layer")
        token = answer.token.token.token
        plots.cosine_legend.clear()
        plots._row_curve.setData(xs, [s.cosine_to_row for s in steps])
        # pyqtgraph draws a legend entry as HTML: a token such as GPT-2's " <!--" stays text.
        plots.cosine_legend.addItem(plots._row_curve, f"{rich_text(token)} vs its own table row")
        plots._length_curve.setData(xs, [s.length for s in steps])
        other = answer.compare
        if other is None:
            plots._compare_curve.setData([], [])
            self.headline.setText(
                f"<b>{rich_text(token)}</b> after {answer.layers} layers: cosine to its own table row "
                f"<b>{steps[-1].cosine_to_row:.3f}</b>, length {steps[-1].length:.2f}. "
                "Give a second text to compare two tokens."
            )
        else:
            values = [s.cosine_to_compare or 0.0 for s in steps]
            plots._compare_curve.setData(xs, values)
            plots.cosine_legend.addItem(plots._compare_curve, "the two tokens")
            same_row = other.token.id == answer.token.token.id
            start = f"table rows: <b>{TABLE_COSINE:.3f}</b>" if same_row else "table rows differ"
            self.headline.setText(
                f"<b>{rich_text(token)}</b> in “{rich_text(answer.token.text)}” vs "
                f"<b>{rich_text(other.token.token)}</b> in "
                f"“{rich_text(other.text)}”: {start} → input {values[0]:.3f} → after layer {answer.layers}: "
                f"<b>{values[-1]:.3f}</b>"
            )
        plots.fit_legend()
        table = plots.nearest
        table.setRowCount(len(steps))
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
                table.setItem(row, column, item)
        table.setColumnHidden(TWO_COLUMN, other is None)
        # No head, no guess: the head line says so, and the nearest rows get the room.
        table.setColumnHidden(GUESS_COLUMN, not oh.guesses(answer.head_kind))
        compared = [s.cosine_to_compare for s in steps if s.cosine_to_compare is not None]
        cosines = [s.cosine_to_row for s in steps] + compared
        plots.lowest = min(cosines, default=COSINE_BOTTOM)
        plots.fit_cosine_axis()
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
        if self._plots is not None:
            self._plots.fit_legend()

    def show_missing(self, missing: ModelMissing) -> None:
        """Only the table is on disk: say how big the whole model is, and offer to download it."""
        self._download_id = missing.download_id
        size = f" The whole model is {size_words(missing.model_bytes)}." if missing.model_bytes else ""
        self.missing_label.setText(rich_text(missing.message) + size)
        self.download_button.setVisible(missing.download_id is not None)
        self.missing.show()

    def set_unavailable(self, message: str | None) -> None:
        """Say at once why this model's layers are not run here (None: they may be), and offer nothing to run."""
        self._unavailable = message
        for field in (self.compare_input, self.compare_place):
            field.setEnabled(message is None)
        self.run_button.setEnabled(message is None and self._text is not None)
        if self._plots is not None:
            self._plots.setVisible(message is None)  # empty axes under the sentence would promise numbers
        if message is not None:
            self.show_missing(ModelMissing(message, None, None))

    def show_message(self, message: str) -> None:
        self.headline.setText(rich_text(message))

    def clear(self) -> None:
        self._ran_once = False
        self._text = self._place = None
        self.set_unavailable(None)
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
        if self._plots is None:
            self._plots_cleared = True
        else:
            self._plots.clear()

    def _on_download(self) -> None:
        if self._download_id:
            self.download_requested.emit(self._download_id)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        self.plots  # noqa: B018 - built before the pane's first frame: never shown empty
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
        # The warm-up's reply says at once when this model's layers are not run here (a GGUF file).
        client.channel(LAYERS_WARM, self).ready.connect(self._on_warmed)

    def _warm(self) -> None:
        # So that torch is imported before the first question (its memory: docs/benchmarks.md).
        if self._seen and self.ctx.state.loaded:
            self.ctx.client.ask(LAYERS_WARM, WarmRequest(), self)

    def _on_warmed(self, warmed: Warmed) -> None:
        if warmed.unavailable is not None:
            self.set_unavailable(warmed.unavailable)

    def _on_first_shown(self) -> None:
        self._seen = True
        self._warm()

    def _on_selection_changed(self, selection: Selection | None) -> None:
        if selection is not None and not selection.in_text:
            self.set_outside_token(selection.token)
        elif selection is not None:
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
