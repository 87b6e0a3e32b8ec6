"""Issue 35, item 11, in the packaged app: a typed pizza and party popper are drawn on a machine with no emoji font.

The .deb only recommends fonts-noto-color-emoji, so the app bundles an emoji font: Noto Color
Emoji cut by packaging/spec_common.emoji_font_files to the emoji with a code point of their
own. Here that very function makes the file into a stand-in for the app's folder, Qt is shown
no system font at all (an empty fontconfig), and the pasted text must still be drawn in colour.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NO_FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>{empty}</dir><cachedir>{cache}</cachedir></fontconfig>
"""


def spec_common():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("spec_common", ROOT / "packaging" / "spec_common.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_pasted_emoji_are_drawn_by_the_bundled_subset_where_the_system_has_no_font(tmp_path) -> None:
    pytest.importorskip("fontTools", reason="the packaging build's font cutter (build-linux.sh installs it)")
    packaging = spec_common()
    [subset] = packaging.emoji_font_files()
    # What the bundle carries: 3 MiB of the font's 10.5, every emoji with a code point of its own.
    assert subset.stat().st_size < 0.4 * packaging.EMOJI_SOURCE.stat().st_size
    bundle = tmp_path / "EmbedExplorer"
    (bundle / "resources" / "fonts").mkdir(parents=True)
    for path in [*packaging.font_files(), subset]:
        shutil.copy(path, bundle / "resources" / "fonts" / path.name)
    (tmp_path / "empty").mkdir()
    config = tmp_path / "fonts.conf"
    config.write_text(NO_FONTS.format(empty=tmp_path / "empty", cache=tmp_path / "cache"), encoding="utf-8")
    out = tmp_path / "report.json"
    env = {**os.environ, "FONTCONFIG_FILE": str(config), "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "tests.ui.emoji_probe", str(bundle), str(out)],
                   cwd=ROOT, env=env, check=True, timeout=120, capture_output=True)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["text"] == "pizza \U0001F355 party \U0001F389"
    assert report["emoji_file"] == str(bundle / "resources" / "fonts" / "NotoColorEmoji.ttf")
    assert "Noto Color Emoji" in report["families"]  # the bundle's file, registered: fontconfig shows no font
    assert report["undrawn"] == []
    assert report["coloured"] > 20, f"{report['coloured']} coloured pixels: the emoji are not drawn"
