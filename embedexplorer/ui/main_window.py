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
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.common.constants import BUNDLED, MULTI_TOKEN_ACTIONS, hub_offline
from ..core.common.errors import OfflineError
from ..core.maps.family_map import FamilyMap
from ..core.maps.word_maps import WordMap
from ..jobs.compare_jobs import COMPARE, CompareRequest
from ..jobs.layer_jobs import LAYERS, LAYERS_WARM, LayersReply, LayersRequest, WarmRequest
from ..jobs.map_jobs import WORD_MAP, WordMapRequest
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
from .chapter_notice import ChapterNotice
from .compare_pane import CompareDialog
from .elided_label import ElidedLabel
from .exercise_desk import ExerciseDesk
from .fitting import MODEL_BOX_CHARS, BarFit, RowPlacement
from .layers_pane import LayersPane
from .map_view import MapView
from .message_bar import MessageBar
from .neighbours_pane import NeighboursPane
from .row_view import RowView
from .teaching import TeachingTools
from .token_pane import TokenPane

# Files a reader may open directly, for the file dialog (folders are opened with their own dialog).
MODEL_FILE_FILTER = "Model files (*.safetensors *.gguf config.json);;All files (*)"
READING_HELP = (
    "<p><b>Tokens.</b> The text is split into tokens; each chip shows a token and its id, a house number "
    "in the vocabulary. <b>_</b> stands for a space: GPT-2's <i>_Paris</i> is \" Paris\" with the space "
    "in front, a different token from <i>Paris</i> at the start of a text. <b>##</b> (BERT, MiniLM) marks "
    "a piece that continues the word before it: <i>embed ##ding ##s</i>.</p>"
    "<p><b>Row.</b> The id picks one row of the embedding table: a list of numbers the model learned. "
    "No single number has a meaning; the direction of the whole row does. Places in the text count "
    "from 1; the position table counts its rows from 0, and BERT-style models put [CLS] first, so "
    "place 1 there is position-table row 1. The last line is what enters layer 1, as this model "
    "computes it.</p>"
    "<p><b>Neighbours.</b> The <b>k</b> rows (set k above the list) whose direction is nearest, by "
    "cosine: 1 is the same direction. The <b>baseline tick</b> in each bar marks what unrelated "
    "tokens reach in this model; read every value against it.</p>"
    "<p><b>Map.</b> The rows of the family words flattened onto the two directions in which they "
    "differ most; the caption says how much of the spread survives. The <b>star</b> is the selected "
    "token, the <b>rings</b> are its nearest neighbours (their names are in the hover tips). "
    "<b>Zoom</b> with the mouse wheel or by dragging with the right button; <b>reset</b> with the "
    "small \"A\" button that appears in the map's lower-left corner once you zoom. Click a dot to "
    "look it up.</p>"
    "<p><b>Exercises.</b> Guess first (Ctrl+G) hides the neighbours until you guess; the furthest "
    "family, analogies and two texts open beside the window.</p>"
)
MULTI_TOKEN_LABELS = {"average": "&Average their rows", "skip": "&Leave them off the map"}


