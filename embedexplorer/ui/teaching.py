"""For teachers: lesson files (the same starting point for a whole class) and a presentation mode."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog

from ..core.exercises.lessons import Lesson, LessonError, MapView, check_model, load_lesson, save_lesson
from ..core.maps.provenance import stamped

if TYPE_CHECKING:
    from .main_window import MainWindow

# How much larger everything reads on a projector.
PRESENTATION_SCALE = 1.4
SCALED_PROPERTY = "embedexplorerPresentation"
LESSON_FILTER = "EmbedExplorer lessons (*.lesson.json *.json)"


class TeachingTools(QObject):
    """File > Save lesson / Open lesson and View > Presentation."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pending: Lesson | None = None  # applied as the model, tokens and map arrive
        self.save_action = QAction("Save &lesson...", window)
        self.save_action.setToolTip("Save the model, the texts, the selected tokens, k and the map as a lesson file")
        self.save_action.triggered.connect(self.save_dialog)
        self.open_action = QAction("Open l&esson...", window)
        self.open_action.triggered.connect(self.open_dialog)
        self.presentation_action = QAction("&Presentation", window)
        self.presentation_action.setCheckable(True)
        self.presentation_action.setShortcut(QKeySequence("Ctrl+Shift+P"))
        self.presentation_action.setToolTip("Larger type and map markers for a projector (remembered)")
        app = QApplication.instance()
        self._base_font = QFont(app.font()) if isinstance(app, QApplication) else QFont()
        if isinstance(app, QApplication) and app.property(SCALED_PROPERTY):
            # Another window of this process already enlarged the application's font.
            self._base_font.setPointSizeF(self._base_font.pointSizeF() / PRESENTATION_SCALE)
        self.presentation_action.toggled.connect(self.set_presentation)
        self.presentation_action.setChecked(window.settings.presentation)

    # ----- presentation ----------------------------------------------------------------------
    def set_presentation(self, on: bool) -> None:
        self.window.settings.presentation = on
        font = QFont(self._base_font)
        size = self._base_font.pointSizeF()
        if size > 0:
            font.setPointSizeF(size * (PRESENTATION_SCALE if on else 1.0))
        # A new font shows the status bar's own widgets again, under a passing message it would
        # leave on screen: the message goes first (it was passing anyway).
        self.window.statusBar().clearMessage()
        # Widgets without a font of their own follow the application's; the plots are told.
        QApplication.setFont(font)
        app = QApplication.instance()
        if app is not None:
            app.setProperty(SCALED_PROPERTY, on)
        scale = PRESENTATION_SCALE if on else 1.0
        self.window.map_view.set_marker_scale(scale)
        self.window.row_view.set_scale(scale)
        self.window.layers_pane.set_scale(scale)

    # ----- lessons ---------------------------------------------------------------------------
    def current_lesson(self) -> Lesson:
        window = self.window
        first_place = window.token_pane.selected_index()
        pane = window.exercises.two_texts.pane
        second_text = pane.texts()[1]
        second_place = pane.places()[1]
        view = window.map_view_range()
        return Lesson(
            model=window.model_spec or window.model_name,
            first_text=window.token_pane.text(),
            second_text=second_text,
            first_place=None if first_place is None else first_place + 1,
            second_place=None if second_place is None else second_place + 1,
            k=window.neighbours_pane.k(),
            families_file=window.map_view.requested_families,
            hidden_families=tuple(sorted(window.settings.hidden_families)),
            map_view=None if view is None else MapView(*view),
            provenance=stamped(getattr(window.map_view.family_map, "provenance", None)),
        )

    def save_dialog(self) -> None:
        start = Path(self.window.settings.export_dir or Path.home()) / "lesson.lesson.json"
        path, _ = QFileDialog.getSaveFileName(self.window, "Save a lesson", str(start), LESSON_FILTER)
        if path:
            self.save_to(path)

    def save_to(self, path: str) -> bool:
        try:
            save_lesson(self.current_lesson(), path)
        except LessonError as exc:
            self.window.message_bar.show_message(str(exc), "error")
            return False
        self.window.statusBar().showMessage(f"Lesson saved to {path}", 6000)
        return True

    def open_dialog(self) -> None:
        start = str(self.window.settings.export_dir or Path.home())
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a lesson", start, LESSON_FILTER)
        if path:
            self.open_from(path)

    def open_from(self, path: str) -> bool:
        """Set the window up as the lesson says; a missing model is named, with a Download button."""
        window = self.window
        try:
            lesson = load_lesson(path)
        except LessonError as exc:
            window.message_bar.show_message(f"The lesson was not opened. {exc}", "error")
            return False
        self.pending = lesson
        window.neighbours_pane.set_k(lesson.k)
        window.map_view.set_hidden_families(set(lesson.hidden_families))
        window.map_view.use_families(lesson.families_file)
        window.exercises.two_texts.pane.set_texts(
            lesson.first_text,
            lesson.second_text,
            (_index(lesson.first_place), _index(lesson.second_place)),
        )
        check = check_model(lesson.model)
        if not check.available:
            action = None
            if check.downloadable:
                action = ("Download", lambda: window.open_model(lesson.model, allow_download=True))
            window.message_bar.show_message(check.message, "error", action)
            return False
        if lesson.model != window.model_spec:
            window.open_model(lesson.model)
        else:
            self.apply_texts()
        return True

    def apply_texts(self) -> None:
        """Once the lesson's model is open: its text, its selected token and its map view."""
        lesson = self.pending
        if lesson is None:
            return
        window = self.window
        window.token_pane.select_when_shown(_index(lesson.first_place))
        window.token_pane.set_text(lesson.first_text)
        if not window.loaded:
            return
        window.exercises.two_texts.pane.request_tokens()

    def apply_map_view(self) -> None:
        """After the lesson's map is drawn: its view, once."""
        lesson = self.pending
        if lesson is None:
            return
        self.pending = None
        if lesson.map_view is not None:
            self.window.set_map_view_range(lesson.map_view.x, lesson.map_view.y)


def _index(place: int | None) -> int | None:
    return None if place is None else place - 1
