"""Every pane opens alone (``python -m embedexplorer.ui.preview PANE``) on the bundled model, offscreen.

A pane that only works beside another (it listens on another pane's channel, or reaches into
it) shows nothing here: each must show its own answer about the selected token.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtWidgets import QWidget

from embedexplorer.core.common.constants import COMPARE_K
from embedexplorer.jobs.table_jobs import LOAD
from embedexplorer.ui.preview import entry_named, preview_window
from embedexplorer.ui.window.pane_list import PANES
from embedexplorer.ui.window.plugging import Place

from .conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS


def _shows(window: Any, name: str) -> Callable[[], bool]:
    """What the pane shows once the model is open and "monday" is selected (a real answer, from its own question)."""
    pane = getattr(window.panes, name)
    if name == "token_pane":
        return lambda: [t.token for t in pane.chip_tokens] == ["monday"]
    if name == "neighbours_pane":
        return lambda: {"tuesday", "friday"} <= set(pane.neighbour_tokens())
    if name == "row_view":
        return lambda: "monday" in pane.title.text()
    if name == "map":
        return lambda: pane.view.canvas.selection[0] == "monday" and "tuesday" in pane.view.canvas.ring_names
    if name == "directions_pane":
        window.right.setCurrentWidget(pane)  # its first showing asks for the default direction
        return lambda: len(pane.end_tokens(highest=True)) > 0
    if name == "layers_pane":
        window.right.setCurrentWidget(pane)
        return lambda: "<b>monday</b> at place 1" in pane.heading.text() and pane.run_button.isEnabled()
    if name == "health_pane":
        window.right.setCurrentWidget(pane)  # its first showing checks the vocabulary
        return lambda: pane.report is not None and pane.model.rowCount() > 0
    if name in ("guess_bar", "suggestions"):
        window.state.update(guess_mode=True)
        return lambda: pane.isVisible()
    if name == "local_models":
        dialog = pane.show_dialog()
        return lambda: dialog.isVisible()
    if name == "exercises":
        pane.show_analogies()
        return lambda: pane.analogy.isVisible()
    if name == "teaching":
        return lambda: pane.save_action.isEnabled()
    if name == "compare":
        return lambda: pane.pane.k_box.value() == COMPARE_K  # as `embedexplorer compare` counts
    raise AssertionError(f"say what the {name} pane shows alone")


@pytest.mark.parametrize("name", [entry.name for entry in PANES])
def test_each_pane_works_alone_on_the_bundled_model(qtbot, tmp_path, name: str) -> None:
    entry = entry_named(name)
    window = preview_window(entry, str(tmp_path / "settings.ini"))
    qtbot.addWidget(window)
    window.show()
    assert list(vars(window.panes)) == [name]
    pane = getattr(window.panes, name)
    # Its place and its menus, as it declares them.
    if entry.pane.PLACE is Place.RIGHT_TAB:
        assert window.right.tabText(window.right.indexOf(pane)) == entry.pane.TITLE
    elif entry.pane.PLACE is not Place.NOWHERE:
        assert isinstance(pane, QWidget) and window.centralWidget().isAncestorOf(pane)
    titles = [action.text() for action in window.menuBar().actions()]
    assert titles[0] == "&File" and titles[-1] == "&Help" and set(entry.pane.MENUS) <= set(titles)
    with qtbot.waitSignal(window.client.channel(LOAD, window.model_bar).ready, timeout=LOAD_TIMEOUT_MS):
        window.open_model("bundled")
    qtbot.waitUntil(lambda: window.state.selection is not None, timeout=ANSWER_TIMEOUT_MS)
    shows = _shows(window, name)
    qtbot.waitUntil(shows, timeout=LOAD_TIMEOUT_MS)
    assert window.message_bar.text() == ""  # no error said
    window.close()


def test_the_preview_command_lists_the_panes_and_opens_one() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "embedexplorer.ui.preview", "--list"], capture_output=True, text=True, timeout=120
    )
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert listed.returncode == 0 and names == [e.name for e in PANES]
    wrong = subprocess.run(
        [sys.executable, "-m", "embedexplorer.ui.preview", "nothing"], capture_output=True, text=True, timeout=120
    )
    assert wrong.returncode == 2 and "no pane is called 'nothing'" in wrong.stderr
    opened = subprocess.run(
        [sys.executable, "-m", "embedexplorer.ui.preview", "map", "--quit-after", "8"],
        capture_output=True, text=True, timeout=180, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert opened.returncode == 0, opened.stderr
