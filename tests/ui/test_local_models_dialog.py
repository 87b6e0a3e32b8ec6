"""File > Local models... as people use it: search, Enter or double-click opens; missing files are not offered."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from embedexplorer.jobs.source_jobs import LOCAL_MODELS
from embedexplorer.jobs.table_jobs import LOAD
from embedexplorer.ui.panes.local_models import LocalModelsDialog

from ..core.test_ollama_names import store_model
from ..gguf_fixture import write_gguf
from .conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, settle


@pytest.fixture()
def fake_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    import huggingface_hub.constants

    rows = np.random.default_rng(5).standard_normal((320, 48)).astype(np.float16)
    small = write_gguf(tmp_path / "small.gguf", rows, Q.F16)
    home = tmp_path / "home"
    lm = home / ".lmstudio" / "models" / "pub" / "lm-GGUF"
    lm.mkdir(parents=True)
    shutil.copy(small, lm / "lm-model-F16.gguf")
    (lm / "gone-F16.gguf").symlink_to(tmp_path / "deleted.gguf")
    store_model(tmp_path / "ollama", small, ("registry.ollama.ai", "library", "tiny", "latest"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "ollama"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    return {"lm": lm / "lm-model-F16.gguf"}


def open_dialog(qtbot, window) -> LocalModelsDialog:  # type: ignore[no-untyped-def]
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    action = next(a for a in file_menu.actions() if a.text() == "Local &models...")
    with qtbot.waitSignal(answers(window, LOCAL_MODELS).ready, timeout=ANSWER_TIMEOUT_MS):
        action.trigger()
    dialog = window.panes.local_models.dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def shown_names(dialog: LocalModelsDialog) -> list[str]:
    return [dialog.shown.index(row, 0).data() for row in range(dialog.shown.rowCount())]


def test_search_then_enter_opens_the_model(fake_machine, window, qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, window)
    assert sorted(shown_names(dialog)) == [
        "all-MiniLM-L6-v2 (bundled)", "pub/lm-GGUF/gone-F16", "pub/lm-GGUF/lm-model-F16", "tiny:latest",
    ]
    row = shown_names(dialog).index("tiny:latest")
    cells = [dialog.shown.index(row, column).data() for column in range(5)]
    assert cells[1:4] == ["Ollama, GGUF", cells[2], "F16"] and cells[2].endswith("KiB")
    qtbot.keyClicks(dialog.search, "TINY")
    assert shown_names(dialog) == ["tiny:latest"]
    with qtbot.waitSignal(answers(window, LOAD).ready, timeout=LOAD_TIMEOUT_MS) as loaded:
        qtbot.keyClick(dialog.search, Qt.Key.Key_Return)
    assert loaded.args[0].name == "ollama:tiny:latest" and loaded.args[0].facts.rows == 320
    assert not dialog.isVisible()
    assert window.model_bar.box.currentText() == "ollama:tiny:latest"


def test_a_missing_file_is_shown_but_not_offered(fake_machine, window, qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, window)
    qtbot.keyClicks(dialog.search, "gone")
    assert shown_names(dialog) == ["pub/lm-GGUF/gone-F16"]
    assert "missing: file not found" in dialog.shown.index(0, 4).data()
    assert not dialog.open_button.isEnabled()
    qtbot.keyClick(dialog.search, Qt.Key.Key_Return)  # nothing to open: the dialog stays
    settle()
    assert dialog.isVisible() and window.state.model_spec != str(fake_machine["lm"])


def test_double_click_opens_and_the_model_box_completes(fake_machine, window, qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, window)
    completions = window.model_bar.box.completer().model().stringList()
    assert "ollama:tiny:latest" in completions and str(fake_machine["lm"]) in completions
    assert not any("gone-F16" in spec for spec in completions)
    dialog.search.setText("lm-model")
    index = dialog.shown.index(0, 0)
    rect = dialog.table.visualRect(index)
    with qtbot.waitSignal(answers(window, LOAD).ready, timeout=LOAD_TIMEOUT_MS) as loaded:
        qtbot.mouseClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert loaded.args[0].name == str(fake_machine["lm"])


def test_a_fresh_machine_lists_the_bundled_model_and_opens_it(tmp_path, window, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 35, item 12: nothing in the usual places, yet the list is not empty: the bundled model is there."""
    import huggingface_hub.constants

    monkeypatch.setenv("HOME", str(tmp_path / "fresh-home"))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "no-ollama"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    dialog = open_dialog(qtbot, window)
    assert shown_names(dialog) == ["all-MiniLM-L6-v2 (bundled)"]
    assert dialog.shown.index(0, 1).data() == "Bundled with EmbedExplorer, safetensors"
    rect = dialog.table.visualRect(dialog.shown.index(0, 0))
    QTest.mouseMove(dialog.table.viewport(), rect.center())
    qtbot.wait(200)
    qtbot.mouseClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(answers(window, LOAD).ready, timeout=LOAD_TIMEOUT_MS) as loaded:
        qtbot.keyClick(dialog.table, Qt.Key.Key_Return)  # the row chosen, Enter opens it
    assert loaded.args[0].facts.rows == 30522
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=LOAD_TIMEOUT_MS)  # it closes as the model opens


def test_the_model_box_completes_from_the_listing_asked_after_the_first_frame(fake_machine, window, qtbot) -> None:  # type: ignore[no-untyped-def]
    box = window.model_bar.box
    listed = window.client.channel(LOCAL_MODELS, box).ready
    with qtbot.waitSignal(listed, timeout=ANSWER_TIMEOUT_MS):
        pass  # asked by itself once the window has painted: nobody opened the dialog
    box.setFocus()
    box.lineEdit().clear()
    QTest.keyClicks(box.lineEdit(), "tiny")
    popup = box.completer().popup()
    qtbot.waitUntil(popup.isVisible, timeout=ANSWER_TIMEOUT_MS)
    offered = [popup.model().index(row, 0).data() for row in range(popup.model().rowCount())]
    assert offered == ["ollama:tiny:latest"]
