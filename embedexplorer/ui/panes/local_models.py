"""File > Local models...: the models on this computer in a searchable list, and the Model box's completions.

The list comes from the worker (``LOCAL_MODELS``), never from the GUI thread: a slow
disk or a network home folder cannot freeze the window.  A model whose file is gone is
shown greyed with what is missing, and cannot be opened from here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, QSortFilterProxyModel, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...core.common.files import size_text
from ...core.sources.local_model import LocalModel
from ...jobs.source_jobs import LOCAL_MODELS, LocalModelsAnswer, LocalModelsRequest
from ...settings import Settings
from ...worker import Failure, WorkerClient
from ..window.plugging import PaneContext, Place

COLUMNS = ("Name", "Kind", "Size", "Storage", "Where")
SOURCES = {
    "bundled": "Bundled with EmbedExplorer", "hf-cache": "Hugging Face cache", "ollama": "Ollama",
    "lmstudio": "LM Studio", "recent": "Recent",
}
SPEC_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2  # names without regard to case, sizes as numbers


def kind_text(model: LocalModel) -> str:
    source = SOURCES.get(model.kind, model.kind)
    return f"{source}, {model.file_format}" if model.file_format else source


class LocalModelsDialog(QDialog):
    """The list: type to search, Enter or double-click opens the model; ``chosen`` carries its spec."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Local models")
        self.resize(980, 520)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search by name, kind, storage or folder; Enter opens the first match")
        self.search.setClearButtonEnabled(True)
        self.status = QLabel("Looking for models...")
        self.items = QStandardItemModel(0, len(COLUMNS), self)
        self.items.setHorizontalHeaderLabels(list(COLUMNS))
        self.shown = QSortFilterProxyModel(self)
        self.shown.setSourceModel(self.items)
        self.shown.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.shown.setFilterKeyColumn(-1)  # every column
        self.shown.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.shown)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a folder's start and its file name both matter
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Close)
        self.open_button = buttons.button(QDialogButtonBox.StandardButton.Open)
        self.open_button.setEnabled(False)
        buttons.accepted.connect(self.open_selected)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.search.textChanged.connect(self._filter)
        self.search.returnPressed.connect(self.open_selected)
        self.table.doubleClicked.connect(lambda _index: self.open_selected())
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._update_open_button())
        self.search.setFocus()

    def show_models(self, models: Sequence[LocalModel]) -> None:
        self.items.removeRows(0, self.items.rowCount())
        for model in models:
            where = f"missing: {model.missing} ({model.location})" if model.missing else model.location
            size = size_text(model.size_bytes) if model.size_bytes else ""
            cells = [model.name, kind_text(model), size, model.storage, where]
            row = [QStandardItem(text) for text in cells]
            keys = [model.name.lower(), cells[1], model.size_bytes, model.storage, where]
            for item, key in zip(row, keys, strict=True):
                item.setData(key, SORT_ROLE)
            for item in row:
                item.setData("" if model.missing else model.spec, SPEC_ROLE)
                item.setToolTip(f"{model.spec}\n{where}")
                if model.missing:
                    item.setFlags(Qt.ItemFlag.ItemIsEnabled)  # shown, not selectable, not offered
                    item.setForeground(self.palette().placeholderText())
            self.items.appendRow(row)
        self._filter(self.search.text())
        missing = sum(1 for model in models if model.missing)
        self.status.setText(
            f"{len(models)} models found" + (f"; {missing} with missing files (greyed)" if missing else "")
            if models
            else "No models found in the Hugging Face cache, Ollama's or LM Studio's folders, or the recent files."
        )

    def show_failure(self, message: str) -> None:
        self.status.setText(message)

    def spec_at(self, row: int) -> str:
        return str(self.shown.index(row, 0).data(SPEC_ROLE) or "")

    def open_selected(self) -> None:
        """Open the selected model, or else the first one shown that can be opened."""
        current = self.table.selectionModel().currentIndex()
        rows = [current.row()] if current.isValid() else []
        rows += list(range(self.shown.rowCount()))
        spec = next((self.spec_at(row) for row in rows if self.spec_at(row)), "")
        if spec:
            self.chosen.emit(spec)
            self.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.table.hasFocus():
            self.open_selected()
            return
        if event.key() == Qt.Key.Key_Down and self.search.hasFocus():
            self.table.setFocus()
            self._select_first()
            return
        super().keyPressEvent(event)

    def _filter(self, text: str) -> None:
        self.shown.setFilterFixedString(text.strip())
        self._select_first()

    def _select_first(self) -> None:
        for row in range(self.shown.rowCount()):
            if self.spec_at(row):
                self.table.selectRow(row)
                break
        else:
            self.table.clearSelection()
        self._update_open_button()

    def _update_open_button(self) -> None:
        current = self.table.selectionModel().currentIndex()
        self.open_button.setEnabled(current.isValid() and bool(self.spec_at(current.row())))


