"""A row of buttons that wraps: each button whole, on as many lines as the width needs."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton, QWidget

from embedexplorer.ui.widgets.flow_layout import flow_row
from tests.ui.conftest import settle


def test_buttons_wrap_onto_new_lines_whole_and_come_back(qtbot) -> None:  # type: ignore[no-untyped-def]
    holder = QWidget()
    qtbot.addWidget(holder)
    buttons = [QPushButton(text) for text in ("Check the vocabulary", "Stop the vocabulary check", "Export...")]
    row = flow_row(*buttons)
    holder.setLayout(row)
    one_line = row.sizeHint().width()
    widest = max(button.sizeHint().width() for button in buttons)
    assert row.minimumSize().width() == widest  # not the whole row's width
    holder.show()
    for width, lines in ((one_line + 10, 1), (widest + 5, 3)):
        holder.resize(width, row.heightForWidth(width))
        settle()
        tops = sorted({button.geometry().top() for button in buttons})
        assert len(tops) == lines, (width, tops)
        for button in buttons:  # whole, and inside the holder
            assert button.width() == button.sizeHint().width()
            assert holder.rect().contains(button.geometry()), (width, button.text(), button.geometry())
        assert row.heightForWidth(width) >= buttons[0].sizeHint().height() * lines
