"""The map pane: the canvas, a family panel where one click hides or highlights a family,
a search box, the families in use (edited here, saved as a families file), bigger maps
(the whole vocabulary, words matching a pattern or a list; PCA, t-SNE or UMAP), and export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..core.common.constants import EXPORT_WIDTH_RANGE
from ..core.common.errors import EmbedExplorerError
from ..core.directions.direction import DirectionSpec
from ..core.maps.family_map import Families, FamilyMap, load_families, save_families
from ..core.maps.points_export import write_points
from ..core.maps.projections import METHOD_NAMES, METHODS, check_method
from ..core.maps.web_page import write_map_page
from ..core.maps.word_maps import WordMap
from ..errorlog import app_data_dir
from ..jobs.map_jobs import WordMapRequest
from ..map_pictures import png_texts, write_svg
from ..settings import Settings
from . import theme
from .axes_dialog import DEFAULT_X_PAIRS, DEFAULT_Y_PAIRS, AxesDialog
from .family_editor import FamilyEditor, swatch
from .map_canvas import MapCanvas
from .steady_label import SteadyLabel

# Where families edited in the window are kept (and remembered as the families file in use).
EDITED_FAMILIES_FILE = "my-families.json"

FAMILY_PANEL_WIDTH = 140
# The map's least height: a plot still (its caption shortens to one line), and room on a 1024x640
# laptop's screen in presentation mode under a title bar.
MIN_CANVAS_HEIGHT = 180


class FamilyPanel(QGroupBox):
    """One row per family: a checkbox shows or hides it, its name button highlights it."""

    hidden_changed = Signal(set)
    highlight_changed = Signal(object)  # family name or None
    families_set = Signal()  # new rows: the pane puts them in its Tab order

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Families", parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(6, 6, 6, 6)
        self._grid.setVerticalSpacing(2)
        self.visibility: dict[str, QCheckBox] = {}
        self.highlight_buttons: dict[str, QPushButton] = {}
        self.hint = SteadyLabel(
            5,
            "Tick to show, click a name to highlight. "
            "\u2605 star: the selected token; \u25cb rings: its nearest rows.",
        )
        self.hint.setObjectName("hint")
        self._grid.addWidget(self.hint, 0, 0, 1, 2)
        # As wide before the map arrives as after, so the map beside it keeps its size.
        self.setMinimumWidth(FAMILY_PANEL_WIDTH)

    def set_families(self, families: list[str], hidden: set[str]) -> None:
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None and widget is not self.hint:
                widget.deleteLater()
        self.visibility.clear()
        self.highlight_buttons.clear()
        for row, family in enumerate(families):
            show = QCheckBox()
            show.setChecked(family not in hidden)
            show.setToolTip(f"Show or hide the {family}")
            show.setAccessibleName(f"show {family}")
            show.toggled.connect(lambda _on: self.hidden_changed.emit(self.hidden()))
            # A box without text draws no focus of its own: a frame in the focus colour does.
            show.setStyleSheet(
                "QCheckBox { border: 2px solid transparent; border-radius: 3px; padding: 0px; }"
                "QCheckBox:focus { border: 2px solid palette(highlight); }"
            )
            button = QPushButton(swatch(theme.family_colour(row)), family)
            button.setCheckable(True)
            button.setFlat(True)
            # A flat button shows no focus of its own under a style sheet: a frame in the focus colour does.
            button.setStyleSheet(
                "QPushButton { text-align: left; padding: 2px 4px; border: 2px solid transparent; }"
                "QPushButton:focus { border: 2px solid palette(highlight); border-radius: 3px; }"
            )
            button.setToolTip(f"Highlight the {family} on the map (click again to stop)")
            button.clicked.connect(lambda checked, f=family: self._on_highlight(f, checked))
            for styled in (show, button):
                styled.setFont(self.font())  # as large as the panel's type, which a style sheet would not follow
            self._grid.addWidget(show, row, 0)
            self._grid.addWidget(button, row, 1)
            self.visibility[family] = show
            self.highlight_buttons[family] = button
        self._grid.addWidget(self.hint, len(families), 0, 1, 2)
        self.families_set.emit()  # new widgets join the end of the Tab order: the pane puts them in place

    def hidden(self) -> set[str]:
        return {family for family, box in self.visibility.items() if not box.isChecked()}

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            # Rows with a style sheet keep their font: they are told (presentation's larger type).
            for widget in (*self.visibility.values(), *self.highlight_buttons.values()):
                widget.setFont(self.font())

    def _on_highlight(self, family: str, checked: bool) -> None:
        for name, button in self.highlight_buttons.items():
            if name != family:
                button.setChecked(False)
        self.highlight_changed.emit(family if checked else None)


class PanelScroll(QScrollArea):
    """The family panel, scrolling when the map is shorter than the panel; as wide as it, never cut."""

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.setWidget(panel)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the families in it, not to the frame
        # A new set of families changes the panel's height: the map pane's layout must hear of it.
        panel.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)

    def _bar(self) -> int:
        return self.verticalScrollBar().sizeHint().width()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        panel = self.widget()
        hint = panel.sizeHint() if panel is not None else QSize(0, 0)
        return QSize(hint.width() + self._bar(), hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        panel = self.widget()
        width = max(panel.minimumWidth(), panel.minimumSizeHint().width()) if panel is not None else 0
        return QSize(width + self._bar(), 4 * self.fontMetrics().height())


class WordsDialog(QDialog):
    """Map > Words matching...: a regular expression, or a list of words pasted one a line."""

    def __init__(self, pattern: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Words matching")
        self.regex_choice = QRadioButton("Tokens whose text matches a &regular expression")
        self.list_choice = QRadioButton("A &list of words, one a line (a leading space is part of the word)")
        self.regex_choice.setChecked(True)
        self.pattern = QLineEdit(pattern)
        self.pattern.setPlaceholderText(r"e.g. ^ [A-Z][a-z]+$  (GPT-2: capitalised words after a space)")
        self.listing = QPlainTextEdit()
        self.listing.setPlaceholderText(" Paris\n London\n Tokyo")
        self.regex_choice.toggled.connect(self._on_choice)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (self.regex_choice, self.pattern, self.list_choice, self.listing, box):
            layout.addWidget(widget)
        self._on_choice(True)
        self.pattern.selectAll()  # typed over at once: the dialog opens to type a pattern

    def _on_choice(self, regex: bool) -> None:
        self.pattern.setEnabled(regex)
        self.listing.setEnabled(not regex)
        (self.pattern if regex else self.listing).setFocus()

    def request(self) -> tuple[str, str]:
        """("regex", pattern) or ("list", text)."""
        if self.regex_choice.isChecked():
            return "regex", self.pattern.text()
        return "list", self.listing.toPlainText()


class MapView(QWidget):
    """The map and what belongs to it: families, bigger maps, search, and export.

    The window asks for a family map when ``families_requested`` fires and for a bigger
    map when ``word_map_requested`` does, and hands either answer to ``show_map``;
    messages for the user leave through ``message`` and ``status``.
    """

    hidden_changed = Signal(set)
    word_clicked = Signal(str)
    families_requested = Signal(str)  # a families file, or "" for the chapter's families
    word_map_requested = Signal(object)  # a WordMapRequest
    word_map_cancelled = Signal()
    message = Signal(str, str)  # text, level ("error", "warning", "info")
    status = Signal(str)  # a passing note for the status bar

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.family_map: FamilyMap | WordMap | None = None
        self.model_name = ""
        self.families_file = settings.families_file  # "" means the chapter's families
        self._requested_file = self.families_file
        self.projection = "pca"
        self._words: tuple[str, str] | None = None  # the bigger map on screen: ("all"|"regex"|"list", text)
        self._pending: WordMapRequest | None = None
        self._axes: tuple[DirectionSpec, DirectionSpec] | None = None  # the map on screen is on two directions
        self._axes_typed = (DEFAULT_X_PAIRS, DEFAULT_Y_PAIRS)  # what the axes dialog shows next
        self.canvas = MapCanvas()
        self.canvas.setMinimumSize(360, MIN_CANVAS_HEIGHT)
        self.panel = FamilyPanel()
        self.notes = SteadyLabel(2)
        self.notes.setObjectName("hint")
        self.notes.hide()
        self._hidden = set(settings.hidden_families)
        self.panel.hidden_changed.connect(self._on_hidden_changed)
        self.panel.highlight_changed.connect(self.canvas.set_highlight)
        self.panel.families_set.connect(self._chain_families)
        self.canvas.point_clicked.connect(self.word_clicked)

        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Find on the map (Enter: next)")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setAccessibleName("find on the map")
        self.search_box.textChanged.connect(self._on_search_changed)
        self.search_box.returnPressed.connect(self.next_match)
        self.search_count = QLabel("")
        self.search_count.setObjectName("hint")
        self.isolate_button = QPushButton("Show the &k nearest")
        self.isolate_button.setCheckable(True)
        self.isolate_button.setToolTip("Show only the selected token (star) and its nearest rows (rings)")
        self.isolate_button.toggled.connect(self._on_isolate)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop computing the new map; the one on screen stays")
        self.stop_button.clicked.connect(self.cancel_word_map)
        self.stop_button.hide()
        finder = QHBoxLayout()
        finder.addWidget(self.search_box, 1)
        finder.addWidget(self.search_count)
        finder.addWidget(self.isolate_button)
        finder.addWidget(self.stop_button)

        # The panel scrolls rather than holding the map's height up on a short screen (1024x640,
        # presentation mode's larger type).
        self.panel_scroll = PanelScroll(self.panel)
        side = QVBoxLayout()
        side.addWidget(self.panel_scroll)
        side.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.canvas, 1)
        top.addLayout(side)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(finder)
        layout.addLayout(top, 1)
        layout.addWidget(self.notes)

        # File menu entries the window places; usable once a map is on screen.
        self.page_action = QAction("Export map as &web page...", self)
        self.page_action.setToolTip("One HTML file that opens offline in any browser: zoom, pan, find, hover tips")
        self.page_action.triggered.connect(self.export_page_dialog)
        self.points_action = QAction("Export &points (CSV or JSON)...", self)
        self.points_action.triggered.connect(self.export_points_dialog)
        self.export_actions = (self.page_action, self.points_action)
        for action in self.export_actions:
            action.setEnabled(False)

    def _chain_families(self) -> None:
        """Tab from the map's buttons into the family rows, each box then its name, then on as before."""
        panel = self.panel
        chain: list[QWidget] = [self.isolate_button]
        chain += [w for family in panel.visibility for w in (panel.visibility[family], panel.highlight_buttons[family])]
        for first, second in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(first, second)

    # ----- the map ------------------------------------------------------------------------
    @property
    def requested_families(self) -> str:
        """The families file the next map should use ("" for the chapter's)."""
        return self._requested_file

    def show_map(self, the_map: FamilyMap | WordMap, model_name: str) -> None:
        """Draw a family map or a bigger map; the search and the isolation start afresh."""
        self.family_map, self.model_name = the_map, model_name
        self.families_file = self._requested_file
        self.settings.families_file = self.families_file
        if isinstance(the_map, WordMap):
            self._words = (self._pending.words, self._pending.text) if self._pending else self._words
            self._axes = self._pending.axes if self._pending else self._axes
            if the_map.method in METHODS:  # a map on two directions keeps the projection chosen before
                self.projection = the_map.method
            families = list(the_map.families)
            notes = list(the_map.notes)
            if the_map.from_cache:
                notes.insert(0, f"This {the_map.layout.name} map was read from the cache.")
        else:
            self._words = None
            self._axes = None
            self.projection = "pca"
            families, notes = the_map.families, list(the_map.notes)
        self._pending = None
        self.stop_button.hide()
        self.isolate_button.setChecked(False)
        self.canvas.set_map(the_map, model_name, self._hidden)
        self.panel.set_families(families, self._hidden)
        for action in self.export_actions:
            action.setEnabled(True)
        self.notes.setText(" ".join(notes))
        self.notes.setVisible(bool(notes))  # two empty lines would take the map's room on a short screen
        if self.search_box.text():
            self._on_search_changed(self.search_box.text())

    def map_failed(self, message: str) -> None:
        """A requested map could not be drawn: keep the one on screen and say why."""
        big = self._pending is not None
        self._requested_file = self.families_file
        self._pending = None
        self.stop_button.hide()
        if big:
            kept = "The map on screen stays." if self.family_map is not None else ""
            self.message.emit(f"The map could not be drawn. {message} {kept}".strip(), "error")
            return
        kept = "The map keeps the families it had." if self.family_map is not None else ""
        self.message.emit(f"The families could not be used. {message} {kept}".strip(), "error")

    @property
    def big_map(self) -> bool:
        """True when the map on screen is the whole vocabulary or a chosen set of rows."""
        return self._words is not None

    def current_families(self) -> Families:
        """The families of the map on screen (or of the families file in use)."""
        if isinstance(self.family_map, FamilyMap):
            families: Families = {}
            for point in self.family_map.points:
                families.setdefault(point.family, []).append(point.word)
            return families
        try:
            return load_families(self.families_file or None)
        except EmbedExplorerError:
            return load_families()

    # ----- bigger maps ----------------------------------------------------------------------------
    def request_word_map(
        self,
        words: str,
        text: str = "",
        method: str | None = None,
        axes: tuple[DirectionSpec, DirectionSpec] | None = None,
    ) -> WordMapRequest | None:
        """Ask for a map of "all" rows, a "regex" or a "list" (on two directions with ``axes``);
        None (and a message) when it cannot be."""
        method = method or self.projection
        try:
            check_method(method)
        except EmbedExplorerError as exc:
            self.message.emit(str(exc), "error")
            return None
        request = WordMapRequest(
            words, text, self._requested_file or None, method, self.settings.multi_token, axes=axes
        )
        self._pending = request
        self.stop_button.setVisible(method != "pca" and axes is None)
        self.word_map_requested.emit(request)
        return request

    def ask_words(self) -> None:
        """Map > Words matching...: ask for a pattern or a list, then for its map."""
        shown = self._words[1] if self._words and self._words[0] == "regex" else ""
        dialog = WordsDialog(shown, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.request_word_map(*dialog.request())

    def ask_axes(self) -> None:
        """Map > Axes from directions: ask for the pairs of each axis, then for the map."""
        dialog = AxesDialog(*self._axes_typed, parent=self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self._axes_typed = (dialog.x_box.text(), dialog.y_box.text())
            self.request_axes(*dialog.specs())

    def request_axes(self, x: DirectionSpec, y: DirectionSpec) -> WordMapRequest | None:
        """Map > Axes from directions: the words on screen (the family words, the whole vocabulary,
        matching words or a list) placed at their cosines with ``x`` and ``y``."""
        if self._words is not None:
            words, text = self._words
        else:
            families = self.current_families()
            words, text = "list", "\n".join(w for group in families.values() for w in group)
        request = self.request_word_map(words, text, axes=(x, y))
        if request is not None:
            self.status.emit(f"Placing the words on {x.label} and {y.label}...")
        return request

    @property
    def axes(self) -> tuple[DirectionSpec, DirectionSpec] | None:
        """The two directions of the map on screen, or None for a projection."""
        return self._axes

    def set_projection(self, method: str) -> None:
        """PCA, t-SNE or UMAP for the bigger map on screen (the family map is always PCA)."""
        if method == self.projection and self.big_map and self._axes is None:
            return
        if not self.big_map:
            if method == "pca":
                self.projection = method
                return
            words: tuple[str, str] = ("all", "")
        else:
            assert self._words is not None
            words = self._words
        if self.request_word_map(*words, method=method) is not None:
            self.status.emit(f"Computing the {METHOD_NAMES[method]} map of {self._describe(words)}...")

    @staticmethod
    def _describe(words: tuple[str, str]) -> str:
        return {"all": "the whole vocabulary", "regex": f"rows matching /{words[1]}/"}.get(words[0], "your list")

    def show_family_map(self) -> None:
        """Back to the family words alone."""
        self.families_requested.emit(self._requested_file)

    def cancel_word_map(self) -> None:
        """Stop a map being computed; the map on screen stays."""
        if self._pending is None:
            return
        self._pending = None
        self.stop_button.hide()
        self.word_map_cancelled.emit()
        self.status.emit("The new map was stopped; the map on screen stays.")

    @property
    def computing(self) -> bool:
        return self._pending is not None

    # ----- finding things -------------------------------------------------------------------------
    def _on_search_changed(self, text: str) -> None:
        count = self.canvas.search(text)
        self.search_count.setText(f"{count:,} found" if text.strip() else "")

    def next_match(self) -> None:
        label = self.canvas.next_match()
        if label:
            total = len(self.canvas.matches)
            self.search_count.setText(f"{self.canvas._current + 1:,} of {total:,}: {label}")

    def _on_isolate(self, on: bool) -> None:
        if on and not self.canvas.isolate(True):
            self.isolate_button.setChecked(False)
            self.status.emit("Select a token first: its nearest rows are shown around it.")
        elif not on:
            self.canvas.isolate(False)

    def set_labels_visible(self, on: bool) -> None:
        self.canvas.set_labels_visible(on)

    def set_marker_scale(self, scale: float) -> None:
        """Presentation mode: the map's markers and text ``scale`` times their size, this map and the next."""
        self.canvas.set_marker_scale(scale)
        # The family panel's larger type needs a wider column, or its hint is cut.
        self.panel.setMinimumWidth(round(FAMILY_PANEL_WIDTH * scale))
        self.panel_scroll.updateGeometry()

    def reset_view(self) -> None:
        self.canvas.reset_view()

    def focus_search(self) -> None:
        """Put the cursor in the map's search box, its text selected."""
        self.search_box.setFocus()
        self.search_box.selectAll()

    def show_selection(
        self,
        token: str,
        at: tuple[float, float] | None,
        neighbours: tuple[tuple[float, float] | None, ...],
        names: tuple[str, ...] = (),
    ) -> None:
        self.canvas.set_selection(token, at, list(neighbours), names)

    def clear_selection(self) -> None:
        self.canvas.clear_selection()
        self.isolate_button.setChecked(False)

    @property
    def can_export(self) -> bool:
        return self.family_map is not None

    def set_hidden_families(self, hidden: set[str]) -> None:
        """Hide these families (a lesson's); the panel's boxes follow."""
        if self.family_map is not None:
            self.panel.set_families(list(self.family_map.families), set(hidden))
        self._on_hidden_changed(set(hidden))

    def _on_hidden_changed(self, hidden: set[str]) -> None:
        self._hidden = set(hidden)
        self.settings.hidden_families = sorted(hidden)
        self.canvas.set_hidden(self._hidden)
        self.hidden_changed.emit(self._hidden)

    # ----- editing the families -------------------------------------------------------------------
    def edit_families(self) -> None:
        """Map > Edit families...: change them in a dialog, then save, remember and redraw."""
        editor = FamilyEditor(self.current_families(), self)
        if editor.exec() == QDialog.DialogCode.Accepted:
            self.apply_edited_families(editor.families())

    def apply_edited_families(self, families: Families, path: str | Path | None = None) -> bool:
        """Save ``families`` as a families file (remembered as the one in use) and redraw the map."""
        target = Path(path) if path else app_data_dir() / EDITED_FAMILIES_FILE
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            save_families(families, target)
        except (EmbedExplorerError, OSError) as exc:
            self.message.emit(str(exc), "error")
            return False
        self.status.emit(f"Families saved to {target}")
        self._requested_file = str(target)
        if self.big_map and self._words is not None:
            self.request_word_map(*self._words)
        else:
            self.families_requested.emit(str(target))
        return True

    # ----- families files ------------------------------------------------------------------
    def use_families(self, path: str) -> None:
        """Ask for a map with another families file; the current one stays if that fails."""
        self._requested_file = path
        self.families_requested.emit(path)

    def choose_families_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load a families file", self.families_file or str(Path.home()), "Families (*.json)"
        )
        if path:
            self.use_families(path)

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
        if self.family_map is None:
            return False
        families = self.current_families()
        try:
            save_families(families, path)
        except EmbedExplorerError as exc:  # says what failed and that the old file is unchanged
            self.message.emit(str(exc), "error")
            return False
        self.status.emit(f"Families saved to {path}")
        return True

    # ----- export ----------------------------------------------------------------------------
    def export_dialog(self) -> None:
        if not self.can_export:
            return
        start = Path(self.settings.export_dir or Path.home()) / "embedding-map.png"
        path, chosen = QFileDialog.getSaveFileName(
            self,
            "Export the map",
            str(start),
            "PNG image (*.png);;SVG drawing (*.svg)",
            options=QFileDialog.Option.DontConfirmOverwrite,  # asked below, once the suffix is known
        )
        if not path:
            return
        if "svg" in chosen.lower() and not path.lower().endswith(".svg"):
            path += ".svg"
        elif not path.lower().endswith((".png", ".svg")):
            path += ".png"
        if Path(path).exists() and not self._confirm_overwrite(path):
            return
        width = self.settings.export_width
        if path.lower().endswith(".png"):
            width, ok = QInputDialog.getInt(self, "Export the map", "Width in pixels:", width, *EXPORT_WIDTH_RANGE, 100)
            if not ok:
                return
            self.settings.export_width = width
        self.export_to(path, width)

    def _confirm_overwrite(self, path: str) -> bool:
        answer = QMessageBox.question(
            self,
            "Replace the file?",
            f"{Path(path).name} already exists in {Path(path).parent}. Replace it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def export_to(self, path: str, width: int | None = None) -> bool:
        """Write the map as PNG or SVG (by suffix); says what happened through ``status``/``message``."""
        target = Path(path)
        try:
            if target.suffix.lower() == ".svg":
                write_svg(self.canvas, target)
            else:
                self.canvas.export_png(target, width or self.settings.export_width, png_texts(self.canvas))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            self.message.emit(
                f"The map was not exported to {target}: {reason}. Nothing was overwritten; choose another folder.",
                "error",
            )
            return False
        self.settings.export_dir = str(target.parent)
        self.status.emit(f"Map exported to {target}")
        return True

    def export_page_dialog(self) -> None:
        """File > Export map as web page...: ask where, then write the page."""
        path = self._ask_target("Export the map as a web page", "embedding-map.html", "Web page (*.html)", (".html",))
        if path:
            self.export_page_to(path)

    def export_page_to(self, path: str) -> bool:
        """Write the map on screen (its hidden families hidden) as one self-contained web page."""
        shown = self.family_map
        if shown is None:
            return False
        change = self.canvas.change  # the colours by change, when the map shows them
        return self._write(
            path, "map", lambda: write_map_page(path, shown, self.model_name, self._hidden, change=change)
        )

    def export_points_dialog(self) -> None:
        """File > Export points...: the points as CSV or JSON, by the chosen kind."""
        path = self._ask_target(
            "Export the map's points", "embedding-points.csv", "CSV table (*.csv);;JSON (*.json)", (".csv", ".json")
        )
        if path:
            self.export_points_to(path)

    def export_points_to(self, path: str) -> bool:
        """Write every point (token, id, family, x, y): CSV for a ``.csv`` name, JSON otherwise."""
        shown = self.family_map
        if shown is None:
            return False
        return self._write(path, "points", lambda: write_points(path, shown, self.model_name))

    def _ask_target(self, title: str, name: str, kinds: str, suffixes: tuple[str, ...]) -> str:
        """A file name from the save dialog, ending in one of ``suffixes`` (the chosen kind's when it
        ends in none); "" when cancelled or when the user keeps the file already there."""
        if not self.can_export:
            return ""
        start = Path(self.settings.export_dir or Path.home()) / name
        path, chosen = QFileDialog.getSaveFileName(
            self, title, str(start), kinds, options=QFileDialog.Option.DontConfirmOverwrite
        )
        if not path:
            return ""
        if Path(path).suffix.lower() not in suffixes:
            path += next((s for s in suffixes if s[1:] in chosen.lower()), suffixes[0])
        if Path(path).exists() and not self._confirm_overwrite(path):
            return ""
        return path

    def _write(self, path: str, what: str, write: Callable[[], None]) -> bool:
        target = Path(path)
        try:
            write()
        except OSError as exc:
            self.message.emit(
                f"The {what} was not exported to {target}: {exc.strerror or exc}. Nothing was overwritten; "
                "choose another folder.",
                "error",
            )
            return False
        except EmbedExplorerError as exc:
            self.message.emit(f"{exc} Nothing was overwritten; choose another folder.", "error")
            return False
        self.settings.export_dir = str(target.parent)
        self.status.emit(f"{what.capitalize()} exported to {target}")
        return True
