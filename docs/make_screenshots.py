"""Screenshots of the window doing the chapter's exercises, on the bundled model.

Run under a virtual screen of the size to show (no window manager needed):

    Xvfb :93 -screen 0 1366x768x24 &
    DISPLAY=:93 python docs/make_screenshots.py /tmp/shots 1366x768
    DISPLAY=:93 python docs/make_screenshots.py /tmp/shots 1366x768 --layers bundled layers-minilm.png

The word is typed through the X server with xdotool, as a learner types it. The main window
is taken from the whole screen with ImageMagick's ``import -window root`` (what a learner
sees, window frame and all); the exercise dialogs are grabbed on their own. Presentation mode
is shot too, with the map exported in it as PNG and as SVG (rendered to PNG by Qt's
QSvgRenderer, to be looked at).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication


def wait(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_for(condition, timeout_ms: int = 60_000) -> None:  # type: ignore[no-untyped-def]
    waited = 0
    while not condition():
        wait(50)
        waited += 50
        if waited > timeout_ms:
            raise TimeoutError("the window did not get there in time")


def open_window(folder: str, size: str, model: str):  # type: ignore[no-untyped-def]
    """The output folder, the application and a fresh window (its own settings) of ``size`` with ``model`` open."""
    from embedexplorer.app import create_window

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv)
    width, height = (int(n) for n in size.split("x"))
    window = create_window(str(Path(tempfile.mkdtemp()) / "settings.ini"))
    window.setGeometry(0, 0, width, height)
    window.fit_to_screen()
    window.show()
    window.open_model(model)
    wait_for(lambda: window.state.loaded and window.panes.map.view.can_export)
    return out, app, window


def main(folder: str, size: str) -> None:
    out, app, window = open_window(folder, size, "bundled")
    type_into(window, "monday")
    wait_for(lambda: window.panes.neighbours_pane.neighbour_tokens()[:1] == ["tuesday"])
    wait_for(lambda: window.panes.map.view.canvas.selection[0] == "monday")
    wait(300)
    shot(out / f"window-{size}.png")
    if window.row_placement.compact:  # the row pane beside the map on a short screen
        window.right.setCurrentWidget(window.panes.row_view)
        wait(300)
        shot(out / f"window-row-tab-{size}.png")
        window.right.setCurrentWidget(window.panes.map)

    # For teachers: presentation mode, on screen and in the exported map.
    window.panes.teaching.presentation_action.setChecked(True)
    wait(500)
    shot(out / f"presentation-{size}.png")
    window.panes.map.exports.export_to(str(out / f"map-presentation-{size}.png"), 1600)
    window.panes.map.exports.export_to(str(out / f"map-presentation-{size}.svg"))
    svg_to_png(out / f"map-presentation-{size}.svg", out / f"map-presentation-{size}-svg.png")
    window.panes.teaching.presentation_action.setChecked(False)
    wait(300)

    window.panes.exercises.guess_action.setChecked(True)
    window.panes.token_pane.set_text("paris")
    wait_for(lambda: window.panes.suggestions.tokens() != [])
    wait_for(lambda: window.panes.guess_bar.query() == "paris")
    wait(300)
    shot(out / f"guess-hidden-{size}.png")
    window.panes.guess_bar.input.setText("france")
    window.panes.guess_bar._on_guess()
    wait_for(lambda: "france" in window.panes.guess_bar.result.text())
    wait(300)
    shot(out / f"guess-revealed-{size}.png")
    window.panes.exercises.guess_action.setChecked(False)

    desk = window.panes.exercises
    desk.show_analogies()
    desk.analogy.pane.expected.setText("queen")
    desk.analogy.pane.submit()
    wait_for(lambda: desk.analogy.pane.tokens() != [])
    wait(200)
    desk.analogy.grab().save(str(out / f"analogy-{size}.png"))
    desk.analogy.hide()

    desk.show_two_texts()
    wait_for(lambda: "Same token id" in desk.two_texts.pane.verdict.text())
    wait(200)
    desk.two_texts.grab().save(str(out / f"two-texts-{size}.png"))
    desk.two_texts.hide()

    desk.ask_furthest_family()
    wait_for(lambda: desk.family_distances._distances is not None)
    desk.family_distances.guess("days")
    wait(200)
    desk.family_distances.grab().save(str(out / f"furthest-family-{size}.png"))
    desk.family_distances.hide()
    window.close()
    app.quit()


def layers_shot(folder: str, size: str, model: str, name: str) -> None:
    """The chapter's two "bank"s through every layer of ``model`` (a folder, or "bundled"), saved as ``name``.

    "the river bank" is typed and its third token, "bank", chosen; "my bank account" is the second text.
    """
    out, app, window = open_window(folder, size, model)
    window.right.setCurrentWidget(window.panes.layers_pane)
    type_into(window, "the river bank")
    wait_for(lambda: len(window.panes.token_pane.chip_tokens) == 3)
    window.panes.token_pane.select(2)
    pane = window.panes.layers_pane
    wait_for(lambda: pane.run_button.isEnabled())
    pane.set_compare("my bank account")
    pane.request_layers()
    wait_for(lambda: "after layer" in pane.headline.text(), 180_000)
    wait(500)
    shot(out / name)
    window.close()
    app.quit()


def shot(path: Path) -> None:
    QApplication.processEvents()
    subprocess.run(["import", "-window", "root", str(path)], check=True)


def type_into(window, text: str) -> None:  # type: ignore[no-untyped-def]
    """Type into the text field as a learner does: keys through the X server (xdotool), not setText."""
    window.activateWindow()
    window.panes.token_pane.focus()  # the old text selected, so the typing replaces it
    wait(200)
    subprocess.run(["xdotool", "windowfocus", "--sync", str(int(window.winId()))], check=True)
    # Not waited for here: the keys reach the window once its event loop runs again.
    subprocess.Popen(["xdotool", "type", "--delay", "60", text])
    wait_for(lambda: window.panes.token_pane.text() == text, 20_000)


def svg_to_png(svg: Path, png: Path) -> None:
    """Render an exported SVG with Qt's own renderer, to look at it as a picture."""
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    image = QImage(renderer.defaultSize(), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    image.save(str(png))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[3] == "--layers":
        # python docs/make_screenshots.py OUT 1366x768 --layers MODEL NAME.png
        layers_shot(sys.argv[1], sys.argv[2], sys.argv[4], sys.argv[5])
    else:
        main(sys.argv[1], sys.argv[2])
