"""Find on the map finds a word typed as the map writes it: GPT-2's "_Paris" as well as "paris".

Seen in a real window on a GPT-2 folder: the map labels its dots _Paris, _Tokyo, _New _York; typing
what was read there, "_Paris", into Find on the map said "0 found".
"""

from __future__ import annotations

from tests.ui.conftest import open_model, settle


def test_find_matches_the_labels_as_drawn(qtbot, window, gpt2_folder) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, str(gpt2_folder))
    view = window.panes.map.view
    settle()
    for typed in ("_Paris", "_paris", "paris", " Paris"):
        view.search_box.setText(typed)
        assert view.canvas.matches == ["_Paris"], typed
    view.search_box.setText("_zebra")
    assert view.canvas.matches == []
