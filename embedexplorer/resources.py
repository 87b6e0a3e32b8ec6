"""Find bundled resources the same way from a source checkout and from the frozen app."""

from __future__ import annotations

import sys
from pathlib import Path


def resource_path(*parts: str) -> Path:
    """Path of a file under ``resources/``; PyInstaller unpacks it next to the executable."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    base = Path(frozen_root) if frozen_root else Path(__file__).resolve().parent.parent
    return base.joinpath("resources", *parts)
