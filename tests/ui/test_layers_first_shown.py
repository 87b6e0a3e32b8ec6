"""The Layers tab builds its plots when first shown (not for the window's first frame): what it shows then is whole."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from embedexplorer.jobs.table_jobs import ROW
from embedexplorer.ui.style.plot_type import TICK_TEXT_PT
from embedexplorer.ui.style.theme import presentation_scale
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, type_text


def _click_tab(qtbot, window, title_start: str) -> None:  # type: ignore[no-untyped-def]
    bar = window.right.tabBar()
    index = next(i for i in range(bar.count()) if bar.tabText(i).replace("&", "").startswith(title_start))
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())


def test_the_layers_tab_first_shown_holds_its_plots_table_and_the_selected_token(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "the river bank")
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.select(2)
    _click_tab(qtbot, window, "Through the layers")
    pane = window.right.currentWidget()
    assert pane.heading.text().startswith("Through the layers: <b>")  # the selected token, before anything runs
    # Shown with the click itself: the plots and the table are visible children, laid out at their
    # least heights once the posted layout runs, never an empty pane waiting for the loop to turn.
    parts = (pane.cosine_plot, pane.length_plot, pane.nearest)
    assert all(part.isVisible() for part in parts)
    QApplication.sendPostedEvents()
    assert pane.cosine_plot.height() >= 130 and pane.length_plot.height() >= 70
    assert pane.nearest.columnCount() == 5 and pane.nearest.rowCount() == 0
    # As after any model load: no layer numbers or lengths before an answer.
    assert not pane.cosine_plot.getAxis("bottom").style["showValues"]
    assert not pane.length_plot.getAxis("left").style["showValues"]


def test_the_layers_plots_built_late_take_presentation_modes_size(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.state.update(presentation=True)
    _click_tab(qtbot, window, "Through the layers")
    pane = window.right.currentWidget()
    tick_font = pane.cosine_plot.getAxis("left").style["tickFont"]
    assert tick_font.pointSizeF() == TICK_TEXT_PT * presentation_scale(True)
    window.state.update(presentation=False)
    assert pane.cosine_plot.getAxis("left").style["tickFont"].pointSizeF() == TICK_TEXT_PT


def test_a_gguf_files_layers_are_said_not_run_as_the_tab_opens_and_a_folder_runs_again(
    qtbot, window, gpt2_gguf, gpt2_folder
) -> None:  # type: ignore[no-untyped-def]
    """A GGUF file gives its table, not layers this program runs: the tab says so as it opens, with nothing to
    press (the Run button said it only once pressed); the next model, a folder, may run again."""
    from embedexplorer.jobs.layer_jobs import LAYERS_WARM

    open_model(qtbot, window, str(gpt2_gguf))
    type_text(qtbot, window, "the river bank")
    with qtbot.waitSignal(answers(window, LAYERS_WARM).ready, timeout=ANSWER_TIMEOUT_MS):
        _click_tab(qtbot, window, "Through the layers")
    pane = window.right.currentWidget()
    assert pane.missing.isVisible() and "a GGUF file's layers are not run here" in pane.missing_label.text()
    assert not pane.download_button.isVisible()
    assert not pane.run_button.isEnabled() and not pane.compare_input.isEnabled()
    assert not pane.cosine_plot.isVisible()  # no empty axes under the sentence
    QApplication.sendPostedEvents()
    # ...which sits right under the second text's box, not in the middle of the room the plots left: its label
    # is as tall as its lines and starts under the box.
    label = pane.missing_label
    below = pane.compare_input.mapTo(pane, pane.compare_input.rect().bottomLeft()).y()
    assert 0 <= label.mapTo(pane, label.rect().topLeft()).y() - below <= 2 * label.fontMetrics().height()
    assert label.height() <= label.heightForWidth(label.width()) + label.fontMetrics().height(), label.height()
    open_model(qtbot, window, str(gpt2_folder))
    type_text(qtbot, window, "the river bank")
    assert not pane.missing.isVisible()
    assert pane.run_button.isEnabled() and pane.compare_input.isEnabled()
    assert pane.cosine_plot.isVisible()
