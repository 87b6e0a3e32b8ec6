"""Issue 37, rule 2: every string from a file, a path or a person is plain text in the window and its pictures.

Markup is planted in every field that reaches a label: the model's path, the family
names, a lesson's note and its model name, a message.  Then, as a person would look:
no label, tooltip or caption renders it (Qt renders a label's text as HTML when it looks
like HTML), and the exported PNG shows the literal text, not the planted picture.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QTextDocument
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QLabel

from embedexplorer.core.sources.resolve import bundled_model_dir
from embedexplorer.jobs.table_jobs import MAP
from tests.faults.helpers import link_files
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model

MAGENTA = QColor(255, 0, 255)


def secret_picture(path: Path) -> Path:
    """A large magenta picture: drawn anywhere, it would show in a screenshot or an export."""
    image = QImage(400, 400, QImage.Format.Format_RGB32)
    image.fill(MAGENTA)
    assert image.save(str(path))
    return path


def rendered_as_rich(label: QLabel) -> bool:
    """True when Qt draws the label's text as HTML (explicitly, or automatically because it looks like HTML)."""
    text = label.text()
    if label.textFormat() == Qt.TextFormat.RichText:
        return True
    return label.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text)


def check_labels(window, mark: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Every label of the window that holds the planted markup: none draws it as HTML."""
    holding = []
    for label in window.findChildren(QLabel):
        text = label.text()
        if rendered_as_rich(label):
            # A rich label may hold the planted words only escaped: then it shows them as text.
            assert "<img" not in text and "<a " not in text, (label.objectName(), text)
            document = QTextDocument()
            document.setHtml(text)
            if mark in document.toPlainText():
                holding.append(document.toPlainText())
        elif mark in text:
            holding.append(text)
    return holding


def test_planted_markup_is_text_in_every_label_and_in_the_exported_picture(qtbot, window, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    secret = secret_picture(tmp_path / "secret.png")
    mark = f'<img src="{secret}"><a href="https://example.invalid/">x</a>'
    # The model's path: folders whose names together hold the markup (a name cannot hold "/").
    model = tmp_path / '<img src="'
    model = Path(str(model) + str(secret) + '">model')  # .../<img src=".../secret.png">model
    bundled = bundled_model_dir()
    link_files(bundled, model, tuple(file.name for file in bundled.iterdir() if file.is_file()))
    open_model(qtbot, window, str(model))
    path_mark = f'<img src="{secret}">model'

    # Family names from a file.
    families = tmp_path / "families.json"
    families.write_text(
        json.dumps({"families": {f"{mark} animals": ["dog", "cat", "horse"], "<b>days</b>": ["monday", "friday"]}}),
        encoding="utf-8",
    )
    with qtbot.waitSignal(answers(window, MAP).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.map.view.use_families(str(families))

    # A lesson: its note is shown in the message bar once the lesson is set up.
    lesson = tmp_path / "hostile.lesson.json"
    assert window.panes.teaching.save_to(str(lesson), note=f"Read this: {mark}")
    assert window.panes.teaching.open_from(str(lesson))
    qtbot.waitUntil(lambda: "Read this" in window.message_bar.text(), timeout=ANSWER_TIMEOUT_MS)
    assert window.message_bar.label.textFormat() == Qt.TextFormat.PlainText
    assert window.message_bar.text() == f"Lesson: Read this: {mark}"
    shown = check_labels(window, mark)
    assert any(f"Read this: {mark}" in text for text in shown)
    assert any(path_mark in text for text in check_labels(window, path_mark))  # the facts in the status bar

    # A lesson whose model names markup that is no model: the message names it as text.
    other = tmp_path / "missing.lesson.json"
    other.write_text(json.dumps({"embedexplorer_lesson": 1, "model": f"./{mark}"}), encoding="utf-8")
    assert not window.panes.teaching.open_from(str(other))
    assert mark in window.message_bar.text() and window.message_bar.label.textFormat() == Qt.TextFormat.PlainText
    check_labels(window, mark)

    # The map's caption and legend are HTML for pyqtgraph: the names in them are escaped, read back as text.
    canvas = window.panes.map.view.canvas
    document = QTextDocument()
    document.setHtml(canvas.caption_html)
    assert path_mark in document.toPlainText()
    canvas.show_legend(True)
    legend_texts = [label.text for _sample, label in canvas.legend.items]
    assert any("&lt;img" in text for text in legend_texts)
    assert not any("<img" in text for text in legend_texts)
    canvas.show_legend(False)

    # The exported picture: the caption's literal text, and not one pixel of the planted picture.
    picture = tmp_path / "map.png"
    assert window.panes.map.exports.export_to(str(picture), 800)
    image = QImage(str(picture))
    assert not image.isNull()
    magenta = sum(
        1
        for y in range(0, image.height(), 2)
        for x in range(0, image.width(), 2)
        if QColor(image.pixel(x, y)) == MAGENTA
    )
    assert magenta == 0
    assert path_mark in image.text("Title") or path_mark in image.text("Description") or any(
        path_mark in image.text(key) for key in image.textKeys()
    )


def tip_shown_as_text(qtbot, widget, at, text: str) -> None:  # type: ignore[no-untyped-def]
    """Rest the pointer at ``at`` on ``widget`` (Qt's tooltip event): the tip shows ``text`` literally."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    from embedexplorer.ui.style.plain_text import plain_tip

    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, at, widget.mapToGlobal(at)))
    qtbot.waitUntil(QToolTip.isVisible)
    assert QToolTip.text() == plain_tip(text)
    document = QTextDocument()
    document.setHtml(QToolTip.text())
    assert document.toPlainText() == text
    QToolTip.hideText()


