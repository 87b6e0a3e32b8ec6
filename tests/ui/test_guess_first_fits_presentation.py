"""Guess first turned on in presentation mode on a 1024x640 laptop: the window still fits the screen.

Seen in a real window: Ctrl+Shift+P, then Ctrl+G at 1024x640 pushed the window past the screen's
right edge (the Vocabulary health tab, Find on the map and the family names cut off): the guess
line (its label, a 16-letter box, Reveal, "Show without guessing") asked for 526 pixels of a
left column that had less, and the window for 1098.
"""

from __future__ import annotations

from tests.ui.conftest import open_model, settle, type_text
from tests.ui.test_fit_and_presentation import at_size, check_fits


def test_guess_first_in_presentation_at_1024x640(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    at_size(qtbot, window, 1024, 640)
    window.panes.teaching.presentation_action.setChecked(True)
    try:
        at_size(qtbot, window, 1024, 640)
        window.panes.exercises.guess_action.trigger()  # Ctrl+G, in front of the class
        settle()
        assert window.panes.guess_bar.isVisible()
        assert window.minimumSizeHint().width() <= 1024, window.minimumSizeHint()
        at_size(qtbot, window, 1024, 640)
        check_fits(qtbot, window, 1024, 640)
    finally:
        window.panes.exercises.guess_action.setChecked(False)
        window.panes.teaching.presentation_action.setChecked(False)
