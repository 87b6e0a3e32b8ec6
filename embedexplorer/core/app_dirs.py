"""The app's own cache folder on each platform (never the Hugging Face cache), without Qt."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "EmbedExplorer"
# Tests and portable installs point the cache elsewhere with this variable.
CACHE_ENV = "EMBEDEXPLORER_CACHE_DIR"


def app_cache_dir() -> Path:
    """Where EmbedExplorer keeps what it downloads itself (table-only models).

    ``$EMBEDEXPLORER_CACHE_DIR`` when set; otherwise the platform's user cache folder:
    ``~/Library/Caches/EmbedExplorer`` on macOS, ``%LOCALAPPDATA%\\EmbedExplorer\\Cache``
    on Windows, ``$XDG_CACHE_HOME/embedexplorer`` (default ``~/.cache/embedexplorer``)
    elsewhere. The folder is not created here: reading never writes.
    """
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / APP_NAME
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip()
        return (Path(local) if local else home / "AppData" / "Local") / APP_NAME / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    # The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"
    return base / APP_NAME.lower()
