"""A real window, a real worker thread, real tables; settings kept under tmp_path."""

from __future__ import annotations

import pytest

LOAD_TIMEOUT_MS = 60_000
ANSWER_TIMEOUT_MS = 20_000


@pytest.fixture
def window(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    from embedexplorer.app import create_window

    win = create_window(str(tmp_path / "settings.ini"))
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()


def open_model(qtbot, window, spec: str) -> None:  # type: ignore[no-untyped-def]
    """Open a model and wait until its map is drawn (the map is requested right after loading)."""
    with qtbot.waitSignals([window.client.table_loaded, window.client.map_ready], timeout=LOAD_TIMEOUT_MS):
        window.open_model(spec)


def type_text(qtbot, window, text: str) -> object:  # type: ignore[no-untyped-def]
    """Type into the text field; return the neighbours of the token the pane then selects."""
    answers: list[object] = []
    window.client.neighbours_ready.connect(answers.append)
    try:
        window.token_pane.input.clear()
        with qtbot.waitSignal(
            window.client.tokens_ready, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == text
        ):
            qtbot.keyClicks(window.token_pane.input, text)
        selected = window.token_pane.chip_tokens[window.token_pane.selected_index()]["id"]
        # The answer may arrive in the same event pass as the tokens: record, then look.
        qtbot.waitUntil(lambda: any(a.query["id"] == selected for a in answers), timeout=ANSWER_TIMEOUT_MS)
    finally:
        window.client.neighbours_ready.disconnect(answers.append)
    return next(a for a in reversed(answers) if a.query["id"] == selected)
