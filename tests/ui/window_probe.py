"""The app as ``app.main`` starts it, reporting to a JSON file what a test under a window manager checks.

python -m tests.ui.window_probe SETTINGS OUT [WORD [PRESENTATION]]: with WORD the bundled model opens
and the report says where WORD's dot is on the screen, what a click there looks up (topmost first),
the selection's rings, and the text after any click; PRESENTATION
"1" starts in presentation mode. It says too where the Text box is, how large the map's and the
row's plots are drawn (the row's None while it is out of sight), where the map's tab is, and the Model
box's room and its whole text's need.
"""

from __future__ import annotations

import itertools
import json
import sys

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, QRectF, QTimer
from PySide6.QtGui import QFontMetrics

from embedexplorer.app import create_app, create_window

# QLineEdit keeps this many pixels on each side of its text inside its contents (Qt's horizontalMargin).
LINE_EDIT_MARGIN = 2


def room_and_need(box) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """The pixels the box's line edit gives its text, and the pixels the whole current text needs."""
    line = box.lineEdit()
    room = line.contentsRect().width() - 2 * LINE_EDIT_MARGIN
    margins = line.textMargins()
    room -= margins.left() + margins.right()
    return room, QFontMetrics(line.font()).horizontalAdvance(box.currentText())


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def size_of(r: QRectF) -> list[float]:
    return [round(r.width(), 1), round(r.height(), 1)]


def main(settings: str, out: str, word: str = "", presentation: str = "") -> None:
    app = create_app()
    window = create_window(settings)
    if presentation == "1":
        window.panes.teaching.set_presentation(True)
    window.show()
    app.processEvents()
    if word:  # what a fresh machine opens (the tests' Hugging Face cache is empty): the bundled model
        window.open_model(window.settings.model)

    count = itertools.count()

    def report() -> None:
        screen = window.screen().availableGeometry()
        bar = window.statusBar()
        facts: dict[str, object] = {
            "screen": rect(screen),
            "frame": rect(window.frameGeometry()),
            "status_bar": rect(QRect(bar.mapToGlobal(QPoint(0, 0)), bar.size())),
            "text": window.panes.token_pane.text(),
            "report": next(count),  # which report this is: a test can tell a new one from the last
        }
        canvas = window.panes.map.view.canvas
        box = window.panes.token_pane.input
        middle = box.mapToGlobal(box.rect().center())
        facts["text_box"] = [middle.x(), middle.y()]
        facts["presentation"] = window.state.presentation
        facts["plot"] = size_of(canvas.plot.getViewBox().sceneBoundingRect())
        row_plot = window.panes.row_view.plot_widget
        row_box = row_plot.plotItem.getViewBox().sceneBoundingRect()
        facts["row_plot"] = size_of(row_box) if row_plot.isVisible() else None
        tabs = window.right.tabBar()
        map_tab = tabs.mapToGlobal(tabs.tabRect(window.right.indexOf(window.panes.map)).center())
        facts["map_tab"] = [map_tab.x(), map_tab.y()]
        model_box = window.model_bar.box
        room, need = room_and_need(model_box)
        facts["model_box"] = [model_box.currentText(), room, need]
        if word and canvas.map is not None:
            index = canvas.map.labels.index(word)
            at = canvas.mapFromScene(canvas.plot.getViewBox().mapViewToScene(pg.Point(*canvas.map.coords[index])))
            spot = canvas.viewport().mapToGlobal(at)
            facts["dot"] = [spot.x(), spot.y()]
            # What a click there looks up, topmost first (the names the tip gives, in its order).
            scene = canvas.mapToScene(at)
            facts["rings"] = list(canvas.ring_names)
            facts["dot_targets"] = [canvas.map.labels[t.point] for t in canvas.targets_at(scene) if t.point >= 0]
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(facts, handle)
        QTimer.singleShot(200, report)

    QTimer.singleShot(200, report)
    app.exec()


if __name__ == "__main__":
    main(*sys.argv[1:])
