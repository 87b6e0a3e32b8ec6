"""The main window: menus, the model bar and the status bar; it composes panes and sends requests.

The window never computes and never reaches into a pane's widgets: a pane offers
small methods (``k()``, ``show_neighbours(answer)``) and signals, and the worker's
answers reach the panes through ``client.channel(KIND)``.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..core.constants import BUNDLED, MULTI_TOKEN_ACTIONS, hub_offline
from ..core.errors import OfflineError
from ..core.maps import FamilyMap
from ..jobs.table_jobs import (
    COSINE,
    LOAD,
    MAP,
    NEIGHBOURS,
    ROW,
    TOKENS,
    CosineRequest,
    LoadedModel,
    LoadRequest,
    MapRequest,
    NeighboursAnswer,
    NeighboursRequest,
    RowRequest,
    TokensRequest,
)
from ..settings import Settings
from ..worker import Failure, WorkerClient
from .map_view import MapView
from .message_bar import MessageBar
from .neighbours_pane import NeighboursPane
from .row_view import RowView
from .token_pane import TokenPane

# Files a reader may open directly, for the file dialog (folders are opened with their own dialog).
MODEL_FILE_FILTER = "Model files (*.safetensors *.gguf config.json);;All files (*)"
MULTI_TOKEN_LABELS = {"average": "&Average their rows", "skip": "&Leave them off the map"}


class MainWindow(QMainWindow):
    """Type a word; see its tokens, rows, neighbours and its place on the family map."""

    def __init__(self, client: WorkerClient, settings: Settings) -> None:
        super().__init__()
        self.client = client
        self.settings = settings
        self.model_name = ""
        self.loaded = False
        self._pending_model = ""
        self._selected: tuple[int, int, str] | None = None  # id, place, readable token
        self.worker_stuck = False
        self.loaded_model: LoadedModel | None = None
        self.setWindowTitle("EmbedExplorer")
        self.setAcceptDrops(True)
        self.resize(1360, 860)

        self.message_bar = MessageBar()
        self.token_pane = TokenPane()
        self.row_view = RowView()
        self.neighbours_pane = NeighboursPane(k=settings.k)
        self.map_view = MapView(settings)

        self.left = QSplitter(Qt.Orientation.Vertical)
        self.left.addWidget(self.row_view)
        self.left.addWidget(self.neighbours_pane)
        self.left.setStretchFactor(0, 2)
        self.left.setStretchFactor(1, 3)
        self.left.setSizes([400, 380])
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.left)
        self.splitter.addWidget(self.map_view)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([520, 840])
        self.splitter.setChildrenCollapsible(False)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.token_pane)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

        self._build_model_bar()
        self._build_menus()
        self._build_status_bar()
        self._connect()
        self._restore()

    # ----- construction ------------------------------------------------------------------
    def _build_model_bar(self) -> None:
        bar = self.addToolBar("Model")
        bar.setObjectName("modelToolBar")
        bar.setMovable(False)
        bar.addWidget(QLabel(" Model: "))
        self.model_box = QComboBox()
        self.model_box.setEditable(True)
        self.model_box.setMinimumContentsLength(34)
        self.model_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_box.setToolTip(
            "A model folder or file, a Hugging Face id such as openai-community/gpt2, or 'bundled'. "
            "Press Enter to open."
        )
        line = self.model_box.lineEdit()
        if line is not None:
            line.setPlaceholderText("folder, model file, Hugging Face id, or bundled")
            line.returnPressed.connect(self._on_model_entered)
        self.model_box.activated.connect(lambda _index: self._on_model_entered())
        bar.addWidget(self.model_box)
        open_button = bar.addAction("Open")
        open_button.setToolTip("Open the model named in the box")
        open_button.triggered.connect(self._on_model_entered)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_folder = file_menu.addAction("&Open model folder...")
        open_folder.triggered.connect(self.choose_model_folder)
        open_folder.setShortcut(QKeySequence.StandardKey.Open)
        open_file = file_menu.addAction("Open model &file (.safetensors, .gguf)...")
        open_file.triggered.connect(self.choose_model_file)
        open_file.setShortcut(QKeySequence("Ctrl+Shift+O"))
        file_menu.addAction("Open &Hugging Face model...").triggered.connect(self.choose_hub_model)
        file_menu.addAction("Use the &bundled model (all-MiniLM-L6-v2)").triggered.connect(
            lambda: self.open_model(BUNDLED)
        )
        self.recent_menu = file_menu.addMenu("&Recent models")
        file_menu.addAction("&Download model...").triggered.connect(self.choose_download)
        file_menu.addSeparator()
        self.export_action = file_menu.addAction("&Export map...")
        self.export_action.triggered.connect(self.map_view.export_dialog)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.setEnabled(False)
        file_menu.addSeparator()
        quit_action = file_menu.addAction("&Quit")
        quit_action.triggered.connect(self.close)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))

        map_menu = self.menuBar().addMenu("&Map")
        map_menu.addAction("&Load families file...").triggered.connect(self.map_view.choose_families_file)
        map_menu.addAction("Use the &chapter's families").triggered.connect(lambda: self.map_view.use_families(""))
        map_menu.addAction("&Save families as...").triggered.connect(self.map_view.save_families_dialog)
        map_menu.addSeparator()
        multi = map_menu.addMenu("Words of several &tokens")
        self.multi_token_actions = {}
        for mode in MULTI_TOKEN_ACTIONS:
            action = multi.addAction(MULTI_TOKEN_LABELS[mode])
            action.triggered.connect(lambda _checked=False, m=mode: self.set_multi_token(m))
            action.setCheckable(True)
            action.setChecked(self.settings.multi_token == mode)
            self.multi_token_actions[mode] = action
        map_menu.addSeparator()
        map_menu.addAction(self.export_action)

        view_menu = self.menuBar().addMenu("&View")
        focus = view_menu.addAction("Focus the &text")
        focus.triggered.connect(self.token_pane.focus)
        focus.setShortcut(QKeySequence("Ctrl+L"))
        compare = view_menu.addAction("&Compare with another word")
        compare.triggered.connect(self.neighbours_pane.focus_compare)
        compare.setShortcut(QKeySequence("Ctrl+K"))
        copy_row = view_menu.addAction("Copy the selected &row")
        copy_row.triggered.connect(self.row_view.copy_row)
        copy_row.setShortcut(QKeySequence("Ctrl+Shift+C"))

        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction("How to &read the panes").triggered.connect(self.show_reading_help)
        help_menu.addAction("Show the &log").triggered.connect(self.show_log)
        help_menu.addAction("&About EmbedExplorer").triggered.connect(self.show_about)
        self._refresh_recent()

    def _build_status_bar(self) -> None:
        self.facts_label = QLabel("No model open yet.")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.statusBar().addWidget(self.facts_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

    def _connect(self) -> None:
        channel = self.client.channel
        channel(LOAD).progress.connect(self._on_load_progress)
        channel(LOAD).ready.connect(self._on_table_loaded)
        channel(LOAD).failed.connect(self._on_load_failed)
        channel(TOKENS).ready.connect(self.token_pane.show_tokens)
        channel(TOKENS).failed.connect(lambda failure: self.token_pane.show_message(failure.message))
        channel(ROW).ready.connect(self.row_view.show_row)
        channel(ROW).failed.connect(self._show_failure)
        channel(NEIGHBOURS).ready.connect(self._on_neighbours_ready)
        channel(NEIGHBOURS).failed.connect(self._show_failure)
        channel(COSINE).ready.connect(self.neighbours_pane.show_cosine)
        channel(COSINE).failed.connect(lambda failure: self.neighbours_pane.show_compare_message(failure.message))
        channel(MAP).ready.connect(self._on_map_ready)
        channel(MAP).failed.connect(lambda failure: self.map_view.map_failed(failure.message))

        self.token_pane.text_changed.connect(self._on_text_changed)
        self.token_pane.token_selected.connect(self._on_token_selected)
        self.neighbours_pane.k_changed.connect(self._on_k_changed)
        self.neighbours_pane.neighbour_activated.connect(self.token_pane.set_text)
        self.neighbours_pane.compare_requested.connect(self._on_compare_requested)
        self.map_view.word_clicked.connect(self.token_pane.set_text)
        self.map_view.families_requested.connect(lambda _path: self._request_map())
        self.map_view.message.connect(self.message_bar.show_message)
        self.map_view.status.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.row_view.copied.connect(lambda text: self.statusBar().showMessage(text, 4000))
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(lambda _scheme: self.apply_palette())

    def _restore(self) -> None:
        geometry = self.settings.geometry("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        for key, splitter in (("window/splitter", self.splitter), ("window/left", self.left)):
            state = self.settings.geometry(key)
            if state is not None:
                splitter.restoreState(state)
        self.token_pane.set_text_quietly(self.settings.text)

    # ----- models ------------------------------------------------------------------------
    def open_model(self, spec: str, allow_download: bool = False) -> None:
        spec = spec.strip()
        self._pending_model = spec
        self.model_box.setEditText(spec)
        self.progress.setRange(0, 0)
        self.progress.setFormat("Opening...")
        self.progress.show()
        self.facts_label.setText(f"Opening {spec or 'the default model'}...")
        self.message_bar.hide()
        self.client.submit(LOAD, LoadRequest(spec, allow_download))

    def _on_model_entered(self) -> None:
        self.open_model(self.model_box.currentText())

    def choose_model_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a model folder (config.json + safetensors)")
        if folder:
            self.open_model(folder)

    def choose_model_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a model file", str(Path.home()), MODEL_FILE_FILTER)
        if path:
            self.open_model(path)

    def choose_hub_model(self) -> None:
        repo_id, ok = QInputDialog.getText(
            self,
            "Open a Hugging Face model",
            "Model id (from the local cache):",
            text="openai-community/gpt2",
        )
        if ok and repo_id.strip():
            self.open_model(repo_id)

    def choose_download(self) -> None:
        repo_id, ok = QInputDialog.getText(
            self,
            "Download a model",
            "Hugging Face id (only the tokenizer and safetensors are fetched):",
            text=self._pending_model if "/" in self._pending_model else "openai-community/gpt2",
        )
        if ok and repo_id.strip():
            self.open_model(repo_id, allow_download=True)

    def _on_load_progress(self, share: float, message: str) -> None:
        if share < 0:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(share * 1000))
        self.progress.setFormat(f"{message} %p%")
        self.progress.show()

    def _on_table_loaded(self, loaded: LoadedModel) -> None:
        self.loaded = True
        self.loaded_model = loaded
        self.model_name = loaded.name
        self.progress.hide()
        facts = loaded.facts
        positions = f"{facts.position_rows:,} position rows" if facts.position_rows else "no position table"
        self.facts_label.setText(
            f"{loaded.name}: {facts.rows:,} rows x {facts.width:,} = {facts.table_weights:,} weights, "
            f"{facts.share:.1%} of the model ({facts.model_weights:,}); {positions}"
        )
        self.facts_label.setToolTip(facts.summary())
        self.setWindowTitle(f"EmbedExplorer — {loaded.name}")
        if self._pending_model:
            self.settings.model = self._pending_model
        self._refresh_recent()
        self.model_box.setEditText(self._pending_model or loaded.name)
        self.row_view.clear()
        self.neighbours_pane.clear()
        self._request_map()
        self.token_pane.flush()
        self.statusBar().showMessage(f"Opened {loaded.name} in {loaded.seconds:.2f} s", 5000)

    def _on_load_failed(self, failure: Failure) -> None:
        self.progress.hide()
        self.facts_label.setText(
            f"Still using {self.model_name}." if self.loaded else "No model open: open a folder or the bundled model."
        )
        action = None
        if failure.is_a(OfflineError) and not hub_offline():
            spec = self._pending_model
            action = ("Download", lambda: self.open_model(spec, allow_download=True))
        elif not self.loaded:
            action = ("Open the bundled model", lambda: self.open_model(BUNDLED))
        self.message_bar.show_message(f"Could not open the model. {failure.message}", "error", action)

    def _refresh_recent(self) -> None:
        recent = self.settings.recent_models
        self.recent_menu.clear()
        for spec in recent:
            self.recent_menu.addAction(spec).triggered.connect(lambda _checked=False, s=spec: self.open_model(s))
        if recent:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear the list").triggered.connect(self._clear_recent)
        self.recent_menu.setEnabled(bool(recent))
        current = self.model_box.currentText()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        self.model_box.addItems(list(dict.fromkeys([*recent, BUNDLED])))
        self.model_box.setEditText(current)
        self.model_box.blockSignals(False)

    def _clear_recent(self) -> None:
        self.settings.clear_recent_models()
        self._refresh_recent()

    # ----- tokens, rows, neighbours -------------------------------------------------------
    def _on_text_changed(self, text: str) -> None:
        self.settings.text = text
        if self.loaded:
            self.client.submit(TOKENS, TokensRequest(text))

    def _on_token_selected(self, token_id: int, place: int, token: str) -> None:
        self._selected = (token_id, place, token)
        self.client.submit(ROW, RowRequest(token_id, place))
        self.client.submit(NEIGHBOURS, NeighboursRequest(token_id, self.neighbours_pane.k()))
        other = self.neighbours_pane.compare_text()
        if other.strip():
            self.client.submit(COSINE, CosineRequest(token_id, other))

    def _on_k_changed(self, k: int) -> None:
        self.settings.k = k
        if self._selected:
            self.client.submit(NEIGHBOURS, NeighboursRequest(self._selected[0], k))

    def _on_compare_requested(self, other: str) -> None:
        if self._selected:
            self.client.submit(COSINE, CosineRequest(self._selected[0], other))
        else:
            self.neighbours_pane.show_compare_message("Select a token first.")

    def _on_neighbours_ready(self, answer: NeighboursAnswer) -> None:
        self.neighbours_pane.show_neighbours(answer)
        query = answer.result.query
        if query is not None:
            self.map_view.show_selection(query.token, answer.map_query, answer.map_neighbours)

    def _show_failure(self, failure: Failure) -> None:
        self.message_bar.show_message(failure.message, "error")

    # ----- the map ---------------------------------------------------------------------------
    def _request_map(self) -> None:
        if self.loaded:
            self.client.submit(MAP, MapRequest(self.map_view.requested_families or None, self.settings.multi_token))

    def set_multi_token(self, mode: str) -> None:
        self.settings.multi_token = mode
        for name, action in self.multi_token_actions.items():
            action.setChecked(name == mode)
        self._request_map()

    def _on_map_ready(self, family_map: FamilyMap) -> None:
        self.map_view.show_map(family_map, self.model_name)
        self.export_action.setEnabled(True)
        if self._selected:  # place the selection on the new map
            self.client.submit(NEIGHBOURS, NeighboursRequest(self._selected[0], self.neighbours_pane.k()))

    # ----- help --------------------------------------------------------------------------
    def show_reading_help(self) -> None:
        QMessageBox.information(
            self,
            "How to read the panes",
            "<p><b>Tokens.</b> The text is split into tokens; each has an id, a house number in the "
            "vocabulary. For GPT-2, _ stands for the space in front of a word.</p>"
            "<p><b>Row.</b> The id picks one row of the embedding table: a list of numbers the model "
            "learned. No single number has a meaning; the direction of the whole row does.</p>"
            "<p><b>Neighbours.</b> Rows pointing the same way have a cosine near 1. The tick marks what "
            "unrelated tokens reach in this model; read values against it.</p>"
            "<p><b>Map.</b> The rows of 63 words flattened onto the two directions in which they differ "
            "most. The caption says how much of the spread survives the flattening.</p>",
        )

    def show_log(self) -> None:
        """Open the log of unexpected errors in the desktop's text viewer (or say where it is)."""
        from ..errorlog import log_path

        path = log_path()
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            QMessageBox.information(self, "The log", f"The log of unexpected errors is at\n{path}")

    def show_about(self) -> None:
        from .. import __version__, licences

        QMessageBox.about(
            self,
            "About EmbedExplorer",
            f"<b>EmbedExplorer {__version__}</b><p>Look inside a language model's token embedding table."
            "</p><p>Weights are read only from safetensors files, and nothing is downloaded unless you ask.</p>"
            + licences.about_html(licences.components(), licences.licence_dir()),
        )

    # ----- window events ------------------------------------------------------------------
    def apply_palette(self) -> None:
        pg.setConfigOptions(antialias=True)
        self.map_view.canvas.apply_palette()
        self.row_view.apply_palette()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        if _dropped_model(event.mimeData().urls()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        dropped = _dropped_model(event.mimeData().urls())
        if dropped is not None:
            self.open_model(str(dropped))
            event.acceptProposedAction()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(1360, 860)

    def save_settings(self) -> None:
        self.settings.set_geometry("window/geometry", self.saveGeometry())
        self.settings.set_geometry("window/splitter", self.splitter.saveState())
        self.settings.set_geometry("window/left", self.left.saveState())
        self.settings.text = self.token_pane.text()
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.save_settings()
        # A download cannot be interrupted: if the worker does not stop in time, app.main
        # ends the process once the window has gone, instead of waiting for the network.
        self.worker_stuck = not self.client.shutdown()
        super().closeEvent(event)


def _dropped_model(urls: list[QUrl]) -> Path | None:
    """The first local folder or file among dropped items: a reader decides whether it can open it."""
    for url in urls:
        if url.isLocalFile():
            return Path(url.toLocalFile())
    return None
