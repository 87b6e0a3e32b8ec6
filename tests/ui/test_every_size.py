"""At 1600x1000, 1366x768 and 1024x640, normal and presentation: nothing a class reads is cut, all of it scales.

Each label's needed width (its font's metrics) is compared with the width it is shown at: it
fits, or it shows "…" and holds the whole text one hover away. The window's type is the
bundled DejaVu Sans (fonts-dejavu-core), so the figures are the same on every machine.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QLabel, QLineEdit, QScrollArea, QWidget

from embedexplorer.jobs.health_jobs import HEALTH
from embedexplorer.jobs.table_jobs import COSINE
from embedexplorer.ui.style.theme import PRESENTATION_SCALE
from embedexplorer.ui.widgets.elided_label import ElidedLabel
from embedexplorer.ui.widgets.steady_label import SteadyLabel
from embedexplorer.ui.widgets.wrapped_label import WrappedLabel
from embedexplorer.ui.window.screen_scroll import ScreenScroll
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle, type_text

SIZES = [(1600, 1000), (1366, 768), (1024, 640)]
# QLineEdit keeps this many pixels on each side of its text inside its contents (Qt's horizontalMargin).
LINE_EDIT_MARGIN = 2


def at_size(qtbot, window, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    window.move(0, 0)
    window.resize(width, height)
    placement = window.row_placement
    qtbot.waitUntil(lambda: placement.compact == placement.wants_compact())
    settle()


def every_size_and_tab(qtbot, window) -> Iterator[tuple[int, int, str]]:  # type: ignore[no-untyped-def]
    """Each claimed size and, at each, each tab on the right (the map, the row when it is a tab,
    layers...) in turn, settled: every view a person gets."""
    for width, height in SIZES:
        at_size(qtbot, window, width, height)
        assert (window.width(), window.height()) == (width, height)
        for tab in range(window.right.count()):
            window.right.setCurrentIndex(tab)
            settle()
            yield width, height, window.right.tabText(tab)
        window.right.setCurrentIndex(0)


def every_view(qtbot, window) -> Iterator[tuple[int, int, str, bool]]:  # type: ignore[no-untyped-def]
    """``every_size_and_tab`` in normal mode, then in presentation mode (turned off again at the end)."""
    try:
        for presentation in (False, True):
            window.panes.teaching.set_presentation(presentation)
            settle()
            for width, height, tab in every_size_and_tab(qtbot, window):
                yield width, height, tab, presentation
    finally:
        window.panes.teaching.set_presentation(False)


def scrolled(widget: QWidget) -> bool:
    """True for what lives inside a pane's scroll area: it may lie past the edge, a scroll away. The window's own
    (it holds every pane, and scrolls only on a screen too small for them) does not count: at the claimed sizes
    nothing may lie past the window's edge there."""
    parent = widget.parentWidget()
    while parent is not None:
        own = isinstance(parent, ScreenScroll)
        if isinstance(parent, QAbstractScrollArea) and not own and parent.viewport().isAncestorOf(widget):
            return True
        parent = parent.parentWidget()
    return False


def problems(window) -> list[str]:  # type: ignore[no-untyped-def]
    """Every visible text that is cut: past the window's edge, or narrower than it needs with no "…"."""
    found = []
    frame = QRect(QPoint(0, 0), window.size())
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not window or scrolled(widget):
            continue
        where = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
        name = f"{type(widget).__name__} {widget.accessibleName() or getattr(widget, 'text', lambda: '')()!r}"[:90]
        if not frame.contains(where):
            found.append(f"{name} lies outside the window: {where}")
        if isinstance(widget, (SteadyLabel, WrappedLabel, ElidedLabel)):
            if widget.is_shortened() and not widget.toolTip():
                found.append(f"{name} is shortened with nothing to hover for")
        elif isinstance(widget, QLabel) and widget.text() and not widget.wordWrap() and widget.pixmap().isNull():
            needed = QFontMetricsF(widget.font()).horizontalAdvance(widget.text().replace("&", ""))
            if "<" not in widget.text() and needed > widget.contentsRect().width() + 1:
                found.append(f"{name} needs {needed:.0f} px, has {widget.contentsRect().width()}")
        elif isinstance(widget, QAbstractButton) and widget.text():
            if widget.sizeHint().width() > widget.width() + 1:
                found.append(f"{name} needs {widget.sizeHint().width()} px, has {widget.width()}")
    return found


