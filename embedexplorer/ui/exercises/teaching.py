"""For teachers: lesson files (the same starting point for a whole class) and a presentation mode.

A lesson is a snapshot of the application state (``state.lesson_of``) and opening one
changes the state (``state.changes_of``); the panes follow. Presentation mode is a state
field too: each pane enlarges what it draws, and the application's font grows here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QInputDialog, QPlainTextEdit, QWidget

from ...state import changes_of, lesson_of
from ..style.theme import presentation_scale
from ..widgets.leaving_text_box import let_keyboard_leave
from ..widgets.save_target import ask_save_target
from ..window.plugging import PaneContext, Place

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.exercises.lessons import Lesson

SCALED_PROPERTY = "embedexplorerPresentation"
LESSON_FILTER = "EmbedExplorer lessons (*.lesson.json *.json)"


class TeachingTools(QObject):
    """File > Save lesson / Open lesson and View > Presentation."""

    # ----- the pane contract (ui/window/plugging.py) ------------------------------------------
    TITLE = "Lessons and presentation"
    PLACE = Place.NOWHERE
    MENUS = ("&File", "&View")

    def bind(self, ctx: PaneContext) -> None:
        window = ctx.shell.window_widget()
        self.setParent(window)
        self.state, self.shell, self.settings = ctx.state, ctx.shell, ctx.settings
        self.pending: Lesson | None = None  # its texts are applied once its model is open
        self._place: int | None = None
        self._view: tuple[tuple[float, float], tuple[float, float]] | None = None
        self._applying = False  # the lesson's texts are set; its map view is still to come
        self.save_action = QAction("Save &lesson...", window)
        self.save_action.setToolTip("Save the model, the texts, the selected tokens, k and the map as a lesson file")
        self.save_action.triggered.connect(self.save_dialog)
        self.save_action.setShortcut(QKeySequence("Ctrl+Shift+S"))
        self.open_action = QAction("Open l&esson...", window)
        self.open_action.setToolTip("Open a lesson file: its model, texts, tokens, k, map and the teacher's note")
        self.open_action.triggered.connect(self.open_dialog)
        self.open_action.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.presentation_action = QAction("&Presentation", window)
        self.presentation_action.setCheckable(True)
        self.presentation_action.setShortcut(QKeySequence("Ctrl+Shift+P"))
        self.presentation_action.setToolTip("Larger type and map markers for a projector (remembered)")
        for action in (self.save_action, self.open_action, self.presentation_action):
            # Also while an exercise dialog (a window of its own) has the keyboard; a modal one still blocks them.
            action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        app = QApplication.instance()
        self._base_font = QFont(app.font()) if isinstance(app, QApplication) else QFont()
        if isinstance(app, QApplication) and app.property(SCALED_PROPERTY):
            # Another window of this process already enlarged the application's font.
            self._base_font.setPointSizeF(self._base_font.pointSizeF() / presentation_scale(True))
        self.presentation_action.toggled.connect(lambda on: self.state.update(presentation=on))
        self.state.watch("presentation", self._on_presentation_changed)
        self.state.watch("model_serial", self._on_model_serial_changed)
        self.state.watch("map_range_wanted", self._on_map_range_wanted_changed)
        file_menu = ctx.shell.menu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.save_action)
        file_menu.addSeparator()
        ctx.shell.menu("&View").addAction(self.presentation_action)
        if self.state.presentation:
            self.presentation_action.setChecked(True)
            self._on_presentation_changed(True)

    # ----- presentation ----------------------------------------------------------------------
    def set_presentation(self, on: bool) -> None:
        self.presentation_action.setChecked(on)

    def _on_model_serial_changed(self, _serial: int) -> None:
        self.apply_texts()

    def _on_presentation_changed(self, on: bool) -> None:
        self.presentation_action.setChecked(on)
        font = QFont(self._base_font)
        size = self._base_font.pointSizeF()
        if size > 0:
            font.setPointSizeF(size * presentation_scale(on))
        # A new font shows the status bar's own widgets again, under a passing message it would
        # leave on screen: the message goes first (it was passing anyway).
        self.shell.show_status("", 1)
        # Widgets without a font of their own follow the application's; the panes scale their plots.
        QApplication.setFont(font)
        app = QApplication.instance()
        if app is not None:
            app.setProperty(SCALED_PROPERTY, on)

    # ----- lessons ---------------------------------------------------------------------------
    def current_lesson(self) -> Lesson:
        """The state as a lesson, with where its map came from (and the date it is saved)."""
        from ...core.maps.provenance import stamped

        return replace(lesson_of(self.state.now), provenance=stamped(self.state.map_provenance))

    def save_dialog(self) -> None:
        window = self.shell.window_widget()
        start = Path(self.settings.export_dir or Path.home()) / "lesson.lesson.json"
        # A name typed without .json gets it (and is asked about if it exists): Open lesson lists it then.
        path = ask_save_target(window, "Save a lesson", start, LESSON_FILTER, (".json",))
        if not path:
            return
        note = ask_note(window, self.state.lesson_note)
        if note is not None:
            self.save_to(path, note)

    def save_to(self, path: str, note: str | None = None) -> bool:
        """Write the lesson; ``note`` (None: the open lesson's) is shown to whoever opens it."""
        if note is not None:
            self.state.update(lesson_note=note.strip())
        from ...core.exercises.lessons import LessonError, save_lesson

        try:
            save_lesson(self.current_lesson(), path)
        except LessonError as exc:
            self.shell.show_message(str(exc), "error")
            return False
        self.settings.export_dir = str(Path(path).parent)  # the next save dialog, any pane's, opens here
        self.shell.show_status(f"Lesson saved to {path}", 6000)
        return True

    def open_dialog(self) -> None:
        start = str(self.settings.export_dir or Path.home())
        path, _ = QFileDialog.getOpenFileName(self.shell.window_widget(), "Open a lesson", start, LESSON_FILTER)
        if path:
            self.open_from(path)

    def open_from(self, path: str) -> bool:
        """Set the window up as the lesson says; a missing model is named, with a Download button."""
        from ...core.exercises.lessons import LessonError, check_model, load_lesson

        try:
            lesson = load_lesson(path)
        except LessonError as exc:
            self.shell.show_message(f"The lesson was not opened. {exc}", "error")
            return False
        self.pending, self._applying = lesson, False
        changes = changes_of(lesson)
        # The place and the view wait for the lesson's model: they are set with its texts.
        first_place, view = changes.pop("place_wanted"), changes.pop("map_range_wanted")
        self.state.update(**changes)
        self._place, self._view = first_place, view
        check = check_model(lesson.model)
        if not check.available:
            action = None
            if check.downloadable:
                action = ("Download", lambda: self.shell.open_model(lesson.model, allow_download=True))
            self.shell.show_message(check.message, "error", action)
            return False
        if lesson.model != self.state.model_spec:
            self.shell.open_model(lesson.model)  # its message bar is cleared as it opens: the note comes later
        else:
            self.apply_texts()
        return True

    def _show_note(self, note: str) -> None:
        if note:
            self.shell.show_message(f"Lesson: {note}", "info")

    def apply_texts(self) -> None:
        """Once the lesson's model is open: its text, its selected token and its map view.

        The lesson stays ``pending`` until the map has taken its view too.
        """
        lesson = self.pending
        if lesson is None or self._applying:
            return
        if self._view is None:
            self.pending = None
        else:
            self._applying = True
        self.state.update(place_wanted=self._place, map_range_wanted=self._view, text=lesson.first_text)
        self._show_note(lesson.note)  # the teacher's words, once the lesson is set up

    def _on_map_range_wanted_changed(self, wanted: object) -> None:
        if wanted is None and self._applying:
            self._applying = False
            self.pending = None


def ask_note(window: QWidget, note: str) -> str | None:
    """The lesson's note, typed over ``note``; None when the dialog is cancelled."""
    dialog = QInputDialog(window)
    dialog.setWindowTitle("The lesson's note")
    dialog.setLabelText("A note the class reads when the lesson opens (may be empty):")
    dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
    dialog.setTextValue(note)
    box = dialog.findChild(QPlainTextEdit)
    if box is not None:
        let_keyboard_leave(box, dialog.accept)
    try:
        return dialog.textValue() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()
