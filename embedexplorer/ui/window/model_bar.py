"""Which model is open: the Model box and its toolbar, the File menu's ways to open one, and the load itself.

When a model opens, the bar writes it into the state in one update (its spec, its name, a
new ``model_serial``, no selection); every pane that depends on the model follows that.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QComboBox, QFileDialog, QInputDialog, QLabel

from ...core.common.constants import BUNDLED, hub_offline
from ...core.common.errors import OfflineError
from ...core.readers import file_dialog_filter
from ...jobs.table_jobs import LOAD, LoadedModel, LoadRequest
from ...worker import Failure
from ..panes.local_models import complete_from_local_models
from .chapter_notice import ChapterNotice
from .fitting import MODEL_BOX_CHARS, MODEL_BOX_TIP, BarFit
from .plugging import PaneContext


class ModelBar(QObject):
    """The Model box (a folder, a file, a Hub id or "bundled"; Enter opens it) and the File menu's open actions."""

    def __init__(self, ctx: PaneContext) -> None:
        window = ctx.shell.window_widget()
        super().__init__(window)
        self.state, self.client, self.settings, self.shell = ctx.state, ctx.client, ctx.settings, ctx.shell
        self.pending = ""  # what was asked for last
        self.loaded_model: LoadedModel | None = None
        bar = ctx.shell.toolbar("Model")
        bar.addWidget(QLabel(" Model: "))
        self.box = QComboBox()
        self.box.setEditable(True)
        self.box.setMinimumContentsLength(MODEL_BOX_CHARS)
        self.box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.box.setToolTip(MODEL_BOX_TIP)
        line = self.box.lineEdit()
        if line is not None:
            line.setPlaceholderText("folder, model file, Hugging Face id, or bundled")
            line.returnPressed.connect(self._on_entered)
        self.box.activated.connect(lambda _index: self._on_entered())
        complete_from_local_models(self.box, ctx)
        bar.addWidget(self.box)
        open_button = bar.addAction("Open")
        open_button.setToolTip("Open the model named in the box")
        open_button.triggered.connect(self._on_entered)
        self.chapter_notice = ChapterNotice()
        self.notice_action = bar.addWidget(self.chapter_notice)
        self.notice_action.setVisible(False)
        self.chapter_notice.download_wanted.connect(lambda spec: self.open(spec, allow_download=True))
        self.bar_fit = BarFit(window, self.box, self.chapter_notice)
        self._build_menu(ctx)
        channel = self.client.channel(LOAD, self)
        channel.progress.connect(self._on_progress)
        channel.ready.connect(self._on_loaded)
        channel.failed.connect(self._on_failed)

    def _build_menu(self, ctx: PaneContext) -> None:
        menu = ctx.shell.menu("&File")
        open_folder = menu.addAction("&Open model folder...")
        open_folder.triggered.connect(self.choose_folder)
        open_folder.setShortcut(QKeySequence.StandardKey.Open)
        open_file = menu.addAction("Open model &file...")
        open_file.triggered.connect(self.choose_file)
        open_file.setShortcut(QKeySequence("Ctrl+Shift+O"))
        menu.addAction("Open &Hugging Face model...").triggered.connect(self.choose_hub_model)
        menu.addAction("Use the &bundled model (all-MiniLM-L6-v2)").triggered.connect(lambda: self.open(BUNDLED))
        self.recent_menu = menu.addMenu("&Recent models")
        menu.addAction("&Download model...").triggered.connect(self.choose_download)
        menu.addSeparator()
        self._refresh_recent()

    # ----- opening ---------------------------------------------------------------------------
    def open(self, spec: str, allow_download: bool = False, whole_model: bool = False) -> None:
        spec = spec.strip()
        self.pending = spec
        self.box.setEditText(spec)
        self.shell.show_progress(-1.0, "")
        self.shell.set_facts(f"Opening {spec or 'the default model'}...")
        self.shell.show_message("", "info")
        self.client.ask(LOAD, LoadRequest(spec, allow_download, whole_model), self)

    def _on_entered(self) -> None:
        self.open(self.box.currentText())

    def choose_folder(self) -> None:
        window = self.shell.window_widget()
        folder = QFileDialog.getExistingDirectory(window, "Open a model folder (config.json + safetensors)")
        if folder:
            self.open(folder)

    def choose_file(self) -> None:
        window = self.shell.window_widget()
        path, _ = QFileDialog.getOpenFileName(window, "Open a model file", str(Path.home()), file_dialog_filter())
        if path:
            self.open(path)

    def choose_hub_model(self) -> None:
        repo_id, ok = QInputDialog.getText(
            self.shell.window_widget(),
            "Open a Hugging Face model",
            "Model id (from the local cache):",
            text="openai-community/gpt2",
        )
        if ok and repo_id.strip():
            self.open(repo_id)

    def choose_download(self) -> None:
        repo_id, ok = QInputDialog.getText(
            self.shell.window_widget(),
            "Download a model",
            "Hugging Face id (only its embedding table, config and tokenizer are fetched):",
            text=self.pending if "/" in self.pending else "openai-community/gpt2",
        )
        if ok and repo_id.strip():
            self.open(repo_id, allow_download=True)

    # ----- the worker's answers ----------------------------------------------------------------
    def _on_progress(self, share: float, message: str) -> None:
        self.shell.show_progress(share, message)
        self.shell.set_facts(f"Opening {self.pending or 'the default model'}: {message}")

    def _on_loaded(self, loaded: LoadedModel) -> None:
        self.loaded_model = loaded
        self.shell.hide_progress()
        facts = loaded.facts
        positions = f"{facts.position_rows:,} position rows" if facts.position_rows else "no position table"
        self.shell.set_facts(
            f"{loaded.name}: {facts.rows:,} rows x {facts.width:,} = {facts.table_weights:,} weights, "
            f"{facts.share:.1%} of the model ({facts.model_weights:,}); {positions}",
            facts.summary(),
        )
        self.shell.window_widget().setWindowTitle(f"EmbedExplorer — {loaded.name}")
        if self.pending:
            self.settings.model = self.pending
        self.notice_action.setVisible(self.chapter_notice.update_for(loaded.name, facts.rows, facts.width))
        self._refresh_recent()
        self.box.setEditText(self.pending or loaded.name)
        self.bar_fit.fit()  # room for the whole new name (a very long path: its start, the whole in the tooltip)
        state = self.state
        state.update(
            model_spec=self.pending or loaded.name,
            model_name=loaded.name,
            selection=None,
            model_serial=state.model_serial + 1,
        )
        self.shell.show_status(f"Opened {loaded.name} in {loaded.seconds:.2f} s", 5000)
        if facts.pointing_nowhere:  # named once, as the table opens
            self.shell.show_message(facts.pointing_nowhere, "info")

    def _on_failed(self, failure: Failure) -> None:
        self.shell.hide_progress()
        state = self.state
        if state.loaded:  # the box names the model still in use, not the one that failed
            self.box.setEditText(state.model_spec)
            self.bar_fit.fit()  # room for the whole name again
        self.shell.set_facts(
            f"Still using {state.model_name}." if state.loaded else "No model open: open a folder or the bundled model."
        )
        action = None
        if failure.is_a(OfflineError) and not hub_offline():
            spec = self.pending
            action = ("Download", lambda: self.open(spec, allow_download=True))
        elif not state.loaded:
            action = ("Open the bundled model", lambda: self.open(BUNDLED))
        self.shell.show_message(f"Could not open the model. {failure.message}", "error", action)

    def _refresh_recent(self) -> None:
        recent = self.settings.recent_models
        self.recent_menu.clear()
        for spec in recent:
            self.recent_menu.addAction(spec).triggered.connect(lambda _checked=False, s=spec: self.open(s))
        if recent:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear the list").triggered.connect(self._clear_recent)
        self.recent_menu.setEnabled(bool(recent))
        current = self.box.currentText()
        self.box.blockSignals(True)
        self.box.clear()
        self.box.addItems(list(dict.fromkeys([*recent, BUNDLED])))
        self.box.setEditText(current)
        self.box.blockSignals(False)

    def _clear_recent(self) -> None:
        self.settings.clear_recent_models()
        self._refresh_recent()
