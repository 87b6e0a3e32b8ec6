"""The window as the packaged app starts it, on a machine whose fonts are hidden from Qt: is a pasted pizza drawn?

python -m tests.ui.emoji_probe BUNDLE OUT: BUNDLE stands for the frozen app's folder (its resources/fonts
holds what the build put there); the report says which characters of the pasted text Qt would draw as
empty boxes and how many coloured pixels the Text box shows.
"""

from __future__ import annotations

import json
import sys


def main(bundle: str, out: str) -> None:
    sys._MEIPASS = bundle  # type: ignore[attr-defined]  # where the frozen app finds resources/
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QFontDatabase
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from embedexplorer.app import create_app, create_window
    from embedexplorer.ui.style import fonts

    app = create_app()
    window = create_window(f"{bundle}/settings.ini")
    window.show()
    box = window.panes.token_pane.input
    text = "pizza \U0001F355 party \U0001F389"
    QApplication.clipboard().setText(text)
    box.setFocus()
    QTest.keyClick(box, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)  # over the text already there
    QTest.keyClick(box, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    for _ in range(5):
        app.processEvents()
    picture = box.grab().toImage()
    colours = (picture.pixelColor(x, y) for x in range(picture.width()) for y in range(picture.height()))
    coloured = sum(1 for c in colours if max(c.red(), c.green(), c.blue()) - min(c.red(), c.green(), c.blue()) > 80)
    report = {
        "text": box.text(),
        "undrawn": fonts.undrawn(text, box.font()),
        "coloured": coloured,
        "emoji_file": str(fonts.emoji_file()),
        "families": QFontDatabase.families(),
    }
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    window.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
