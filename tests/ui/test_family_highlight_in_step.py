"""Issue 35, item 4: the family highlight stays in step with its button whatever is ticked between clicks."""

from __future__ import annotations

from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model, settle
from tests.ui.test_click_and_read import hover_then_click, tick_box


def family_named(panel, word: str) -> str:  # type: ignore[no-untyped-def]
    return next(family for family in panel.highlight_buttons if word in family)


def test_days_highlighted_then_cities_hidden_and_shown_then_days_clicked_clears_it(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    view = window.panes.map.view
    panel, canvas = view.panel, view.canvas
    days, cities = family_named(panel, "days"), family_named(panel, "cities")
    settle()
    button = panel.highlight_buttons[days]
    hover_then_click(qtbot, button, button.rect().center())
    assert canvas.highlighted == days and button.isChecked()
    box = panel.visibility[cities]
    hover_then_click(qtbot, box, tick_box(box))  # untick "cities"
    qtbot.waitUntil(lambda: cities in canvas.hidden, timeout=ANSWER_TIMEOUT_MS)
    box = panel.visibility[cities]
    hover_then_click(qtbot, box, tick_box(box))  # and tick it again
    qtbot.waitUntil(lambda: cities not in canvas.hidden, timeout=ANSWER_TIMEOUT_MS)
    button = panel.highlight_buttons[days]
    assert canvas.highlighted == days and button.isChecked()  # still what the map shows
    hover_then_click(qtbot, button, button.rect().center())  # one click clears it
    assert canvas.highlighted is None and not button.isChecked() and canvas.highlight_count == 0
    assert not any(b.isChecked() for b in panel.highlight_buttons.values())

