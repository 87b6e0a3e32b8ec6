"""The main window: wiring only. Panes show results; the worker computes them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
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

from ..settings import Settings
from ..worker import WorkerClient
from .map_view import MapView
from .message_bar import MessageBar
from .neighbours_pane import NeighboursPane
from .row_view import RowView
from .token_pane import TokenPane

BUNDLED_LABEL = "bundled"


class MainWindow(QMainWindow):
    """Type a word; see its tokens, rows, neighbours and its place on the family map."""

    def __init__(self, client: WorkerClient, settings: Settings) -> None:
        super().__init__()
        self.client = client
        self.settings = settings
        self.model_name = ""
        self.loaded = False
        self._pending_model = ""
        self._selected: tuple[int, int, str] | None = None
        self.families_file = settings.families_file  # "" means the chapter's families
        self._requested_families = self.families_file
        self.family_map: Any = None
        self.worker_stuck = False
        self.facts: dict[str, Any] = {}
        self.setWindowTitle("EmbedExplorer")
        self.setAcceptDrops(True)
        self.resize(1360, 860)

        self.message_bar = MessageBar()
        self.token_pane = TokenPane()
        self.row_view = RowView()
        self.neighbours_pane = NeighboursPane(k=settings.k)
        self.map_view = MapView(hidden=set(settings.hidden_families))

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
            "A model folder, a Hugging Face id such as openai-community/gpt2, or 'bundled'. Press Enter to open."
        )
        self.model_box.lineEdit().setPlaceholderText("folder, Hugging Face id, or bundled")
        self.model_box.lineEdit().returnPressed.connect(self._on_model_entered)
        self.model_box.activated.connect(lambda _i: self._on_model_entered())
        bar.addWidget(self.model_box)
        open_button = QAction("Open", self)
        open_button.setToolTip("Open the model named in the box")
        open_button.triggered.connect(self._on_model_entered)
        bar.addAction(open_button)
        self._refresh_recent()

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_folder_action = file_menu.addAction("&Open model folder...", self.choose_model_folder)
        self.open_folder_action.setShortcut(QKeySequence.StandardKey.Open)
        file_menu.addAction("Open &Hugging Face model...", self.choose_hub_model)
        file_menu.addAction("Use the &bundled model (all-MiniLM-L6-v2)", lambda: self.open_model(BUNDLED_LABEL))
        self.recent_menu = file_menu.addMenu("&Recent models")
        self.download_action = file_menu.addAction("&Download model...", self.choose_download)
        file_menu.addSeparator()
        self.export_action = file_menu.addAction("&Export map...", self.export_map_dialog)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.setEnabled(False)
        file_menu.addSeparator()
        quit_action = file_menu.addAction("&Quit", self.close)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))

        map_menu = self.menuBar().addMenu("&Map")
        map_menu.addAction("&Load families file...", self.choose_families_file)
        map_menu.addAction("Use the &chapter's families", lambda: self.use_families(""))
        map_menu.addAction("&Save families as...", self.save_families_dialog)
        map_menu.addSeparator()
        multi = map_menu.addMenu("Words of several &tokens")
        self.multi_token_actions = {}
        for mode, label in (("average", "&Average their rows"), ("skip", "&Leave them off the map")):
            action = multi.addAction(label, lambda m=mode: self.set_multi_token(m))
            action.setCheckable(True)
            action.setChecked(self.settings.multi_token == mode)
            self.multi_token_actions[mode] = action
        map_menu.addSeparator()
        map_menu.addAction(self.export_action)

        view_menu = self.menuBar().addMenu("&View")
        focus = view_menu.addAction("Focus the &text", self.focus_input)
        focus.setShortcut(QKeySequence("Ctrl+L"))
        compare = view_menu.addAction("&Compare with another word", self.neighbours_pane.compare_input.setFocus)
        compare.setShortcut(QKeySequence("Ctrl+K"))
        copy_row = view_menu.addAction("Copy the selected &row", self.row_view.copy_row)
        copy_row.setShortcut(QKeySequence("Ctrl+Shift+C"))

        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction("How to &read the panes", self.show_reading_help)
        help_menu.addAction("&About EmbedExplorer", self.show_about)
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
        client = self.client
        client.load_progress.connect(self._on_load_progress)
        client.table_loaded.connect(self._on_table_loaded)
        client.tokens_ready.connect(self.token_pane.show_tokens)
        client.row_ready.connect(self.row_view.show_row)
        client.neighbours_ready.connect(self._on_neighbours_ready)
        client.cosine_ready.connect(self.neighbours_pane.show_cosine)
        client.map_ready.connect(self._on_map_ready)
        client.failed.connect(self._on_failed)
        self.token_pane.text_changed.connect(self._on_text_changed)
        self.token_pane.token_selected.connect(self._on_token_selected)
        self.neighbours_pane.k_changed.connect(self._on_k_changed)
        self.neighbours_pane.neighbour_activated.connect(self.token_pane.set_text)
        self.neighbours_pane.compare_requested.connect(self._on_compare_requested)
        self.map_view.hidden_changed.connect(self._on_hidden_changed)
        self.map_view.word_clicked.connect(self.token_pane.set_text)
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
        self.token_pane.input.blockSignals(True)
        self.token_pane.set_text(self.settings.text)
        self.token_pane.input.blockSignals(False)

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
        self.client.load_model(spec, allow_download)

    def _on_model_entered(self) -> None:
        self.open_model(self.model_box.currentText())

    def choose_model_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a model folder (config.json + safetensors)")
        if folder:
            self.open_model(folder)

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

    def _on_load_progress(self, done: int, total: int, message: str) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.progress.setFormat(f"{message} %p%")
        self.progress.show()

    def _on_table_loaded(self, loaded: Any) -> None:
        self.loaded = True
        self.model_name = loaded.name
        self.facts = loaded.facts
        self.progress.hide()
        facts = loaded.facts
        positions = f"{facts['position_rows']:,} position rows" if facts["position_rows"] else "no position table"
        self.facts_label.setText(
            f"{loaded.name}: {facts['rows']:,} rows x {facts['width']:,} = {facts['table_weights']:,} weights, "
            f"{facts['share']:.1%} of the model ({facts['model_weights']:,}); {positions}"
        )
        self.facts_label.setToolTip(loaded.summary)
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

    def _refresh_recent(self) -> None:
        recent = self.settings.recent_models
        if hasattr(self, "recent_menu"):
            self.recent_menu.clear()
            for spec in recent:
                self.recent_menu.addAction(spec, lambda s=spec: self.open_model(s))
            if recent:
                self.recent_menu.addSeparator()
                self.recent_menu.addAction("Clear the list", self._clear_recent)
            self.recent_menu.setEnabled(bool(recent))
        current = self.model_box.currentText()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        self.model_box.addItems(list(dict.fromkeys([*recent, BUNDLED_LABEL])))
        self.model_box.setEditText(current)
        self.model_box.blockSignals(False)

    def _clear_recent(self) -> None:
        self.settings.clear_recent_models()
        self._refresh_recent()

    # ----- tokens, rows, neighbours -------------------------------------------------------
    def focus_input(self) -> None:
        self.token_pane.input.setFocus()
        self.token_pane.input.selectAll()

    def _on_text_changed(self, text: str) -> None:
        self.settings.text = text
        if self.loaded:
            self.client.tokenize(text)

    def _on_token_selected(self, token_id: int, place: int, token: str) -> None:
        self._selected = (token_id, place, token)
        self.client.inspect(token_id, place)
        self.client.find_neighbours(token_id, self.neighbours_pane.k_box.value())
        other = self.neighbours_pane.compare_input.text()
        if other.strip():
            self.client.compare(token_id, other)

    def _on_k_changed(self, k: int) -> None:
        self.settings.k = k
        if self._selected:
            self.client.find_neighbours(self._selected[0], k)

    def _on_compare_requested(self, other: str) -> None:
        if self._selected:
            self.client.compare(self._selected[0], other)
        else:
            self.neighbours_pane.compare_result.setText("Select a token first.")

    def _on_neighbours_ready(self, result: Any) -> None:
        self.neighbours_pane.show_neighbours(result, [n["text"] for n in result.neighbours])
        self.map_view.show_selection(result.query["token"], result.map_query, result.map_neighbours)

    # ----- families -----------------------------------------------------------------------
    def _request_map(self) -> None:
        self.client.build_map(self._requested_families or None, self.settings.multi_token)

    def use_families(self, path: str) -> None:
        """Draw the map with another families file; the current one stays if that fails."""
        self._requested_families = path
        if self.loaded:
            self._request_map()

    def choose_families_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load a families file", self.families_file or str(Path.home()), "Families (*.json)"
        )
        if path:
            self.use_families(path)

    def set_multi_token(self, mode: str) -> None:
        self.settings.multi_token = mode
        for name, action in self.multi_token_actions.items():
            action.setChecked(name == mode)
        if self.loaded:
            self._request_map()

    def save_families_dialog(self) -> None:
        if self.family_map is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Save the families",
            str(Path(self.settings.export_dir or Path.home()) / "families.json"),
            "Families (*.json)",
        )
        if path:
            self.save_families(path)

    def save_families(self, path: str) -> bool:
        """Write the families on the map as a JSON file (atomically: never half a file)."""
        from ..core.errors import EmbedExplorerError
        from ..core.maps import save_families

        families: dict[str, list[str]] = {}
        for point in self.family_map.points:
            families.setdefault(point.family, []).append(point.word)
        try:
            save_families(families, path)
        except EmbedExplorerError as exc:  # says what failed and that the old file is unchanged
            self.message_bar.show_message(str(exc), "error")
            return False
        self.statusBar().showMessage(f"Families saved to {path}", 6000)
        return True

    def _on_map_ready(self, family_map: Any) -> None:
        self.family_map = family_map
        self.families_file = self._requested_families
        self.settings.families_file = self.families_file
        self.map_view.show_map(family_map, self.model_name)
        self.export_action.setEnabled(True)
        if self._selected:  # place the selection on the new map
            self.client.find_neighbours(self._selected[0], self.neighbours_pane.k_box.value())

    def _on_hidden_changed(self, hidden: set[str]) -> None:
        self.settings.hidden_families = sorted(hidden)

    def _on_failed(self, kind: str, message: str, error_type: str) -> None:
        if kind == "load":
            self.progress.hide()
            self.facts_label.setText(
                f"Still using {self.model_name}."
                if self.loaded
                else "No model open: open a folder or the bundled model."
            )
            action = None
            if error_type == "OfflineError" and not _hub_offline():
                spec = self._pending_model
                action = ("Download", lambda: self.open_model(spec, allow_download=True))
            elif not self.loaded:
                action = ("Open the bundled model", lambda: self.open_model(BUNDLED_LABEL))
            self.message_bar.show_message(f"Could not open the model. {message}", "error", action)
        elif kind == "tokens":
            self.token_pane.show_message(message)
        elif kind == "cosine":
            self.neighbours_pane.compare_result.setText(message)
        elif kind == "map":
            kept = "The map keeps the families it had." if self.family_map is not None else ""
            self._requested_families = self.families_file
            self.message_bar.show_message(f"The families could not be used. {message} {kept}".strip(), "error")
        else:
            self.message_bar.show_message(message, "error")

    # ----- export ------------------------------------------------------------------------
    def export_map_dialog(self) -> None:
        if not self.export_action.isEnabled():
            return
        start = Path(self.settings.export_dir or Path.home()) / "embedding-map.png"
        path, chosen = QFileDialog.getSaveFileName(
            self,
            "Export the map",
            str(start),
            "PNG image (*.png);;SVG drawing (*.svg)",
            options=QFileDialog.Option.DontConfirmOverwrite,  # we ask below, after the suffix is known
        )
        if not path:
            return
        if "svg" in chosen.lower() and not path.lower().endswith(".svg"):
            path += ".svg"
        elif not path.lower().endswith((".png", ".svg")):
            path += ".png"
        if Path(path).exists() and not self.confirm_overwrite(path):
            return
        width = self.settings.export_width
        if path.lower().endswith(".png"):
            width, ok = QInputDialog.getInt(self, "Export the map", "Width in pixels:", width, 200, 20000, 100)
            if not ok:
                return
            self.settings.export_width = width
        self.export_map(path, width)

    def confirm_overwrite(self, path: str) -> bool:
        answer = QMessageBox.question(
            self,
            "Replace the file?",
            f"{Path(path).name} already exists in {Path(path).parent}. Replace it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def export_map(self, path: str, width: int | None = None) -> bool:
        """Write the map; says what happened in the status bar or the message bar."""
        target = Path(path)
        try:
            if target.suffix.lower() == ".svg":
                self.map_view.canvas.export_svg(target)
            else:
                self.map_view.canvas.export_png(target, width or self.settings.export_width)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            self.message_bar.show_message(
                f"The map was not exported to {target}: {reason}. Nothing was overwritten; choose another folder.",
                "error",
            )
            return False
        self.settings.export_dir = str(target.parent)
        self.statusBar().showMessage(f"Map exported to {target}", 6000)
        return True

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

    def show_about(self) -> None:
        from .. import __version__

        QMessageBox.about(
            self,
            "About EmbedExplorer",
            f"<b>EmbedExplorer {__version__}</b><p>Look inside a language model's token embedding table."
            "</p><p>Weights are read only from safetensors files, and nothing is downloaded unless you ask.</p>",
        )

    # ----- window events ------------------------------------------------------------------
    def apply_palette(self) -> None:
        pg.setConfigOptions(antialias=True)
        self.map_view.canvas.apply_palette()
        self.row_view.apply_palette()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        if _dropped_folder(event.mimeData().urls()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        folder = _dropped_folder(event.mimeData().urls())
        if folder is not None:
            self.open_model(str(folder))
            event.acceptProposedAction()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(1360, 860)

    def save_settings(self) -> None:
        self.settings.set_geometry("window/geometry", self.saveGeometry())
        self.settings.set_geometry("window/splitter", self.splitter.saveState())
        self.settings.set_geometry("window/left", self.left.saveState())
        self.settings.text = self.token_pane.input.text()
        self.settings.sync()

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.save_settings()
        # A download cannot be interrupted: if the worker does not stop in time, app.main
        # ends the process once the window has gone, instead of waiting for the network.
        self.worker_stuck = not self.client.shutdown()
        super().closeEvent(event)


def _hub_offline() -> bool:
    """True when the user told huggingface_hub to stay offline: then we never offer a download."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _dropped_folder(urls: list[QUrl]) -> Path | None:
    for url in urls:
        if url.isLocalFile():
            path = Path(url.toLocalFile())
            return path if path.is_dir() else path.parent
    return None
