"""Presentation mode (or a shorter window) moves the row pane to a tab beside the map: the tab a
person is reading stays the one in front.

Seen in a real window: on the Directions tab, Ctrl+Shift+P showed the Layers tab instead. The row
tab goes in at place 1 and the window kept the old place's number, which then named the tab before.
"""

from __future__ import annotations

import pytest

from .conftest import open_model, settle, type_text


@pytest.mark.parametrize("pane_name", ["directions_pane", "health_pane", "layers_pane"])
def test_presentation_keeps_the_tab_in_front(qtbot, window, pane_name: str) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    window.resize(1600, 1000)
    placement = window.row_placement
    qtbot.waitUntil(lambda: placement.compact == placement.wants_compact())
    assert not placement.compact  # the row pane above the neighbours: no Row tab yet
    pane = getattr(window.panes, pane_name)
    window.right.setCurrentWidget(pane)
    settle()
    window.panes.teaching.presentation_action.trigger()  # Ctrl+Shift+P
    try:
        qtbot.waitUntil(lambda: placement.compact)
        settle()
        assert window.right.currentWidget() is pane, window.right.tabText(window.right.currentIndex())
    finally:
        window.panes.teaching.presentation_action.trigger()
    qtbot.waitUntil(lambda: not placement.compact)
    settle()
    assert window.right.currentWidget() is pane, window.right.tabText(window.right.currentIndex())
