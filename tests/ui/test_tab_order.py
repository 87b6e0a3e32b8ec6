"""Issue 35, item 12: Tab goes as the window is drawn: the toolbars first, then the panes; k before Cosine with."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import open_model, type_text
from tests.ui.dialogs import focus_on
from tests.ui.test_click_and_read import controls
from tests.ui.test_every_size import at_size


def walk(qtbot, start, steps: int) -> list:  # type: ignore[no-untyped-def]
    """Press Tab ``steps`` times from ``start``; the controls the keyboard visits, in order."""
    focus_on(qtbot, start)
    reached = [start]
    for _ in range(steps):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        reached.append(QApplication.focusWidget())
    return reached


def test_tab_reaches_the_toolbar_first_and_k_before_cosine_with(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    at_size(qtbot, window, 1366, 768)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    box = window.model_bar.box
    wanted = controls(window)
    reached = walk(qtbot, box.lineEdit() or box, 2 * len(wanted) + 10)

    def first(widget) -> int:  # type: ignore[no-untyped-def]
        return next(i for i, w in enumerate(reached) if w is widget or (w is not None and widget.isAncestorOf(w)))

    toolbar_controls = [w for w in wanted if any(bar.isAncestorOf(w) for bar in window._toolbars.values())]
    assert toolbar_controls, "the toolbars have controls"
    text = window.panes.token_pane.input
    # From the Model box, every toolbar control comes before the first pane's first control.
    assert all(first(w) < first(text) for w in toolbar_controls), [
        (type(w).__name__, getattr(w, "text", lambda: "")()) for w in toolbar_controls if first(w) > first(text)
    ]
    neighbours = window.panes.neighbours_pane
    assert first(neighbours.k_box) < first(neighbours.table) < first(neighbours.compare_input)
    # And round again: after the last pane's controls, Tab comes back to the toolbar.
    after_text = reached[first(text):]
    assert any(w is box or (w is not None and box.isAncestorOf(w)) for w in after_text)
