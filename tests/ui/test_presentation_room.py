"""Issue 35, item 7: presentation mode gives the map more room, not less (at 1366x768 the seven days were one
unlabelled blob; at 1024x640 the plot was about 330x150 pixels)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import open_model, settle, type_text
from tests.ui.test_every_size import at_size


def plot_size(window) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    box = window.panes.map.view.canvas.plot.getViewBox().sceneBoundingRect()
    return box.width(), box.height()


# 1024x640 (with a title bar) is measured under a window manager: test_presentation_room_framed.py.
@pytest.mark.parametrize("width,height", [(1600, 1000), (1366, 768)])
def test_presentation_draws_the_map_plot_larger(qtbot, window, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    at_size(qtbot, window, width, height)
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "nurse")
    settle()
    normal = plot_size(window)
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.state.presentation)
    at_size(qtbot, window, width, height)
    qtbot.wait(200)
    settle()
    presenting = plot_size(window)
    assert presenting[0] * presenting[1] > normal[0] * normal[1], (normal, presenting)
    assert presenting[1] >= 0.9 * normal[1], (normal, presenting)
    canvas = window.panes.map.view.canvas
    assert canvas.caption.toolTip()  # the whole caption one hover away, its first line on the map
    # Back to normal: the columns as they were.
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: not window.state.presentation)
    settle()
    assert window.panes.map.view.panel.hint.isVisible()
