"""The map view: the canvas, a family panel where one click hides or highlights a family,
a search box, the families in use (edited here, saved as a families file), and bigger maps
(the whole vocabulary, words matching a pattern or a list; PCA, t-SNE or UMAP).

The map pane (``pane.py``) holds one, asks the worker for its maps and hands them to ``show_map``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QBoxLayout,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.common.constants import METHOD_NAMES, METHODS
from ...core.common.errors import EmbedExplorerError
from ...core.directions.spec import DirectionSpec
from ...errorlog import app_data_dir
from ...jobs.map_jobs import WordMapRequest
from ...settings import Settings
from ..widgets.bring_forward import bring_forward
from ..widgets.steady_label import SteadyLabel
from .axes_dialog import DEFAULT_X_PAIRS, DEFAULT_Y_PAIRS, AxesDialog
from .canvas import MapCanvas
from .colour_key import ColourKey
from .family_editor import FamilyEditor
from .family_panel import FAMILY_PANEL_WIDTH, FamilyPanel, PanelScroll
from .words_dialog import WordsDialog

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.map_change import MapChange
    from ...core.maps.family_map import Families, FamilyMap
    from ...core.maps.word_maps import WordMap

# Where families edited in the window are kept (and remembered as the families file in use).
EDITED_FAMILIES_FILE = "my-families.json"

FIND_HINT = "Find on the map (Enter: next)"

# The map's least height: a plot still (its caption shortens to one line), and room on a 1024x640
# laptop's screen in presentation mode under a title bar.
MIN_CANVAS_HEIGHT = 180


class MapView(QWidget):
    """The map and what belongs to it: families, bigger maps, search (files: ``exports.py``).

    The pane asks for a family map when ``families_requested`` fires and for a bigger
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
        # The bigger map on screen: ("all"|"regex"|"list"|"families", text); "families": the family words by
        # t-SNE, UMAP or on two directions.
        self._words: tuple[str, str] | None = None
        self._pending: WordMapRequest | None = None
        self._axes: tuple[DirectionSpec, DirectionSpec] | None = None  # the map on screen is on two directions
        self._axes_typed = (DEFAULT_X_PAIRS, DEFAULT_Y_PAIRS)  # what the axes dialog shows next
        self.canvas = MapCanvas()
        self.canvas.setMinimumSize(360, MIN_CANVAS_HEIGHT)
        self.panel = FamilyPanel()
        self.colour_key = ColourKey()  # what the colours mean while a scale fills the dots
        self.canvas.colouring_changed.connect(self._on_colouring_changed)
        self.notes = SteadyLabel(2)
        self.notes.setObjectName("hint")
        self.notes.hide()
        self._hidden = set(settings.hidden_families)
        self.panel.hidden_changed.connect(self._on_hidden_changed)
        self.panel.highlight_changed.connect(self.canvas.set_highlight)
        self.panel.families_set.connect(self._chain_families)
        self.canvas.point_clicked.connect(self.word_clicked)

        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText(FIND_HINT)
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setAccessibleName("find on the map")
        self.search_box.textChanged.connect(self._on_search_changed)
        self.search_box.returnPressed.connect(self.next_match)
        self.search_count = QLabel("")
        self.search_count.setObjectName("hint")
        self.search_count.hide()
        self.isolate_button = QPushButton("Show the &k nearest")
        self.isolate_button.setCheckable(True)
        self.isolate_button.setToolTip("Show only the selected token (star) and its nearest rows (rings)")
        self.isolate_button.toggled.connect(self._on_isolate)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop computing the new map; the one on screen stays")
        self.stop_button.clicked.connect(self.cancel_word_map)
        self.stop_button.hide()
        # Above the map; in presentation mode beside it, over the families, so the map is taller.
        self.finder_box = QWidget()
        self._finder = QBoxLayout(QBoxLayout.Direction.LeftToRight, self.finder_box)
        self._finder.setContentsMargins(0, 0, 0, 0)
        self._finder.addWidget(self.search_box, 1)
        self._finder.addWidget(self.search_count)
        self._finder.addWidget(self.isolate_button)
        self._finder.addWidget(self.stop_button)

        # The panel scrolls rather than holding the map's height up on a short screen (1024x640,
        # presentation mode's larger type).
        self.panel_scroll = PanelScroll(self.panel)
        self._side = side = QVBoxLayout()
        side.addWidget(self.colour_key)
        side.addWidget(self.panel_scroll)
        side.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.canvas, 1)
        top.addLayout(side)
        self._layout = layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.finder_box)
        layout.addLayout(top, 1)
        layout.addWidget(self.notes)


    def _on_colouring_changed(self, change: MapChange | None) -> None:
        """The key says what the dots' colours are: the scale's, or (None) the families' again."""
        self.colour_key.show_change(change)
        self.panel.show_family_colours(change is None)

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
        from ...core.maps.word_maps import WordMap

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
        from ...core.maps.family_map import FamilyMap, load_families

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
        from ...core.maps.projections import check_method

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
        words, text = self._words if self._words is not None else ("families", "")
        request = self.request_word_map(words, text, axes=(x, y))
        if request is not None:
            self.status.emit(f"Placing the words on {x.label} and {y.label}...")
        return request

    @property
    def axes(self) -> tuple[DirectionSpec, DirectionSpec] | None:
        """The two directions of the map on screen, or None for a projection."""
        return self._axes

    def set_projection(self, method: str) -> None:
        """PCA, t-SNE or UMAP of the words on screen: the family words' t-SNE or UMAP map is theirs alone,
        and their PCA map is the family map."""
        if method == self.projection and self.big_map and self._axes is None:
            return
        words = self._words or ("families", "")
        if method == "pca" and words[0] == "families":
            # A t-SNE or UMAP of them still on its way would replace the family map chosen now.
            self.cancel_word_map()
            if self.big_map:
                self.show_family_map()
            self.projection = method
            return
        if self.request_word_map(*words, method=method) is not None:
            self.status.emit(f"Computing the {METHOD_NAMES[method]} map of {self.describe_words(words)}...")

    def describe_words(self, words: tuple[str, str]) -> str:
        """The words of a map asked for, for the status bar: ("all" | "regex" | "list" | "families", text)."""
        if words[0] == "families":
            return f"the {sum(len(group) for group in self.current_families().values()):,} family words"
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
        self.search_count.setVisible(bool(text.strip()))  # nothing to say: no room taken (beside the map)

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
        # A class reads the map, not the notes around it: the caption folds to its first line (the
        # whole in its tooltip and in every picture) and the panel's hint goes, so the plot is taller.
        presenting = scale > 1
        self.canvas.set_caption_folded(presenting)
        self.panel.hint.setVisible(not presenting)
        self._place_finder(beside=presenting)
        # The panel's hint needs a wider column in larger type; without it the names alone set the width.
        self.panel.setMinimumWidth(FAMILY_PANEL_WIDTH if presenting else round(FAMILY_PANEL_WIDTH * scale))
        self.panel_scroll.updateGeometry()

    def _place_finder(self, beside: bool) -> None:
        """The search box and "Show the k nearest" above the map, or beside it over the families (taller map)."""
        if beside == (self._layout.indexOf(self.finder_box) < 0):
            return
        (self._layout if beside else self._side).removeWidget(self.finder_box)
        if beside:
            self._side.insertWidget(0, self.finder_box)
            self._finder.setDirection(QBoxLayout.Direction.TopToBottom)
        else:
            self._layout.insertWidget(0, self.finder_box)
            self._finder.setDirection(QBoxLayout.Direction.LeftToRight)
        # The narrow column beside the map holds the hint's first words whole, not cut with "...".
        self.search_box.setPlaceholderText(FIND_HINT.split(" (")[0] if beside else FIND_HINT)
        self.canvas.refit_axis_titles_later()  # the plot's new height: the left title placed for it

    def reset_view(self) -> None:
        bring_forward(self)  # from another tab: the map is shown whole, not reset out of sight
        self.canvas.reset_view()

    def focus_search(self) -> None:
        """Bring the map forward and put the cursor in its search box, its text selected."""
        bring_forward(self)  # from another tab the keys would go to a box out of sight
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
        from ...core.maps.family_map import save_families

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
            self.window(), "Load a families file", self.families_file or str(Path.home()), "Families (*.json)"
        )
        if path:
            self.use_families(path)

    def save_families_dialog(self) -> None:
        if self.family_map is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self.window(),
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
        from ...core.maps.family_map import save_families

        families = self.current_families()
        try:
            save_families(families, path)
        except EmbedExplorerError as exc:  # says what failed and that the old file is unchanged
            self.message.emit(str(exc), "error")
            return False
        self.settings.export_dir = str(Path(path).parent)  # the next save dialog, any pane's, opens here
        self.status.emit(f"Families saved to {path}")
        return True
