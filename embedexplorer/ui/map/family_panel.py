"""The map's family panel: one row per family, a box to show or hide it, its name to highlight it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QWidget,
)

from ..style import theme
from ..widgets.steady_label import SteadyLabel
from .family_editor import swatch

FAMILY_PANEL_WIDTH = 140


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
        self.highlighted: str | None = None  # kept across a rebuild of the rows, so a button says what the map shows
        # False while a scale (health, change) fills the dots: a family's swatch would name a colour no dot has.
        self.family_colours_shown = True
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
        if list(self.visibility) == families:  # the same rows: only the boxes change
            for family, box in self.visibility.items():
                box.blockSignals(True)
                box.setChecked(family not in hidden)
                box.blockSignals(False)
            return
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
            button = QPushButton(family)
            button.setCheckable(True)
            button.setFlat(True)
            # A flat button shows no focus of its own under a style sheet: a frame in the focus colour does.
            button.setStyleSheet(
                "QPushButton { text-align: left; padding: 2px 4px; border: 2px solid transparent; }"
                "QPushButton:focus { border: 2px solid palette(highlight); border-radius: 3px; }"
            )
            button.setChecked(family == self.highlighted)
            button.clicked.connect(lambda checked, f=family: self._on_highlight(f, checked))
            for styled in (show, button):
                styled.setFont(self.font())  # as large as the panel's type, which a style sheet would not follow
            self._grid.addWidget(show, row, 0)
            self._grid.addWidget(button, row, 1)
            self.visibility[family] = show
            self.highlight_buttons[family] = button
        self._grid.addWidget(self.hint, len(families), 0, 1, 2)
        self._paint_swatches()
        if self.highlighted is not None and self.highlighted not in families:
            self._on_highlight(self.highlighted, False)
        self.families_set.emit()  # new widgets join the end of the Tab order: the pane puts them in place

    def show_family_colours(self, on: bool) -> None:
        """Each name's swatch in its family's colour (on), or none while a scale colours the dots (off)."""
        self.family_colours_shown = on
        self._paint_swatches()

    def _paint_swatches(self) -> None:
        for row, (family, button) in enumerate(self.highlight_buttons.items()):
            if self.family_colours_shown:
                button.setIcon(swatch(theme.family_colour(row)))
                button.setToolTip(f"Highlight the {family} on the map (click again to stop)")
            else:
                # A clear square, not no icon: the names stay where they were.
                button.setIcon(swatch(QColor(Qt.GlobalColor.transparent)))
                button.setToolTip(
                    f"Highlight the {family} on the map (click again to stop); "
                    "the dots' colours show the scale in the key above, not the families"
                )

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
            button.setChecked(checked and name == family)
        self.highlighted = family if checked else None
        self.highlight_changed.emit(self.highlighted)


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

