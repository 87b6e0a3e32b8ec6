"""A note longer than its lines shows whole lines only, and "…" at the end of the last.

The label reserves two lines (and a pixel or two more, as rich text sets lines apart): the third line of a
longer note showed the tops of its letters there, a row of cut marks under the row view's note on every GGUF
table without position rows. The oracle is the same label holding two lines that fit: no ink may reach lower.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage

from embedexplorer.ui.widgets.steady_label import MORE, SteadyLabel

NOTE = (
    "Layer 1 gets token; some steps not computed. No position table in the weights: the model marks positions "
    "another way. Not computed here: the model's other embedding steps, which this file's tokenizer and weights "
    "do not say, such as scaling, norms or types of token, all of which a model may add before its first layer."
)


def shown(qtbot, text: str) -> SteadyLabel:  # type: ignore[no-untyped-def]
    label = SteadyLabel(2)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setText(text)
    qtbot.addWidget(label)
    label.resize(420, label.height())
    label.show()
    qtbot.waitExposed(label)
    return label


def lowest_ink(image: QImage, background: QColor, columns: range) -> int:
    """The lowest row of ``image`` with a pixel of another colour than ``background`` among ``columns``."""
    lowest = -1
    for y in range(image.height()):
        if any(image.pixelColor(x, y) != background for x in columns):
            lowest = y
    return lowest


def test_a_shortened_note_shows_whole_lines_and_its_mark(qtbot) -> None:  # type: ignore[no-untyped-def]
    long = shown(qtbot, escape(NOTE))
    fitting = shown(qtbot, "gyjÁ pqÉ<br>gyjÁ pqÉ")  # two lines with the tallest and the lowest letters
    assert long.is_shortened() and not fitting.is_shortened()
    long_image, fitting_image = long.grab().toImage(), fitting.grab().toImage()
    background = fitting_image.pixelColor(fitting_image.width() - 1, 0)
    mark_from = long_image.width() - QFontMetrics(long.font()).horizontalAdvance(MORE + " ") - 2
    text_columns = range(0, mark_from)
    floor = lowest_ink(fitting_image, background, range(fitting_image.width()))
    assert floor > 0
    assert lowest_ink(long_image, background, text_columns) <= floor + 1
    # The "…" is drawn, at the end of the last whole line.
    assert lowest_ink(long_image, background, range(mark_from, long_image.width())) > 0