class MainWindow(QMainWindow):
    """Type a word; see its tokens, rows, neighbours and its place on the family map."""

    def __init__(self, client: WorkerClient, settings: Settings) -> None:
        super().__init__()
        self.client = client
        self.settings = settings
        self.model_name = ""
        self.loaded = False
        self._layers_seen = False  # the Layers pane was shown: its model's process starts with each model
        self._pending_model = ""
        self._selected: tuple[int, int, str] | None = None  # id, place, readable token
        self.worker_stuck = False
        self.loaded_model: LoadedModel | None = None
        self.model_spec = ""  # what was typed for the model in use, kept when another fails to open
        self.setWindowTitle("EmbedExplorer")
        self.setAcceptDrops(True)
        self.resize(1360, 860)

        self.message_bar = MessageBar()
        self.token_pane = TokenPane()
        self.row_view = RowView()
        self.neighbours_pane = NeighboursPane(k=settings.k)
        self.map_view = MapView(settings)
        self.chapter_notice = ChapterNotice()
        self.layers_pane = LayersPane()
        self.exercises = ExerciseDesk(self)
        self.compare = CompareDialog(settings.k, self)
        # Last: a remembered presentation mode scales the panes above as it starts.
        self.teaching = TeachingTools(self)

        # The guess line sits right above the list it hides.
        neighbours = QWidget()
        neighbours_layout = QVBoxLayout(neighbours)
        neighbours_layout.setContentsMargins(0, 0, 0, 0)
        neighbours_layout.setSpacing(0)
        neighbours_layout.addWidget(self.exercises.guess_bar)
        neighbours_layout.addWidget(self.neighbours_pane, 1)
        self.left = QSplitter(Qt.Orientation.Vertical)
        self.left.addWidget(self.row_view)
        self.left.addWidget(neighbours)
        self.left.setStretchFactor(0, 2)
        self.left.setStretchFactor(1, 3)
        self.left.setChildrenCollapsible(False)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        # The map and the layers share the right side: both want the room, one at a time.
        self.right = QTabWidget()
        self.right.addTab(self.map_view, "&Map")
        self.right.addTab(self.layers_pane, "Through the &layers")
        # Where the left column is too short for both, the row pane moves beside the map.
        self.row_placement = RowPlacement(self.left, self.row_view, self.neighbours_pane.table, self.right)
        self.splitter.addWidget(self.left)
        self.splitter.addWidget(self.right)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([520, 840])
        self.splitter.setChildrenCollapsible(False)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 4, 6, 2)
        layout.setSpacing(3)  # every pixel counts on a 640-pixel screen
        layout.addWidget(self.message_bar)
        layout.addWidget(self.token_pane)
        layout.addWidget(self.exercises.suggestions)
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
        self.model_box.setMinimumContentsLength(MODEL_BOX_CHARS)
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
        self._notice_action = bar.addWidget(self.chapter_notice)
        self._notice_action.setVisible(False)
        self.bar_fit = BarFit(self, self.model_box, self.chapter_notice)
        exercises = self.addToolBar("Exercises")
        exercises.setObjectName("exercisesToolBar")
        exercises.setMovable(False)
        for action in self.exercises.actions():
            exercises.addAction(action)

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
        file_menu.addAction("&Compare with...").triggered.connect(self.compare.show)
        file_menu.addSeparator()
        file_menu.addAction(self.teaching.open_action)
        file_menu.addAction(self.teaching.save_action)
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
        map_menu.addAction("&Edit families...").triggered.connect(self.map_view.edit_families)
        map_menu.addSeparator()
        map_menu.addAction("&Family words only").triggered.connect(self.map_view.show_family_map)
        whole = map_menu.addAction("&Whole vocabulary")
        whole.triggered.connect(lambda: self.map_view.request_word_map("all"))
        map_menu.addAction("Words &matching...").triggered.connect(self.map_view.ask_words)
        projection = map_menu.addMenu("&Projection")
        self.projection_actions = {}
        for method, label in (("pca", "&PCA (instant)"), ("tsne", "&t-SNE"), ("umap", "&UMAP")):
            action = projection.addAction(label)
            action.setCheckable(True)
            action.setChecked(method == "pca")
            action.triggered.connect(lambda _checked=False, m=method: self._on_projection_chosen(m))
            self.projection_actions[method] = action
        map_menu.addSeparator()
        map_menu.addAction(self.exercises.distances_action)
        map_menu.addAction(self.exercises.furthest_action)
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
        view_menu.addSeparator()
        labels = view_menu.addAction("Word &labels on the map")
        labels.setCheckable(True)
        labels.setChecked(True)
        labels.toggled.connect(self.map_view.set_labels_visible)
        reset = view_menu.addAction("&Reset view")
        reset.triggered.connect(self.map_view.reset_view)
        reset.setShortcut(QKeySequence("Ctrl+0"))
        find = view_menu.addAction("&Find on the map")
        find.triggered.connect(self.map_view.focus_search)
        find.setShortcut(QKeySequence("Ctrl+F"))
        view_menu.addAction(self.teaching.presentation_action)

        exercise_menu = self.menuBar().addMenu("E&xercises")
        for action in self.exercises.actions():
            exercise_menu.addAction(action)

        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction("How to &read the panes").triggered.connect(self.show_reading_help)
        help_menu.addAction("Show the &log").triggered.connect(self.show_log)
        help_menu.addAction("&About EmbedExplorer").triggered.connect(self.show_about)
        self._refresh_recent()

    def _build_status_bar(self) -> None:
        self.facts_label = ElidedLabel("No model open yet.")
        self.progress = QProgressBar()
        # The bar shows the share; what is being done goes beside it, where any length fits.
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(True)
        self.progress.setFormat("%p%")
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
        channel(WORD_MAP).ready.connect(self._on_map_ready)
        channel(WORD_MAP).failed.connect(self._on_word_map_failed)
        channel(WORD_MAP).progress.connect(self._on_load_progress)
        self.map_view.word_map_requested.connect(self._on_word_map_requested)
        self.map_view.word_map_cancelled.connect(self._on_word_map_cancelled)
        channel(LAYERS).progress.connect(self._on_layers_progress)
        channel(LAYERS).ready.connect(self._on_layers_ready)
        channel(LAYERS).failed.connect(self._on_layers_failed)
        self.layers_pane.layers_requested.connect(self._request_layers)
        self.right.currentChanged.connect(lambda _index: self._warm_layers())
        # The layers need every weight: the whole model into the HF cache, not the table alone.
        self.layers_pane.download_requested.connect(
            lambda hub_id: self.open_model(hub_id, allow_download=True, whole_model=True)
        )

        compare = self.compare.pane
        channel(COMPARE).progress.connect(compare.show_progress)
        channel(COMPARE).ready.connect(compare.show_comparison)
        channel(COMPARE).failed.connect(lambda failure: compare.show_failure(failure.message))
        compare.compare_requested.connect(self._request_comparison)
        compare.stop_requested.connect(lambda: self.client.cancel(COMPARE))
        compare.token_clicked.connect(self.token_pane.set_text)

        self.token_pane.text_changed.connect(self._on_text_changed)
        self.token_pane.token_selected.connect(self._on_token_selected)
        self.neighbours_pane.k_changed.connect(self._on_k_changed)
        self.neighbours_pane.neighbour_activated.connect(self.token_pane.set_text)
        self.neighbours_pane.compare_requested.connect(self._on_compare_requested)
        self.map_view.word_clicked.connect(self.token_pane.set_text)
        self.map_view.families_requested.connect(lambda _path: self._request_map())
        self.map_view.hidden_changed.connect(lambda _hidden: self.exercises.map_changed())
        self.chapter_notice.download_wanted.connect(lambda spec: self.open_model(spec, allow_download=True))
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
        self.fit_to_screen()
        for key, splitter in (("window/splitter", self.splitter), ("window/left", self.left)):
            state = self.settings.geometry(key)
            if state is not None:
                splitter.restoreState(state)
                if splitter is self.left:
                    self.row_placement.sizes_restored()
        self.token_pane.set_text_quietly(self.settings.text)
        self._set_tab_order()

    def fit_to_screen(self) -> None:
        """Never larger than the screen's free area (a laptop's 1366x768 or 1024x640), and on it."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        free = screen.availableGeometry()
        # The frame (title bar, borders) is not part of the window's own size.
        frame_w = max(0, self.frameGeometry().width() - self.geometry().width())
        frame_h = max(0, self.frameGeometry().height() - self.geometry().height())
        width = min(self.width(), free.width() - frame_w)
        height = min(self.height(), free.height() - frame_h)
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        x = min(max(self.x(), free.left()), free.right() - width - frame_w + 1)
        y = min(max(self.y(), free.top()), free.bottom() - height - frame_h + 1)
        if (x, y) != (self.x(), self.y()):
            self.move(x, y)

    def _set_tab_order(self) -> None:
        """Tab walks the panes in reading order: text, chips, guess, neighbours, compare, k, map."""
        chain: list[QWidget] = [
            self.token_pane.input,
            self.token_pane.chip_list,
            self.exercises.guess_bar.input,
            self.neighbours_pane.table,
            self.neighbours_pane.compare_input,
            self.neighbours_pane.k_box,
            self.row_view.show_position,
            self.row_view.copy_button,
            self.map_view.canvas,
        ]
        for first, second in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(first, second)

    # ----- models ------------------------------------------------------------------------
    def open_model(self, spec: str, allow_download: bool = False, whole_model: bool = False) -> None:
        spec = spec.strip()
        self._pending_model = spec
        self.model_box.setEditText(spec)
        self.progress.setRange(0, 0)
        self.progress.setFormat("Opening...")
        self.progress.show()
        self.facts_label.setText(f"Opening {spec or 'the default model'}...")
        self.message_bar.hide()
        self.client.submit(LOAD, LoadRequest(spec, allow_download, whole_model))

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
            "Hugging Face id (only its embedding table, config and tokenizer are fetched):",
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
        self.progress.show()
        self.facts_label.setText(f"Opening {self._pending_model or 'the default model'}: {message}")

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
        self.model_spec = self._pending_model or loaded.name
        self._notice_action.setVisible(self.chapter_notice.update_for(loaded.name, facts.rows, facts.width))
        self.exercises.model_loaded(self.model_spec)
        self._refresh_recent()
        self.model_box.setEditText(self._pending_model or loaded.name)
        self.row_view.clear()
        self.neighbours_pane.clear()
        self.layers_pane.clear()
        self.compare.pane.clear()
        self._warm_layers()
        self._request_map()
        self.teaching.apply_texts()  # a lesson waiting for this model
        self.token_pane.flush()
        self.statusBar().showMessage(f"Opened {loaded.name} in {loaded.seconds:.2f} s", 5000)

    def _on_load_failed(self, failure: Failure) -> None:
        self.progress.hide()
        if self.loaded:  # the box names the model still in use, not the one that failed
            self.model_box.setEditText(self.model_spec)
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
        if not text.strip():
            # No text, no token: nothing of the last one may stay on screen (row, list, cosine, star).
            self._selected = None
            self.row_view.clear()
            self.neighbours_pane.clear()
            self.map_view.clear_selection()
            self.exercises.query_cleared()
            self.client.cancel(ROW)
            self.client.cancel(NEIGHBOURS)
            self.client.cancel(COSINE)
        if self.loaded:
            self.client.submit(TOKENS, TokensRequest(text))

    def _on_token_selected(self, token_id: int, place: int, token: str) -> None:
        self._selected = (token_id, place, token)
        self.exercises.query_selected(token_id, token)
        self.compare.pane.show_token_id(token_id)
        self.layers_pane.set_token(self.token_pane.text(), place + 1, token)
        self.client.submit(ROW, RowRequest(token_id, place))
        self.client.submit(NEIGHBOURS, NeighboursRequest(token_id, self.neighbours_pane.k()))
        other = self.neighbours_pane.compare_text()
        if other.strip():
            self.client.submit(COSINE, CosineRequest(token_id, other))

    def _request_comparison(self, spec: str, k: int, output_head: bool) -> None:
        if not self.loaded:
            self.compare.pane.show_failure("Open a model first: it is table A of the comparison.")
            return
        self.compare.pane.show_started("its output head" if output_head else spec)
        self.client.submit(COMPARE, CompareRequest(spec, k, output_head))

    def _on_k_changed(self, k: int) -> None:
        self.settings.k = k
        self.exercises.k_changed(k)
        if self._selected:
            self.client.submit(NEIGHBOURS, NeighboursRequest(self._selected[0], k))

    def _on_compare_requested(self, other: str) -> None:
        if self._selected:
            self.client.submit(COSINE, CosineRequest(self._selected[0], other))
        else:
            self.neighbours_pane.show_compare_message("Select a token first.")

    def _on_neighbours_ready(self, answer: NeighboursAnswer) -> None:
        self.neighbours_pane.show_neighbours(answer)
        if not self.exercises.hides_neighbours(answer):
            self.show_on_map(answer)

    def show_on_map(self, answer: NeighboursAnswer) -> None:
        """The selected token as a star on the map, its neighbours as rings."""
        query = answer.result.query
        if query is not None:
            names = tuple(n.token for n in answer.result.neighbours)
            self.map_view.show_selection(query.token, answer.map_query, answer.map_neighbours, names)

    # ----- through the layers ------------------------------------------------------------
    def _request_layers(self, request: LayersRequest) -> None:
        if self.loaded:
            self.client.submit(LAYERS, request)

    def _warm_layers(self) -> None:
        """Once the Layers pane has been shown, keep the model's process started for the open model,
        so torch is imported before the first question (its memory is stated in docs/benchmarks.md)."""
        if self.right.currentWidget() is self.layers_pane:
            self._layers_seen = True
        if self.loaded and self._layers_seen:
            self.client.submit(LAYERS_WARM, WarmRequest())

    def _on_layers_progress(self, share: float, message: str) -> None:
        self._on_load_progress(share, message)

    def _on_layers_ready(self, reply: LayersReply) -> None:
        self.progress.hide()
        self.layers_pane.show_reply(reply)
        if reply.answer is not None:
            shown = reply.answer.token
            self.row_view.show_layer_input(shown.token.id, shown.place - 1, reply.answer.input)
        if reply.load_seconds is not None and reply.answer is not None:
            self.statusBar().showMessage(f"Loaded the whole model in {reply.load_seconds:.1f} s", 5000)

    def _on_layers_failed(self, failure: Failure) -> None:
        self.progress.hide()
        self.layers_pane.show_message(failure.message)

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

    def _on_word_map_requested(self, request: WordMapRequest) -> None:
        if not self.loaded:
            self.map_view.map_failed("Open a model first.")
            return
        self.client.submit(WORD_MAP, request)
        self._on_load_progress(-1.0, "Map: starting")

    def _on_word_map_failed(self, failure: Failure) -> None:
        self.progress.hide()
        self.map_view.map_failed(failure.message)
        self._check_projection(self.map_view.projection)

    def _on_word_map_cancelled(self) -> None:
        self.client.cancel(WORD_MAP)
        self.progress.hide()
        self._check_projection(self.map_view.projection)

    def _on_projection_chosen(self, method: str) -> None:
        self.map_view.set_projection(method)
        self._check_projection(method if self.map_view.computing else self.map_view.projection)

    def _check_projection(self, method: str) -> None:
        for name, action in self.projection_actions.items():
            action.setChecked(name == method)

    def _on_map_ready(self, family_map: FamilyMap | WordMap) -> None:
        self.progress.hide()
        self.map_view.show_map(family_map, self.model_name)
        self._check_projection(self.map_view.projection)
        self.export_action.setEnabled(True)
        self.exercises.map_changed()
        self.teaching.apply_map_view()
        if self._selected:  # place the selection on the new map
            self.client.submit(NEIGHBOURS, NeighboursRequest(self._selected[0], self.neighbours_pane.k()))

    def map_view_range(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """The map's visible x and y ranges, for a lesson (None before a map is drawn)."""
        if not self.map_view.can_export:
            return None
        (x0, x1), (y0, y1) = self.map_view.canvas.plot.viewRange()
        return (float(x0), float(x1)), (float(y0), float(y1))

    def set_map_view_range(self, x: tuple[float, float], y: tuple[float, float]) -> None:
        self.map_view.canvas.plot.setRange(xRange=x, yRange=y, padding=0)

    # ----- help --------------------------------------------------------------------------
    def show_reading_help(self) -> None:
        QMessageBox.information(self, "How to read the panes", READING_HELP)

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
        self.settings.set_geometry("window/left", self.row_placement.left_state())
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
