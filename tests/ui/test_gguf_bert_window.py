"""A BERT-kind GGUF (Ollama's all-minilm) opens in the window and its neighbours are the bundled MiniLM's."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.test_gguf_llama_ids import model_file
from .conftest import open_model, type_text


def test_typing_monday_in_a_bert_gguf_shows_the_weekdays(qtbot, window, tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    path = model_file(tmp_path, "ggml-vocab-bert-bge.gguf", np.asarray(minilm_table.rows[:], dtype=np.float32))
    open_model(qtbot, window, str(path))
    answer = type_text(qtbot, window, "monday")
    k = window.panes.neighbours_pane.k()
    bundled = minilm_table.neighbours("monday", k)
    assert bundled.query is not None and answer.result.query is not None
    assert answer.result.query.id == bundled.query.id
    assert [n.id for n in answer.result.neighbours] == [n.id for n in bundled.neighbours]
    assert window.panes.neighbours_pane.neighbour_tokens()[0] == "_tuesday"
