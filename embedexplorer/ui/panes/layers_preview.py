"""A preview of the Layers pane with a real worker: python -m embedexplorer.ui.panes.layers_preview [MODEL]."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication, QStatusBar, QVBoxLayout, QWidget

from ...jobs.layer_jobs import LAYERS
from ...jobs.table_jobs import LOAD, LoadRequest
from ...worker import WorkerClient
from .layers_pane import LayersPane


def main() -> int:
    app = QApplication(sys.argv)
    client = WorkerClient()
    window = QWidget()
    pane = LayersPane()
    status = QStatusBar()
    box = QVBoxLayout(window)
    box.addWidget(pane, 1)
    box.addWidget(status)
    window.resize(900, 900)
    pane.layers_requested.connect(lambda request: client.ask(LAYERS, request, pane))
    client.channel(LAYERS, pane).ready.connect(pane.show_reply)
    client.channel(LAYERS, pane).failed.connect(lambda failure: pane.show_message(failure.message))
    client.channel(LOAD, window).progress.connect(lambda share, message: status.showMessage(message))
    client.channel(LAYERS, pane).progress.connect(lambda share, message: status.showMessage(message))
    client.channel(LOAD, window).ready.connect(lambda loaded: window.setWindowTitle(f"Layers: {loaded.name}"))
    client.ask(LOAD, LoadRequest(sys.argv[1] if len(sys.argv) > 1 else "bundled"), window)
    pane.set_token("the river bank", 3, "bank")
    pane.set_compare("my bank account", 2)
    app.aboutToQuit.connect(client.shutdown)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
