"""Draw a family map into a PNG without a window: used by ``embedexplorer map --png``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.constants import EXPORT_WIDTH_RANGE

if TYPE_CHECKING:
    from ..core.maps import FamilyMap

# The widest map drawn, as the window's export dialog allows: 20,000 x 15,200 pixels take 1.2 GB.
MAX_PNG_WIDTH = EXPORT_WIDTH_RANGE[1]


def export_family_map_png(family_map: FamilyMap, model_name: str, path: str | Path, width: int = 1600) -> None:
    """Render offscreen with the same canvas the window uses and write ``path``."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from ..core.errors import EmbedExplorerError
    from .map_canvas import MapCanvas

    if not 1 <= width <= MAX_PNG_WIDTH:
        raise EmbedExplorerError(f"A map is drawn at most {MAX_PNG_WIDTH:,} pixels wide, not {width:,}.")
    # Qt's own warnings would reach the terminal as many lines; keep them, and say the first
    # one only if the drawing fails.
    heard: list[str] = []
    previous = qInstallMessageHandler(lambda _kind, _context, message: heard.append(message))
    try:
        app = QApplication.instance() or QApplication(["embedexplorer"])
        canvas = MapCanvas()
        canvas.resize(1000, 760)
        canvas.set_map(family_map, model_name)
        canvas.show_legend(True)
        app.processEvents()
        try:
            canvas.export_png(path, width=width)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            said = f" (Qt said: {heard[0]})" if heard else ""
            raise EmbedExplorerError(f"Cannot write the map to {path}: {reason}{said}") from exc
        finally:
            canvas.deleteLater()
    finally:
        qInstallMessageHandler(previous)