def read_sizes(window) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """The point size of each thing a class reads (map text is checked in test_fit_and_presentation)."""
    panes = window.panes
    return {
        "text box": panes.token_pane.input.font().pointSizeF(),
        "chips": panes.token_pane.chip_list.font().pointSizeF(),
        "row numbers": panes.row_view.numbers.font().pointSizeF(),
        "neighbour table": panes.neighbours_pane.table.font().pointSizeF(),
        "neighbour rows": float(panes.neighbours_pane.table.verticalHeader().defaultSectionSize()),
        "legend": panes.map.view.panel.highlight_buttons["days"].font().pointSizeF(),
        "caption": panes.map.view.canvas.caption.item.font().pointSizeF(),
        "cosine line": panes.neighbours_pane.compare_result.font().pointSizeF(),
    }


@pytest.mark.usefixtures("bundled_type")
def test_presentation_enlarges_what_a_class_reads_by_one_factor_and_cuts_nothing(qtbot, window):
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS):
        qtbot.keyClicks(window.panes.neighbours_pane.compare_input, "tuesday")
    normal = read_sizes(window)
    try:
        for presentation in (False, True):
            window.panes.teaching.set_presentation(presentation)
            settle()
            if presentation:
                larger = read_sizes(window)
                for what, size in normal.items():
                    factor = larger[what] / size
                    # Rows are whole pixels: their height grows by the factor within a pixel or two.
                    allowed = 2.5 / size if what == "neighbour rows" else 0.02
                    assert abs(factor - PRESENTATION_SCALE) <= allowed, (what, size, larger[what])
            for place in every_size_and_tab(qtbot, window):
                assert problems(window) == [], (place, presentation)
    finally:
        window.panes.teaching.set_presentation(False)


def cut_hints(window) -> list[str]:  # type: ignore[no-untyped-def]
    """Every empty box on screen whose grey hint is wider than the room the box gives its text."""
    found = []
    for line in window.findChildren(QLineEdit):
        if not line.isVisible() or line.window() is not window or line.text() or not line.placeholderText():
            continue
        margins = line.textMargins()
        room = line.contentsRect().width() - 2 * LINE_EDIT_MARGIN - margins.left() - margins.right()
        needed = QFontMetricsF(line.font()).horizontalAdvance(line.placeholderText())
        if needed > room + 1:
            name = line.accessibleName() or line.placeholderText()
            found.append(f"{name!r}: its hint needs {needed:.0f} px, has {room}")
    return found


@pytest.mark.usefixtures("bundled_type")
def test_the_hint_in_every_empty_box_is_whole_at_every_size(qtbot, window):
    # A person reads the grey hint before typing: "another word, e.g.  France" showed as "another word, …".
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    for view in every_view(qtbot, window):
        assert cut_hints(window) == [], view


def sideways(window) -> list[str]:  # type: ignore[no-untyped-def]
    """Every pane on screen that scrolls sideways: its sentences wrap at a width past the pane's right edge, so
    each line of them is cut there (the Vocabulary health tab's row of buttons held it 13 px too wide at
    1366x768, 131 px in presentation mode)."""
    found = []
    for area in window.findChildren(QScrollArea):
        if area.isVisible() and area.widgetResizable() and area.horizontalScrollBar().maximum() > 0:
            found.append(f"{type(area.parentWidget()).__name__}: {area.horizontalScrollBar().maximum()} px too wide")
    return found


@pytest.mark.usefixtures("bundled_type")
def test_no_pane_scrolls_sideways_at_any_size(qtbot, window):
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=ANSWER_TIMEOUT_MS * 6):
        window.right.setCurrentWidget(window.panes.health_pane)  # its report's sentences wrap too
    for view in every_view(qtbot, window):
        assert sideways(window) == [], view

