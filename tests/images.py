"""Read back PNG files the app wrote, with Qt's own decoder (no extra imaging library)."""

from __future__ import annotations

from pathlib import Path


def png_facts(path: Path | str) -> tuple[int, int, int]:
    """Width, height and the number of distinct colours in a sample of the picture."""
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), f"{path} is not a readable image"
    step_x, step_y = max(1, image.width() // 200), max(1, image.height() // 200)
    colours = {
        image.pixel(x, y) for x in range(0, image.width(), step_x) for y in range(0, image.height(), step_y)
    }
    return image.width(), image.height(), len(colours)
