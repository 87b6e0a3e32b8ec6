"""Check with the model, in the Health tab, as a person uses it: on the GPT-2-shaped fixture and the bundled MiniLM.

The probabilities the list shows are checked against transformers' own model and tokenizer:
``torch.softmax(model(ids).logits[0, -1], -1)[token]`` after the same repeat prompt.
"""

from __future__ import annotations

import csv

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from transformers import AutoModelForCausalLM, AutoTokenizer

from embedexplorer.core.health.repeat_check import AFTER, BEFORE
from embedexplorer.jobs.health_jobs import HEALTH, HEALTH_VERIFY, VerifyRequest
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model

HEALTH_TIMEOUT_MS = ANSWER_TIMEOUT_MS * 6
MODEL_TIMEOUT_MS = LOAD_TIMEOUT_MS * 4  # the model's process starts, imports torch and loads GPT-2 small


def _column(pane, title: str) -> int | None:  # type: ignore[no-untyped-def]
    titles = [pane.model.headerData(c, Qt.Orientation.Horizontal) for c in range(pane.model.columnCount())]
    return titles.index(title) if title in titles else None


def _open_health(qtbot, window, spec: str):  # type: ignore[no-untyped-def]
    open_model(qtbot, window, spec)
    pane = window.panes.health_pane
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(pane)
    return pane


def test_check_with_the_model_shows_the_models_repeat_probability(
    qtbot, window, gpt2_folder, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    pane = _open_health(qtbot, window, str(gpt2_folder))
    bar = pane.verify
    assert bar.check_button.isEnabled() and _column(pane, "repeat P") is None
    # A person asks about the top 5: types 5 in the box, then clicks the button.
    bar.count.selectAll()
    qtbot.keyClicks(bar.count, "5")
    assert bar.count.value() == 5 and window.settings.health_verify_count == 5  # remembered
    with qtbot.waitSignal(answers(window, HEALTH_VERIFY).ready, timeout=MODEL_TIMEOUT_MS):
        qtbot.mouseClick(bar.check_button, Qt.MouseButton.LeftButton)
        assert bar.stop_button.isEnabled() and not bar.check_button.isEnabled()
    column = _column(pane, "repeat P")
    assert column is not None and column > 4  # beside the indicators
    shown = [pane.model.index(r, column).data() for r in range(7)]
    assert all(shown[:5]) and shown[5:] == ["", ""]
    assert "repeat P" in bar.note.text() and bar.check_button.isEnabled()
    # The oracle: transformers' own tokenizer builds the prompt, its own model gives the probability.
    words = AutoTokenizer.from_pretrained(str(gpt2_folder))
    full = AutoModelForCausalLM.from_pretrained(str(gpt2_folder), use_safetensors=True).eval()
    with torch.inference_mode():
        for row in range(5):
            token = int(pane.model.index(row, 1).data())
            ids = [*words.encode(BEFORE), token, *words.encode(AFTER)]
            want = float(torch.softmax(full(torch.tensor([ids])).logits[0, -1], -1)[token])
            assert float(shown[row]) == pytest.approx(want, rel=1e-3)
    # The export carries the check: the person saves the list as CSV.
    target = tmp_path / "health.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "CSV (*.csv)"))
    qtbot.mouseClick(pane.export_button, Qt.MouseButton.LeftButton)
    lines = [line for line in target.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    saved = list(csv.DictReader(lines))
    assert [float(r["repeat_probability"]) for r in saved[:5]] == pytest.approx([float(v) for v in shown[:5]], rel=1e-3)
    assert saved[5]["repeat_probability"] == ""
    # Asked again, the person changes their mind and stops it: nothing is lost, the button is back.
    bar.count.setValue(200)
    qtbot.mouseClick(bar.check_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.stop_button, Qt.MouseButton.LeftButton)
    assert bar.note.text().startswith("Stopped") and bar.check_button.isEnabled()
    assert pane.model.index(0, column).data() == shown[0]  # the earlier answer stays on screen


@pytest.mark.parametrize(
    ("model", "why"), [("bundled", "next-token head"), ("gguf", "a GGUF file's layers are not run")]
)
def test_check_with_the_model_says_at_once_why_it_cannot_be_asked(qtbot, window, request, model: str, why: str) -> None:  # type: ignore[no-untyped-def]
    """An encoder (the bundled MiniLM) has no next-token head and a GGUF file's layers are not run here: the tab
    says so in one sentence as its list is shown, with the button off (it said so only once the button was pressed,
    and the sentence is the one the check itself ends with)."""
    pane = _open_health(qtbot, window, "bundled" if model == "bundled" else str(request.getfixturevalue("gpt2_gguf")))
    rows = pane.model.rowCount()
    bar = pane.verify
    qtbot.waitUntil(lambda: bar.note.text().startswith("Not available:"), timeout=ANSWER_TIMEOUT_MS)
    note = bar.note.text()
    assert why in note and not bar.check_button.isEnabled()
    # The check itself, asked as the button would ask it, ends with the same sentence.
    with qtbot.waitSignal(answers(window, HEALTH_VERIFY).ready, timeout=ANSWER_TIMEOUT_MS) as said:
        window.client.ask(HEALTH_VERIFY, VerifyRequest((1, 2, 3)), pane)
    assert f"Not available: {said.args[0].unavailable}" == note
    assert _column(pane, "repeat P") is None and pane.model.rowCount() == rows
    if model == "bundled":  # its unused rows lead the list
        assert pane.model.index(0, 2).data().startswith("[unused")
