"""Where to save an export: the save dialog, the kind's suffix added, an existing file replaced only after asking.

The dialog confirms only the name as typed: "health" does not exist, so it asks nothing, and
then ".csv" is added. The question is asked here, once the name written is known.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from ..style.plain_text import plain_tip


def ask_save_target(parent: QWidget, title: str, start: Path, kinds: str, suffixes: tuple[str, ...]) -> str:
    """A file name from the save dialog ending in one of ``suffixes`` (the chosen kind's when it ends
    in none); "" when cancelled or when the person keeps the file already there."""
    path, chosen = QFileDialog.getSaveFileName(
        parent, title, str(start), kinds, options=QFileDialog.Option.DontConfirmOverwrite  # asked below
    )
    if not path:
        return ""
    if Path(path).suffix.lower() not in suffixes:
        path += next((s for s in suffixes if s[1:] in chosen.lower()), suffixes[0])
    if Path(path).exists() and not confirm_replace(parent, path):
        return ""
    return path


def confirm_replace(parent: QWidget, path: str) -> bool:
    """Ask before ``path`` is replaced; True to replace it."""
    answer = QMessageBox.question(
        parent,
        "Replace the file?",
        plain_tip(f"{Path(path).name} already exists in {Path(path).parent}. Replace it?"),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


def not_exported(what: str, target: str | Path, reason: str) -> str:
    """The one sentence an export that failed says: what, where, why, and that nothing was lost."""
    return f"The {what} was not exported to {target} ({reason.rstrip('.')}); nothing was overwritten."


def refused_export(sentence: str) -> str:
    """An export refused in one sentence of its own (a folder named, a format unknown): it overwrote nothing."""
    return f"{sentence.rstrip().rstrip('.')}; nothing was overwritten."
