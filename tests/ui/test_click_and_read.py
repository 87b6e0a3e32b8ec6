"""Issue 26: the window as a learner clicks it and a class reads it (pointer moved first, then a click)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model, settle, type_text


def dot_position(canvas, word: str) -> QPoint:  # type: ignore[no-untyped-def]
    """Where the dot of ``word`` is drawn, in the canvas viewport's pixels."""
    index = canvas.map.labels.index(word)
    view = canvas.plot.getViewBox()
    at = canvas.mapFromScene(view.mapViewToScene(pg.Point(*map(float, canvas.map.coords[index]))))
    return QPoint(at.x(), at.y())


def hover_then_click(qtbot, widget, at: QPoint) -> None:  # type: ignore[no-untyped-def]
    """As a hand does: move onto the point, let the window react (the dot grows), then click."""
    QTest.mouseMove(widget, at)
    qtbot.wait(300)
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=at)


def test_a_dot_the_pointer_rests_on_looks_its_word_up_when_clicked(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    canvas = window.map_view.canvas
    settle()
    for word, spelled in (("tokyo", " Tokyo"), ("monday", " Monday")):
        at = dot_position(canvas, word)
        QTest.mouseMove(canvas.viewport(), at)
        qtbot.waitUntil(lambda: canvas.hovered is not None, timeout=ANSWER_TIMEOUT_MS)  # the dot grew
        with qtbot.waitSignal(window.map_view.word_clicked, timeout=ANSWER_TIMEOUT_MS) as clicked:
            qtbot.wait(300)
            qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=at)
        assert clicked.args == [spelled]
        qtbot.waitUntil(lambda: window.token_pane.input.text() == spelled, timeout=ANSWER_TIMEOUT_MS)


def test_a_dot_under_a_ring_is_looked_up_too(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    canvas = window.map_view.canvas
    type_text(qtbot, window, "monday")
    assert "tuesday" in canvas.ring_names  # a ring is drawn over tuesday's dot
    settle()
    with qtbot.waitSignal(window.map_view.word_clicked, timeout=ANSWER_TIMEOUT_MS) as clicked:
        hover_then_click(qtbot, canvas.viewport(), dot_position(canvas, "tuesday"))
    assert clicked.args == [" Tuesday"]