class LocalModels(QObject):
    """File > Local models...: the dialog, fed by the worker's listing; a model chosen there opens."""

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Local models"
    PLACE = Place.NOWHERE  # a dialog, opened from File > Local models...
    MENUS = ("&File",)  # first in the pane list: its File entry follows the ways to open a model

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.dialog: LocalModelsDialog | None = None

    def bind(self, ctx: PaneContext) -> None:
        self.setParent(ctx.shell.window_widget())
        self.client, self.settings, self.shell, self.state = ctx.client, ctx.settings, ctx.shell, ctx.state
        ctx.shell.menu("&File").addAction("Local &models...").triggered.connect(self.show_dialog)
        ctx.client.channel(LOCAL_MODELS, self).ready.connect(self._on_listed)
        ctx.client.channel(LOCAL_MODELS, self).failed.connect(self._on_failed)

    def show_dialog(self) -> LocalModelsDialog:
        if self.dialog is None:
            self.dialog = LocalModelsDialog(self.shell.window_widget())
            self.dialog.chosen.connect(self.shell.open_model)
        self.dialog.search.clear()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        request_listing(self.client, self.settings, self)
        return self.dialog

    def _on_listed(self, answer: LocalModelsAnswer) -> None:
        self.state.update(local_models=openable(answer))
        if self.dialog is not None:
            self.dialog.show_models(answer.models)

    def _on_failed(self, failure: Failure) -> None:
        if self.dialog is not None:
            self.dialog.show_failure(failure.message)


def request_listing(client: WorkerClient, settings: Settings, owner: object) -> None:
    client.ask(LOCAL_MODELS, LocalModelsRequest(tuple(settings.recent_models)), owner)


def openable(answer: LocalModelsAnswer) -> tuple[str, ...]:
    """The specs of the listed models that can be opened (their files are all there)."""
    return tuple(model.spec for model in answer.models if not model.missing)


def complete_from_local_models(box: QComboBox, ctx: PaneContext) -> None:
    """The Model box completes (any part of a name, any case) from the recent models and the models listed here.

    It asks for the listing once, when the event loop turns after the box's first paint (the
    window's first frame: the listing reads folders and imports the engine in the worker, which
    would compete with the window being built and drawn for Python's lock), and follows the
    state's ``local_models`` after (File > Local models lists them again).
    """
    client, settings, state = ctx.client, ctx.settings, ctx.state
    specs = QStringListModel(box)
    completer = QCompleter(specs, box)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    completer.setFilterMode(Qt.MatchFlag.MatchContains)
    box.setCompleter(completer)

    def on_local_models_changed(found: tuple[str, ...]) -> None:
        specs.setStringList(list(dict.fromkeys([*settings.recent_models, *found])))

    state.watch("local_models", on_local_models_changed)
    client.channel(LOCAL_MODELS, box).ready.connect(lambda answer: state.update(local_models=openable(answer)))
    _AfterFirstPaint(box, lambda: request_listing(client, settings, box))


class _AfterFirstPaint(QObject):
    """Calls ``then`` once, when the event loop turns after ``widget``'s first paint; then it is gone."""

    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._widget, self._then = widget, then
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self._widget.removeEventFilter(self)
            QTimer.singleShot(0, self._widget, self._then)
            self.deleteLater()
        return False
