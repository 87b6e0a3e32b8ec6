"""Issue 35, item 6: the Model box shows the whole name at every size (1024x640 cut it: "ll-MiniLM-L6-v2 (bundled)")."""

from __future__ import annotations

import pytest

from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import open_model, settle
from tests.ui.test_every_size import SIZES, at_size
from tests.ui.window_probe import room_and_need


@pytest.mark.usefixtures("bundled_type")
def test_the_model_box_fits_the_open_models_whole_name_at_every_size(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    # A fresh machine: the window opens what it opens first, the bundled model, and names it in full.
    open_model(qtbot, window, "")
    box = window.model_bar.box
    assert box.currentText() == "all-MiniLM-L6-v2 (bundled)"
    for width, height in [(1024, 640), *SIZES]:
        at_size(qtbot, window, width, height)
        qtbot.wait(50)
        settle()
        room, need = room_and_need(box)
        assert need <= room, (width, height, room, need)
        # Nothing else on the bars is pushed out of sight: every bar's widget lies inside the window.
        for bar in window._toolbars.values():
            if bar.isVisible():
                assert bar.geometry().right() <= window.width(), (width, bar.windowTitle(), bar.geometry())
        fit = window.model_bar.bar_fit
        exercises = [a.text() for a in window.panes.exercises.actions()]
        if fit.folded:  # the exercises' bar gave its room to the name: one button holds them all
            assert fit.fold_button is not None and fit.fold_button.isVisible()
            assert [a.text() for a in fit.fold_button.menu().actions()] == exercises
        else:
            assert width >= 1366, "a wide window shows the exercises' bar in full"
            assert fit.exercises_bar().isVisible()
