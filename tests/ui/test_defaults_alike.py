"""The window and the command line ask with the same k when nobody chose one.

Found by asking the same questions through both doors: the Layers tab listed 8 guesses and rows a
layer where `embedexplorer layers` listed 5, and the Compare window counted neighbours kept of 8
(the window's k) where `embedexplorer compare` counted them of 10, the figure of docs/compare.md.
"""

from __future__ import annotations

from embedexplorer.cli import build_parser
from tests.ui.conftest import open_model, type_text


def _cli_k(*argv: str) -> int:
    return int(build_parser().parse_args(list(argv)).k)


def test_every_k_the_window_starts_with_is_the_command_lines(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "the river bank")
    panes = window.panes
    layers = panes.layers_pane.request()
    assert layers is not None
    asked = {
        "neighbours": (window.state.k, _cli_k("neighbours", "bank")),
        "layers": (layers.k, _cli_k("layers", "the river bank", "--place", "3")),
        "compare": (panes.compare.pane.k_box.value(), _cli_k("compare", "bundled", "bundled")),
        "analogy": (panes.exercises.analogy.pane.k_box.value(), _cli_k("analogy", "a", "b", "c")),
    }
    assert {name: window_k for name, (window_k, _) in asked.items()} == {name: k for name, (_, k) in asked.items()}
