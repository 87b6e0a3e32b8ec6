"""Pictures of vocabulary health for docs/health.md, rendered offscreen (QWidget.grab), on the bundled model.

    QT_QPA_PLATFORM=offscreen python docs/make_health_pictures.py docs
    QT_QPA_PLATFORM=offscreen python docs/make_health_pictures.py docs --verify

Opens the window, turns to the Vocabulary health tab, waits for the answer, clicks the
first token, saves the tab; then the whole-vocabulary map coloured by health. ``--verify``
instead builds the GPT-2-shaped fixture (random weights) in a temporary folder, checks its
vocabulary and clicks Check with the model, and saves the tab with the repeat column.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docs.make_screenshots import open_window, wait, wait_for  # noqa: E402


def main(folder: str) -> None:
    out, _app, window = open_window(folder, "1400x860", "bundled")
    window.resize(1500, 900)  # the offscreen screen is 800 x 800; a window may be larger than it
    wait(500)
    pane = window.panes.health_pane
    tabs = pane.parentWidget()
    while tabs is not None and not hasattr(tabs, "setCurrentWidget"):
        tabs = tabs.parentWidget()
    tabs.setCurrentWidget(pane)  # type: ignore[union-attr]
    wait_for(lambda: pane.report is not None, 180_000)
    pane.table.selectRow(0)
    wait(1500)
    pane.grab().save(str(out / "health-tab-minilm.png"))
    window.grab().save(str(out / "health-window-minilm.png"))
    window.panes.map.view.request_word_map("all")
    wait_for(lambda: len(window.panes.map.view.canvas.map or []) > 20000, 180_000)
    pane.colour_action.trigger()
    wait_for(lambda: window.state.map_change is not None, 60_000)
    wait(8000)
    window.panes.map.grab().save(str(out / "health-map-minilm.png"))
    window.close()


def verify_picture(folder: str) -> None:
    import tempfile

    from tests.gpt2_fixture import build_gpt2_folder

    model = build_gpt2_folder(Path(tempfile.mkdtemp()) / "gpt2-random")
    out, _app, window = open_window(folder, "1400x860", str(model))
    window.resize(1500, 900)
    wait(500)
    pane = window.panes.health_pane
    window.right.setCurrentWidget(pane)
    wait_for(lambda: pane.report is not None, 180_000)
    pane.verify.check_button.click()
    wait_for(lambda: pane.model.repeat is not None, 600_000)
    wait(1000)
    pane.grab().save(str(out / "health-verify-gpt2.png"))
    window.close()


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--verify"]
    (verify_picture if "--verify" in sys.argv else main)(arguments[0] if arguments else "docs")
