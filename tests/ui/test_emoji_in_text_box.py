"""Issue 35, item 11: emoji a person types in the Text box are drawn (with .ci/setup's emoji font), not as boxes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextLayout
from PySide6.QtWidgets import QApplication

from embedexplorer.jobs.table_jobs import TOKENS
from embedexplorer.ui.style import fonts
from tests.ui.bundled_type import bundled_type  # noqa: F401 - a fixture
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle
from tests.ui.dialogs import focus_on

TYPED = "pizza \U0001F355 party \U0001F389"


def glyphs_missing(text: str, font) -> list[str]:  # type: ignore[no-untyped-def]
    """The characters Qt lays out with glyph 0 (the empty box) in ``font``, fallback fonts included."""
    missing = []
    for char in {c for c in text if not c.isspace()}:
        layout = QTextLayout(char, font)
        layout.beginLayout()
        layout.createLine()
        layout.endLayout()
        runs = layout.glyphRuns()
        if not runs or any(index == 0 for run in runs for index in run.glyphIndexes()):
            missing.append(char)
    return missing


def test_pizza_and_party_typed_in_the_text_box_are_drawn(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    assert fonts.emoji_file() is not None, "the emoji font .ci/setup installs (fonts-noto-color-emoji) is missing"
    open_model(qtbot, window, "bundled")
    box = window.panes.token_pane.input
    # Emoji come from a picker or a paste, not from single key presses: the person pastes them.
    QApplication.clipboard().setText(TYPED)
    focus_on(qtbot, box)
    box.clear()
    tokens = answers(window, TOKENS).ready
    with qtbot.waitSignal(tokens, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == TYPED):
        qtbot.keyClick(box, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    settle()
    assert box.text() == TYPED
    assert glyphs_missing(TYPED, box.font()) == []
    # And on screen: the emoji are drawn in colour where they stand (a box would be grey lines).
    picture = box.grab().toImage()
    colours = (picture.pixelColor(x, y) for x in range(picture.width()) for y in range(picture.height()))
    coloured = sum(1 for c in colours if max(c.red(), c.green(), c.blue()) - min(c.red(), c.green(), c.blue()) > 80)
    assert coloured > 20, f"{coloured} coloured pixels: the emoji are not drawn"
