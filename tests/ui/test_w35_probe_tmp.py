from PySide6.QtCore import Qt
from tests.ui.bundled_type import bundled_type  # noqa: F401
from tests.ui.conftest import open_model, settle, type_text
from tests.ui.test_every_size import at_size
from tests.ui.test_presentation_room import plot_size


def describe(window):
    out = []
    for name, w in [("toolbars", None), ("splitter", window.splitter), ("left", window.left), ("right", window.right),
                    ("map view", window.panes.map.view), ("canvas", window.panes.map.view.canvas),
                    ("panel", window.panes.map.view.panel), ("token", window.panes.token_pane),
                    ("status", window.statusBar()), ("menubar", window.menuBar())]:
        if w is None:
            from PySide6.QtWidgets import QToolBar
            out.append(("bars", [(b.windowTitle(), b.geometry().getRect()) for b in window.findChildren(QToolBar)]))
        else:
            out.append((name, w.geometry().getRect(), w.isVisible()))
    return out


def test_probe(qtbot, window):
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "nurse")
    for w, h in [(1024, 640), (1024, 615), (1366, 768), (1600, 1000)]:
        at_size(qtbot, window, w, h); qtbot.wait(100); settle()
        print("NORMAL", w, h, window.size().toTuple(), window.minimumSizeHint().toTuple(), window.screen().availableGeometry().getRect(), plot_size(window), describe(window))
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.state.presentation)
    for w, h in [(1024, 640), (1024, 615), (1366, 768), (1600, 1000)]:
        at_size(qtbot, window, w, h); qtbot.wait(200); settle()
        print("PRES", w, h, window.size().toTuple(), window.minimumSizeHint().toTuple(), window.screen().availableGeometry().getRect(), plot_size(window), describe(window))
        window.grab().save(f"/tmp/w35t/p{w}x{h}.png")
