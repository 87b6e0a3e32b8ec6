"""Words typed fast, one over the other: the Row pane ends on the last word's row, its legend naming what is drawn."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from embedexplorer.ui.panes.row_view import SUM_NAMES
from tests.gpt2_fixture import build_gpt2_tokenizer
from tests.ui.conftest import ANSWER_TIMEOUT_MS, open_model, settle

WORDS = ("Paris", "London", "Rome", "Berlin", "Madrid", "Vienna")


def _drawn(view, name: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    item = next(i for i in view.plot_widget.getPlotItem().listDataItems() if i.name() == name)
    _x, y = item.getData()
    return np.asarray([] if y is None else y, dtype=np.float64)


def _legend(view) -> list[str]:  # type: ignore[no-untyped-def]
    return [label.text for _sample, label in view.legend.items]


def test_the_row_after_fast_typing_is_the_last_words_and_the_legend_follows_the_checkbox(
    qtbot, window, gpt2_folder
) -> None:  # type: ignore[no-untyped-def]
    from safetensors.numpy import load_file

    wte = load_file(str(gpt2_folder / "model.safetensors"))["transformer.wte.weight"].astype(np.float64)
    last = build_gpt2_tokenizer().encode(WORDS[-1])[0]  # Hugging Face's own reading of the word
    open_model(qtbot, window, str(gpt2_folder))
    line, view = window.panes.token_pane.input, window.panes.row_view
    line.setFocus()
    for word in WORDS:  # each typed over the last, key by key, without waiting for any answer
        qtbot.keyClick(line, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(line, word)
    qtbot.waitUntil(lambda: f"row {last:,}</b>" in view.title.text(), timeout=ANSWER_TIMEOUT_MS)
    settle()
    assert f"row {last:,}</b>" in view.title.text()  # no older word's late answer came after it
    np.testing.assert_allclose(_drawn(view, "token row"), wte[last], rtol=1e-6, atol=1e-7)
    full = ["token row", "position row", SUM_NAMES[0]]
    assert view.show_position.isChecked() and _legend(view) == full
    qtbot.mouseClick(view.show_position, Qt.MouseButton.LeftButton, pos=view.show_position.rect().center())
    assert _legend(view) == ["token row"] and _drawn(view, "position row").size == 0
    qtbot.mouseClick(view.show_position, Qt.MouseButton.LeftButton, pos=view.show_position.rect().center())
    assert _legend(view) == full and _drawn(view, "position row").size == wte.shape[1]
