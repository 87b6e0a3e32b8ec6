"""Every dialog of the window on a screen of a given size: where it lies and what of it lies outside.

python -m tests.ui.dialog_probe SETTINGS OUT, run with QT_QPA_PLATFORM=offscreen:configfile=... naming
one screen of the size to try. Each dialog the window holds is shown as its menu shows it.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QPoint, QRect, QTimer
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QDialog, QLabel, QWidget

from embedexplorer.app import create_app, create_window


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def outside(dialog: QDialog) -> list[str]:
    """The visible buttons, labels and lists of ``dialog`` that lie past its edge (a scroll away is fine)."""
    inside = QRect(QPoint(0, 0), dialog.size())
    found = []
    for widget in dialog.findChildren(QWidget):
        if not widget.isVisible() or not isinstance(widget, (QAbstractButton, QLabel, QAbstractScrollArea)):
            continue
        parent = widget.parentWidget()
        scrolled = False
        while parent is not None and parent is not dialog:
            if isinstance(parent, QAbstractScrollArea) and parent.viewport().isAncestorOf(widget):
                scrolled = True
            parent = parent.parentWidget()
        where = QRect(widget.mapTo(dialog, QPoint(0, 0)), widget.size())
        if not scrolled and not inside.contains(where):
            name = getattr(widget, "text", lambda: "")() or widget.accessibleName() or type(widget).__name__
            found.append(f"{name!r} at {rect(where)}")
    return found


def main(settings: str, out: str) -> None:
    app = create_app()
    window = create_window(settings)
    window.show()
    # The exercises' dialogs are built when first opened: build them as their menu items would.
    desk = window.panes.exercises
    built = (desk.analogy, desk.two_texts, desk.family_distances)
    dialogs = [d for d in window.findChildren(QDialog) if d.isWindow()]
    assert all(dialog in dialogs for dialog in built)
    facts: dict[str, object] = {"screen": rect(window.screen().availableGeometry()), "dialogs": {}}

    def look() -> None:
        for dialog in dialogs:
            dialog.show()
        app.processEvents()
        QTimer.singleShot(300, report)

    def report() -> None:
        for dialog in dialogs:
            facts["dialogs"][dialog.windowTitle() or type(dialog).__name__] = {  # type: ignore[index]
                "frame": rect(dialog.frameGeometry()),
                "outside": outside(dialog),
            }
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(facts, handle)
        app.quit()

    QTimer.singleShot(300, look)
    app.exec()
    window.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
