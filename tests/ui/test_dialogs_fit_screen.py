"""Issue 35, item 3: every dialog fits the screen it opens on (a 1024x640 laptop included).

Qt's offscreen platform takes its screen's size from a file, so each size is its own process
(tests/ui/dialog_probe.py) that opens every dialog of the window as its menu does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("width,height", [(1600, 1000), (1366, 768), (1024, 640)])
def test_every_dialog_opens_inside_the_screen_with_all_of_it_inside(tmp_path: Path, width: int, height: int) -> None:
    screens = tmp_path / "screen.json"
    screens.write_text(json.dumps({
        "synchronousWindowSystemEvents": False, "windowFrameMargins": False,
        "screens": [{"name": "laptop", "x": 0, "y": 0, "width": width, "height": height,
                     "logicalDpiX": 96, "logicalDpiY": 96, "dpr": 1}],
    }), encoding="utf-8")
    out = tmp_path / "dialogs.json"
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screens}", "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "tests.ui.dialog_probe", str(tmp_path / "settings.ini"), str(out)],
        cwd=ROOT, env=env, timeout=180, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    facts = json.loads(out.read_text(encoding="utf-8"))
    assert facts["screen"] == [0, 0, width, height]
    assert len(facts["dialogs"]) >= 4, facts["dialogs"]
    for title, dialog in facts["dialogs"].items():
        x, y, w, h = dialog["frame"]
        assert x >= 0 and y >= 0 and x + w <= width and y + h <= height, f"{title!r} at {dialog['frame']}"
        assert dialog["outside"] == [], f"{title!r}: {dialog['outside']}"
