"""Draw a family map into a PNG without a window: used by ``embedexplorer map --png``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.maps import FamilyMap


def export_family_map_png(family_map: FamilyMap, model_name: str, path: str | Path, width: int = 1600) -> None:
    """Render offscreen with the same canvas the window uses and write ``path``."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from ..core.errors import EmbedExplorerError
    from .map_canvas import MapCanvas

    app = QApplication.instance() or QApplication(["embedexplorer"])
    canvas = MapCanvas()
    canvas.resize(1000, 760)
    canvas.set_map(family_map, model_name)
    canvas.show_legend(True)
    app.processEvents()
    try:
        canvas.export_png(path, width=width)
    except OSError as exc:
        raise EmbedExplorerError(f"Cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        canvas.deleteLater()
