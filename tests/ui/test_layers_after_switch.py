"""Issue 35, item 9: after a model switch the empty Through-the-layers chart keeps nothing of the old model."""

from __future__ import annotations

from embedexplorer.jobs.layer_jobs import LAYERS
from embedexplorer.jobs.table_jobs import ROW
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model, settle, type_text
from tests.ui.test_click_and_read import hover_then_click


def test_the_layers_chart_is_empty_of_the_old_models_axes_after_a_switch(qtbot, window, gpt2_folder) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "the river bank")
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.select(2)
    pane = window.panes.layers_pane
    window.right.setCurrentWidget(pane)
    with qtbot.waitSignal(answers(window, LAYERS).ready, timeout=LOAD_TIMEOUT_MS):
        hover_then_click(qtbot, pane.run_button, pane.run_button.rect().center())
    settle()
    bottom = pane.cosine_plot.getAxis("bottom")
    assert bottom.style["showValues"] and pane.length_plot.getAxis("bottom").labelText == "after layer"
    old_range = pane.cosine_plot.viewRange()[0]
    assert old_range[1] >= 6  # MiniLM's six layers
    open_model(qtbot, window, str(gpt2_folder))
    settle()
    # Nothing drawn, and no layer numbers, lengths or axis title left over from MiniLM.
    assert all(len(curve.getData()[0] or []) == 0 for curve in (pane._row_curve, pane._length_curve))
    for plot, axis in ((pane.cosine_plot, "bottom"), (pane.length_plot, "bottom"), (pane.length_plot, "left")):
        assert not plot.getAxis(axis).style["showValues"], (plot.accessibleName(), axis)
    assert pane.length_plot.getAxis("bottom").labelText == ""
    assert pane.cosine_plot.viewRange()[0] != old_range
