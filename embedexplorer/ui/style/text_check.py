"""Does the map's text really render? The self-test's check for systems without fonts.

Without a usable font Qt draws every letter as an empty box or nothing at all, and the
picture still gets written; so the self-test asks two things a person would see:
every character of the map's texts has a glyph in the font that draws it, and the
exported PNG has ink where the caption, the legend's names and the axis titles are.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtGui import QFontInfo, QImage

from . import fonts

# A text area counts as drawn when at least this share of its pixels differ from its background.
MIN_INK_SHARE = 0.004
# Colour distance (sum over R, G, B) from the background that counts as ink.
INK_DISTANCE = 96


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html).replace("&nbsp;", " ").replace("&amp;", "&")


def ink_share(image: QImage, x: int, y: int, width: int, height: int) -> float:
    """Share of the pixels in the rectangle that differ clearly from its most common colour."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(rgb.constBits(), dtype=np.uint8).reshape(rgb.height(), rgb.bytesPerLine())
    pixels = pixels[:, : rgb.width() * 4].reshape(rgb.height(), rgb.width(), 4)[..., :3]
    area = pixels[max(0, y) : max(0, y + height), max(0, x) : max(0, x + width)].reshape(-1, 3).astype(np.int32)
    if not len(area):
        return 0.0
    colours, counts = np.unique(area, axis=0, return_counts=True)
    background = colours[int(np.argmax(counts))]
    return float(np.mean(np.abs(area - background).sum(axis=1) >= INK_DISTANCE))


def check_map_text(canvas: Any, png: str | Path) -> list[str]:
    """Problems with the text of the map ``canvas`` and its exported ``png``; empty when it renders."""
    problems: list[str] = []
    font = canvas.labels.font
    if fonts.register() is None:
        problems.append(f"the bundled font ({fonts.FAMILY}) was not found in resources/fonts")
    elif QFontInfo(font).family() != fonts.FAMILY:
        problems.append(f"the map draws with {QFontInfo(font).family()!r}, not the bundled {fonts.FAMILY}")
    texts = {
        "family names": " ".join(canvas.families),
        "caption": _plain(canvas.caption_html),
        "word labels": " ".join(canvas.labels.shown),
    }
    for what, text in texts.items():
        missing = fonts.missing_glyphs(text, font)
        if missing:
            shown = ", ".join(fonts.escape(char) for char in missing[:8])
            problems.append(f"{len(missing)} character(s) of the {what} have no glyph in the map's font ({shown})")
    image = QImage(str(png))
    if image.isNull():
        return [*problems, f"the exported picture {png} cannot be read"]
    if not canvas.export_text_areas:
        problems.append("the export recorded no text areas")
    for what, rect in canvas.export_text_areas.items():
        share = ink_share(image, int(rect.x()), int(rect.y()), int(rect.width()), int(rect.height()))
        if share < MIN_INK_SHARE:
            problems.append(f"the {what} area of the exported picture is blank ({share:.2%} ink)")
    return problems
