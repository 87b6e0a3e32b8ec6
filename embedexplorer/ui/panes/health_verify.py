"""The Health tab's check with the model: ask the whole model to repeat the top candidates.

A row of its own under the tab's buttons: how many of the most suspicious tokens to check,
the button, a progress bar and Stop. The work is ``HEALTH_VERIFY`` on the long lane, in the
model's process the Layers pane uses (the model loads once for both); the probabilities go
into the list as a column beside the indicators. A model that cannot be asked (no whole
weights, no next-token head) gets one sentence here, and the rest of the tab is untouched.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from ...core.health.check_counts import DEFAULT_CANDIDATES, MAX_CANDIDATES
from ...core.health.repeat_check import PROMPT_SHOWN, RepeatCheck
from ...core.layers.output_head import percent
from ...jobs.health_jobs import HEALTH_CHECK_POSSIBLE, HEALTH_VERIFY, CheckPossibleRequest, VerifyRequest
from ..widgets.flow_layout import flow_row
from ..widgets.progress_bar import job_progress_bar, show_share
from ..window.plugging import PaneContext

READY_NOTE = (
    "Check with the model: the whole model is asked to repeat each of the top tokens; "
    "a trained token comes back with a high probability, an untrained one with next to none."
)


def _not_available(reason: str) -> str:
    return f"Not available: {reason}"


class VerifyBar(QWidget):
    """Top N, "Check with the model", progress and Stop; ``checked`` carries the answer to the list."""

    checked = Signal(object)  # a RepeatCheck with probabilities, or None to clear the column

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.count = QSpinBox()
        self.count.setRange(1, MAX_CANDIDATES)
        self.count.setValue(DEFAULT_CANDIDATES)
        self.count.setPrefix("top ")
        self.count.setToolTip(f"How many of the most suspicious tokens to ask the model (at most {MAX_CANDIDATES})")
        self.check_button = QPushButton("Check with the m&odel")
        self.check_button.setToolTip(
            "Ask the whole model to repeat each of the top tokens and show the probability it gives the token "
            "(the paper's check; one forward pass per token, long lane)"
        )
        self.check_button.setEnabled(False)
        self._unavailable: str | None = None  # why this model cannot be asked, known before the button is pressed
        self._ask_possible: Callable[[], None] = lambda: None
        self.stop_button = QPushButton("Sto&p the model check")
        self.stop_button.setAccessibleName("stop the model check")
        self.stop_button.setToolTip("Stop asking the model; the probabilities already shown stay")
        self.stop_button.setEnabled(False)
        for button in (self.check_button, self.stop_button):
            button.setAutoDefault(False)
        self.progress = job_progress_bar(keep_room=False)  # on a line of its own
        self.note = QLabel(READY_NOTE)
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # sentences carry folder names
        self.note.setWordWrap(True)
        # The note under the row, as wide as the pane: beside it, squeezed by the buttons, it was a
        # column of ten short lines on a laptop's screen.  The row wraps, and the progress bar has a
        # line of its own: in one row they held the pane wider than a laptop's (or presentation mode's).
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(flow_row(self.count, self.check_button, self.stop_button))
        layout.addWidget(self.progress)
        layout.addWidget(self.note)

    # ----- what the pane calls ------------------------------------------------------------
    def set_ready(self, ready: bool) -> None:
        """The check needs the vocabulary's ranking: enabled once the report is shown, where the model may be asked
        (whether it may is asked at once: a GGUF file or a masked model says why not before anything is pressed)."""
        self.check_button.setEnabled(ready and not self.stop_button.isEnabled() and self._unavailable is None)
        if ready:
            self._ask_possible()

    def set_possible(self, unavailable: str | None) -> None:
        """Whether the open model may be asked; when not, the button is off and the note says why."""
        self._unavailable = unavailable
        if unavailable is not None:
            self.check_button.setEnabled(False)
            self.note.setText(_not_available(unavailable))

    def show_started(self) -> None:
        self.progress.setRange(0, 0)
        self.progress.setFormat("Starting the model...")
        self.progress.show()
        self.stop_button.setEnabled(True)
        self.check_button.setEnabled(False)
        self.note.setText("Loading the whole model (once; the Layers tab uses it too) and asking it.")

    def show_progress(self, share: float, message: str) -> None:
        show_share(self.progress, share, message)

    def show_check(self, check: RepeatCheck) -> None:
        self._finished()
        if check.unavailable is not None:
            self.note.setText(_not_available(check.unavailable))
            return
        chance = f"; 1 / vocabulary = {percent(1 / check.vocabulary)}" if check.vocabulary else ""
        self.note.setText(
            f"repeat P: the probability the model gives each of the top {len(check.ids)} tokens after "
            f"{PROMPT_SHOWN}{chance}."
        )
        self.checked.emit(check)

    def show_failure(self, message: str) -> None:
        self._finished()
        self.note.setText(message)

    def clear(self) -> None:
        self._finished()
        self.check_button.setEnabled(False)
        self.note.setText(READY_NOTE if self._unavailable is None else _not_available(self._unavailable))
        self.checked.emit(None)

    def _finished(self) -> None:
        self.progress.hide()
        self.stop_button.setEnabled(False)
        self.check_button.setEnabled(self._unavailable is None)

    # ----- wiring ----------------------------------------------------------------------------
    def bind(self, ctx: PaneContext, asker: QWidget, top: Callable[[int], list[int]]) -> None:
        """Ask ``HEALTH_VERIFY`` as ``asker`` (the pane) for the ids ``top(count)`` gives."""
        self.count.setValue(ctx.settings.health_verify_count)
        self.count.valueChanged.connect(lambda value: setattr(ctx.settings, "health_verify_count", value))
        channel = ctx.client.channel(HEALTH_VERIFY, asker)
        channel.progress.connect(self.show_progress)
        channel.ready.connect(self.show_check)
        channel.failed.connect(lambda failure: self.show_failure(failure.message))
        ctx.client.channel(HEALTH_CHECK_POSSIBLE, asker).ready.connect(
            lambda possible: self.set_possible(possible.unavailable)
        )

        def ask_possible() -> None:
            ctx.client.ask(HEALTH_CHECK_POSSIBLE, CheckPossibleRequest(), asker)

        self._ask_possible = ask_possible

        def ask() -> None:
            ids = top(self.count.value())
            if ids:
                self.show_started()
                ctx.client.ask(HEALTH_VERIFY, VerifyRequest(tuple(ids)), asker)

        def stop() -> None:
            ctx.client.cancel(HEALTH_VERIFY, asker)
            self.show_failure("Stopped; nothing was lost, and Check with the model starts again.")

        self.check_button.clicked.connect(ask)
        self.stop_button.clicked.connect(stop)
        self._cancel = lambda: ctx.client.cancel(HEALTH_VERIFY, asker)

    def cancel(self) -> None:
        """A new model: whatever was being asked of the old one is dropped."""
        cancel = getattr(self, "_cancel", None)
        if cancel is not None:
            cancel()
        self._unavailable = None  # the new model is asked afresh when its report is shown
        self.clear()
