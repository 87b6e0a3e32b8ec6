"""Help: how to read the panes, the log of unexpected errors, and About (with every licence)."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox, QWidget

from ...core.tables.position_rows import RULE
from ..style.plain_text import plain_tip

# How long the status bar names the log's file after Help > Show the log.
LOG_PATH_SHOWN_MS = 30_000

READING_HELP = (
    "<p><b>Tokens.</b> The text is split into tokens; each chip shows a token and its id, a house number "
    "in the vocabulary. <b>_</b> stands for a space: GPT-2's <i>_Paris</i> is \" Paris\" with the space "
    "in front, a different token from <i>Paris</i> at the start of a text. <b>##</b> (BERT, MiniLM) marks "
    "a piece that continues the word before it: <i>embed ##ding ##s</i>.</p>"
    "<p><b>Row.</b> The id picks one row of the embedding table: a list of numbers the model learned. "
    "No single number has a meaning; the direction of the whole row does. "
    + RULE
    + " The last line is what enters layer 1, as this model "
    "computes it.</p>"
    "<p><b>Neighbours.</b> The <b>k</b> rows (set k above the list) whose direction is nearest, by "
    "cosine: 1 is the same direction. The <b>baseline tick</b> in each bar marks what unrelated "
    "tokens reach in this model; read every value against it.</p>"
    "<p><b>Map.</b> The rows of the family words flattened onto the two directions in which they "
    "differ most; the caption says how much of the spread survives. The <b>star</b> is the selected "
    "token, the <b>rings</b> are its nearest neighbours (their names are in the hover tips). "
    "<b>Zoom</b> with the mouse wheel or by dragging with the right button; <b>reset</b> with the "
    "small \"A\" button that appears in the map's lower-left corner once you zoom, or Ctrl+0. Click a dot to "
    "look it up. From the keyboard, Tab to the map: + and - zoom, the arrows move it, Enter looks up "
    "the word Find on the map (Ctrl+F) ringed.</p>"
    "<p><b>Exercises.</b> Guess first (Ctrl+G) hides the neighbours until you guess; the furthest "
    "family, analogies and two texts open beside the window.</p>"
)


def add_help_menu(menu: QMenu, window: QWidget) -> None:
    """Fill the Help menu of ``window``."""
    menu.addAction("How to &read the panes").triggered.connect(
        lambda: QMessageBox.information(window, "How to read the panes", READING_HELP)
    )
    menu.addAction("Show the &log").triggered.connect(lambda: show_log(window))
    menu.addAction("&About EmbedExplorer").triggered.connect(lambda: show_about(window))


def show_log(window: QWidget) -> None:
    """Open the log of unexpected errors in the desktop's text viewer (or say where it is)."""
    from ...errorlog import log_path

    path = log_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    # Where it is, always: a desktop without a text viewer starts one that shows nothing, and Qt says it opened.
    if isinstance(window, QMainWindow):
        window.statusBar().showMessage(f"The log of unexpected errors is at {path}", LOG_PATH_SHOWN_MS)
    if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        QMessageBox.information(window, "The log", plain_tip(f"The log of unexpected errors is at\n{path}"))


def show_about(window: QWidget) -> None:
    from ... import __version__, licences

    QMessageBox.about(
        window,
        "About EmbedExplorer",
        f"<b>EmbedExplorer {__version__}</b><p>Look inside a language model's token embedding table."
        "</p><p>Weights are read only from safetensors and GGUF files, never from pickled ones (they can run "
        "code), and nothing is downloaded unless you ask.</p>"
        + licences.about_html(licences.components(), licences.licence_dir()),
    )
