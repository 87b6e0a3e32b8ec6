"""The map's outermost words keep their labels: a dot at the edge of the view gets its label on the side with room.

Labels are placed once per zoom; they were placed as if the map had no edge and then left out where they
crossed it, so the word furthest right (its label to its right, past the view) went unnamed however empty the
map was to its left: on a GGUF table of GPT-2's shape " Wednesday" stood alone at the top right, without a name.
The tables here are untrained (random rows), whose outermost words stand apart on the map; on a trained one (the
bundled MiniLM) they may sit in a crowd where no place is free, and the hover tip names them.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.ui.conftest import open_model, settle


@pytest.mark.parametrize("model", ["gpt2", "gguf"])
def test_the_outermost_words_are_named_inside_the_view(qtbot, window, request, model: str) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, str(request.getfixturevalue({"gpt2": "gpt2_folder", "gguf": "gpt2_gguf"}[model])))
    canvas = window.panes.map.view.canvas
    shown_map = canvas.map
    assert shown_map is not None
    settle()
    canvas.labels.layout()
    bounds = canvas.plot.getViewBox().sceneBoundingRect()
    outermost = {
        edge: shown_map.labels[int(pick(shown_map.coords[:, axis]))]
        for edge, axis, pick in (
            ("right", 0, np.argmax), ("left", 0, np.argmin), ("top", 1, np.argmax), ("bottom", 1, np.argmin)
        )
    }
    wanted, shown = set(canvas.labels.wanted), set(canvas.labels.shown)
    missing = {edge: word for edge, word in outermost.items() if word in wanted and word not in shown}
    assert missing == {}, missing
    assert all(bounds.contains(rect) for _i, rect in canvas.labels.placed)