def test_a_tooltip_holding_markup_shows_its_text(qtbot, window, tmp_path):  # type: ignore[no-untyped-def]
    # Tooltips are rendered as HTML when they look like it; the family buttons' tooltips name the family.
    from PySide6.QtCore import QPoint

    mark = f'<img src="{secret_picture(tmp_path / "secret.png")}">'
    label = QLabel("hover me")
    qtbot.addWidget(label)
    label.setToolTip(f"Show or hide the {mark} family")
    label.show()
    qtbot.waitExposed(label)
    tip_shown_as_text(qtbot, label, QPoint(2, 2), f"Show or hide the {mark} family")


def test_a_plot_point_tip_holding_markup_shows_its_text(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    # pyqtgraph puts a hovered point's tip on its view box, a graphics item the widgets' rule never sees;
    # the layers pane's point tips name the token, which comes from the model's files.
    import pyqtgraph as pg
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from embedexplorer.ui.style.plain_text import guard_plain_text

    guard_plain_text(QApplication.instance())  # as the window does when it is built
    mark = f'<img src="{secret_picture(tmp_path / "secret.png")}">'
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    points = pg.ScatterPlotItem(
        [1.0, 2.0], [1.0, 2.0], size=20, hoverable=True, tip=lambda x, y, data: f"{mark} at {x:g}"
    )
    plot.addItem(points)
    plot.setXRange(0, 3, padding=0)
    plot.setYRange(0, 3, padding=0)
    plot.show()
    qtbot.waitExposed(plot)
    # As a person does: move onto the dot, rest there, and Qt asks for the tooltip.
    view_box = plot.getPlotItem().getViewBox()
    dot = plot.mapFromScene(view_box.mapViewToScene(pg.Point(1.0, 1.0)))
    QTest.mouseMove(plot.viewport(), dot + QPoint(1, 0))
    QTest.mouseMove(plot.viewport(), dot)
    qtbot.waitUntil(lambda: mark in view_box.toolTip())
    tip_shown_as_text(qtbot, plot.viewport(), dot, f"{mark} at 1")


def test_the_row_title_tip_reads_as_its_title_not_as_markup(qtbot, window):  # type: ignore[no-untyped-def]
    # The title is drawn from escaped markup (bold id, a byte token such as <0x8D> kept whole);
    # its tip, shown literally, must read as the title does, never as the markup behind it.
    from PySide6.QtCore import QPoint

    from tests.ui.conftest import type_text

    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "nurse")
    title = window.panes.row_view.title
    qtbot.waitUntil(lambda: "6,821" in title.text(), timeout=ANSWER_TIMEOUT_MS)
    document = QTextDocument()
    document.setHtml(title.text())
    shown = document.toPlainText()
    assert shown.startswith("row 6,821") and "nurse" in shown
    # Rest the pointer on the title: the tip reads as the title does (Qt's tip label lays plain
    # text out with its runs of spaces made one, so the words are compared).
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    at = QPoint(4, 4)
    QApplication.sendEvent(title, QHelpEvent(QEvent.Type.ToolTip, at, title.mapToGlobal(at)))
    qtbot.waitUntil(QToolTip.isVisible)
    tip = QTextDocument()
    if GuiQt.mightBeRichText(QToolTip.text()):
        tip.setHtml(QToolTip.text())
    else:
        tip.setPlainText(QToolTip.text())
    assert tip.toPlainText().split() == shown.split()
    QToolTip.hideText()
