"""Any pane alone in a window, on a real worker and a real model: ``python -m embedexplorer.ui.preview PANE``.

The window holds that pane only (its menus, the model bar, the message and status bars), opens
the model (``--model``, the bundled one by default) and types a text (``--text``), so the pane
shows what it shows in the whole window. ``--list`` names the panes. CI opens every pane
this way, offscreen (``tests/ui/test_previews.py``); ``--quit-after`` closes the window by itself.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..core.common.constants import BUNDLED
from .window.pane_list import PANES
from .window.plugging import PaneEntry


def entry_named(name: str) -> PaneEntry:
    """The pane list's entry called ``name`` (its attribute under ``window.panes``)."""
    for entry in PANES:
        if entry.name == name:
            return entry
    raise KeyError(f"no pane is called {name!r}; the panes are: {', '.join(e.name for e in PANES)}")


def preview_window(entry: PaneEntry, settings_file: str, text: str = "monday"):  # type: ignore[no-untyped-def]
    """A main window holding ``entry``'s pane alone, with its own worker and settings, looking at ``text``.

    Without the token pane nothing would select a token: the preview asks for the text's tokens
    itself once a model is open and selects the first, as the token pane does.
    """
    from ..jobs.table_jobs import TOKENS, TokensAnswer, TokensRequest
    from ..settings import Settings
    from ..state import Selection
    from ..worker import WorkerClient
    from .window.main_window import MainWindow

    window = MainWindow(WorkerClient(), Settings(settings_file), panes=(entry,))
    window.setWindowTitle(f"EmbedExplorer preview: {entry.pane.TITLE.replace('&', '')}")
    state, client = window.state, window.client
    state.update(text=text)
    if entry.name != "token_pane":

        def select_first(answer: TokensAnswer) -> None:
            if answer.report.tokens:
                first = answer.report.tokens[0]
                state.update(selection=Selection(first.id, 0, first.token))

        def ask_tokens(_serial: int) -> None:
            client.ask(TOKENS, TokensRequest(state.text), window)

        client.channel(TOKENS, window).ready.connect(select_first)
        state.watch("model_serial", ask_tokens)
    return window


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m embedexplorer.ui.preview", description=__doc__.split("\n")[0])
    parser.add_argument("pane", nargs="?", help="the pane's name in the pane list (see --list)")
    parser.add_argument("--list", action="store_true", help="name the panes and stop")
    parser.add_argument("--model", default=BUNDLED, help="the model to open (default: the bundled one)")
    parser.add_argument("--text", default="monday", help="the text to look at (default: monday)")
    parser.add_argument("--quit-after", type=float, default=0.0, metavar="SECONDS", help="close by itself")
    args = parser.parse_args(argv)
    if args.list or not args.pane:
        for entry in PANES:
            print(f"{entry.name:18} {entry.pane.TITLE.replace('&', '')} ({entry.pane.PLACE.value})")
        return 0
    try:
        entry = entry_named(args.pane)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    from PySide6.QtCore import QTimer

    from ..app import create_app

    app = create_app()
    folder = tempfile.mkdtemp(prefix="embedexplorer-preview-")
    window = preview_window(entry, str(Path(folder) / "settings.ini"), args.text)
    window.show()
    window.open_model(args.model)
    if args.quit_after > 0:
        QTimer.singleShot(int(args.quit_after * 1000), window.close)
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(main())
