"""Pictures of vocabulary health for docs/health.md, rendered offscreen (QWidget.grab), on the bundled model.

    QT_QPA_PLATFORM=offscreen python docs/make_health_pictures.py docs

Opens the window, turns to the Vocabulary health tab, waits for the answer, clicks the
first token, saves the tab; then the whole-vocabulary map coloured by health.
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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs")
