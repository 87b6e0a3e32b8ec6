"""The Compare pane through the real window: File > Compare with..., real tables, real answers, bad input."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from PySide6.QtCore import Qt

from embedexplorer.core.common.blas import cores_but_one
from embedexplorer.jobs.compare_jobs import COMPARE
from embedexplorer.jobs.table_jobs import LOAD, TOKENS

from ..gguf_fixture import write_gguf
from .conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model, settle

COMPARE_TIMEOUT_MS = 120_000


@pytest.fixture
def tables(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(9)
    rows = rng.standard_normal((500, 16)).astype(np.float32)
    moved = (rows + 0.5 * rng.standard_normal(rows.shape)).astype(np.float32)
    wide = rng.standard_normal((500, 24)).astype(np.float32)
    strangers = ["!", "!!"] + [f"x{i}" for i in range(2000 - 2)]  # "!" and "!!" for the tokenizer's one merge
    return {
        "a": write_gguf(tmp_path / "a.gguf", rows, Q.F32),
        "b": write_gguf(tmp_path / "b.gguf", moved, Q.F32),
        "wide": write_gguf(tmp_path / "wide.gguf", wide, Q.F32),
        "strangers": write_gguf(
            tmp_path / "strangers.gguf", rng.standard_normal((2000, 16)).astype(np.float32), Q.F32, tokens=strangers
        ),
    }


def compare_with(qtbot, window, spec: str, ok: bool = True):  # type: ignore[no-untyped-def]
    """Type B into the pane and press Enter, as a person does; wait for the answer or the failure."""
    pane = window.panes.compare.pane
    pane.source.clear()
    qtbot.keyClicks(pane.source, spec)
    channel = answers(window, COMPARE)
    with qtbot.waitSignal(channel.ready if ok else channel.failed, timeout=COMPARE_TIMEOUT_MS) as signal:
        qtbot.keyClick(pane.source, Qt.Key.Key_Return)
    return signal.args[0]


def open_compare(window) -> None:  # type: ignore[no-untyped-def]
    action = next(a for a in window.menuBar().actions()[0].menu().actions() if a.text() == "&Compare with...")
    action.trigger()
    assert window.panes.compare.isVisible()


def test_compare_shows_lists_neighbours_and_looks_tokens_up(qtbot, window, tables) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, str(tables["a"]))
    open_compare(window)
    comparison = compare_with(qtbot, window, str(tables["b"]))
    pane = window.panes.compare.pane
    assert len(comparison) == 500 and not pane.message.isVisible()
    assert "F32" in pane.header.text() and "by id" in pane.notes.text()
    assert not pane.notes.font().bold()  # the notes in the usual weight, under the bold A and B
    # The long lane keeps a core for the window; the pane says how many the search used.
    assert f"on {cores_but_one()} of {os.cpu_count()} cores" in pane.notes.text()
    # ...and the whole header is on screen, its notes lines included (they were cut at the label's height).
    settle()
    for label in (pane.header, pane.notes):
        wanted = label.heightForWidth(label.width())
        assert label.height() >= wanted, (label.text(), label.height(), wanted)
    # On a 1024x640 screen (the dialog fits it, about 1000x600) both plots' titles are whole.
    window.panes.compare.resize(1000, 600)
    settle()
    for plot in (pane.overlap_plot.getPlotItem(), pane.cosine_plot.getPlotItem()):
        title = plot.titleLabel.item
        assert title.boundingRect().width() <= plot.sceneBoundingRect().width(), title.toPlainText()
    assert f"mean <b>{comparison.overlap.mean():.2f}</b>" in pane.stats.text()
    # The first of the most changed is the token with the fewest neighbours kept.
    first = pane.most.item(0)
    assert first.text().startswith(comparison.tokens_a[int(comparison.ids_a[comparison.most_changed()[0]])])
    k = comparison.k
    assert k == pane.k() and f"{comparison.overlap.min()}/{k}" in first.text()
    change = comparison.token(comparison.most_changed()[0])
    assert pane.neighbours.rowCount() == k
    assert [pane.neighbours.item(r, 0).text() for r in range(k)] == [n for n, _ in change.near_a]
    assert [pane.neighbours.item(r, 2).text() for r in range(k)] == [n for n, _ in change.near_b]
    # The neighbours in both lists are marked, as many in each column as the overlap says.
    for column in (0, 2):
        assert sum(pane.neighbours.item(r, column).font().bold() for r in range(k)) == change.overlap
    assert f"<b>{change.overlap}</b> of its {k}" in pane.token_title.text()
    # A click on a listed token looks it up in the main window.
    least = pane.least.item(0)
    with qtbot.waitSignal(answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS):
        rect = pane.least.visualItemRect(least)
        qtbot.mouseClick(pane.least.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.state.text == comparison.text_of(comparison.least_changed()[0])
    settle()
    # "w316" is several tokens in the main window: its first ("w") must not replace the clicked token here.
    clicked = comparison.token(comparison.least_changed()[0])
    assert window.state.selection is not None and window.state.selection.token_id != clicked.id
    assert pane.token_title.text().startswith(f"<b>{clicked.token}</b> (id {clicked.id})")


def test_bad_input_is_one_sentence_and_table_a_stays(qtbot, window, tables, tmp_path) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, str(tables["a"]))
    open_compare(window)
    pane = window.panes.compare.pane
    failure = compare_with(qtbot, window, str(tmp_path / "missing.gguf"), ok=False)
    assert pane.message.isVisible() and "Could not open table B" in pane.message.text()
    assert pane.message.text().count(".") <= 3 and "Traceback" not in pane.message.text()
    assert window.state.loaded and window.state.model_name.endswith("a.gguf")
    assert failure.message == pane.message.text()
    compare_with(qtbot, window, str(tables["strangers"]), ok=False)
    assert "tokens in common" in pane.message.text()
    wide = compare_with(qtbot, window, str(tables["wide"]))
    assert wide.row_cosine is None and "different widths" in pane.notes.text()
    same = compare_with(qtbot, window, str(tables["a"]))
    assert "same file" in pane.notes.text() and np.all(same.overlap == same.k)
    assert "row cosine: mean <b>1.0000</b>" in pane.stats.text()
    assert window.state.loaded and window.state.model_name.endswith("a.gguf")


def test_compare_before_any_model_says_so(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    assert not window.state.loaded  # a window without a model: nothing to be table A
    open_compare(window)
    window.panes.compare.pane.source.setText("anything")
    window.panes.compare.pane.request()
    assert "Open a model first" in window.panes.compare.pane.message.text()


def boxes_in(text: str, font) -> list[str]:  # type: ignore[no-untyped-def]
    """The characters Qt would draw as an empty box (glyph 0) with ``font`` and its fallbacks."""
    from PySide6.QtGui import QTextLayout

    boxed = []
    for char in dict.fromkeys(text):
        layout = QTextLayout(char, font)
        layout.beginLayout()
        layout.createLine()
        layout.endLayout()
        if not char.isspace() and any(i == 0 for run in layout.glyphRuns() for i in run.glyphIndexes()):
            boxed.append(char)
    return boxed


def test_tokens_of_any_script_are_listed_readably(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Where no font on this machine has a glyph (CJK on a bare machine), the lists show U+XXXX, never a box."""
    rng = np.random.default_rng(4)
    rows = rng.standard_normal((300, 16)).astype(np.float32)
    scripts = ["家", "ャ", "ᆫ", "ค", "ℵ", "ж", "𝔘", "x"]
    tokens = ["!", "!!"] + [f"{scripts[i % len(scripts)]}{i}" for i in range(298)]
    a = write_gguf(tmp_path / "a.gguf", rows, Q.F32, tokens=tokens)
    moved = (rows + rng.standard_normal(rows.shape)).astype(np.float32)
    b = write_gguf(tmp_path / "b.gguf", moved, Q.F32, tokens=tokens)
    with qtbot.waitSignal(answers(window, LOAD).ready, timeout=LOAD_TIMEOUT_MS):  # (no family word: no map)
        window.open_model(str(a))
    open_compare(window)
    compare_with(qtbot, window, str(b))
    pane = window.panes.compare.pane
    pane.most.setCurrentRow(0)
    shown = [pane.most.item(r).text() for r in range(pane.most.count())]
    shown += [pane.least.item(r).text() for r in range(pane.least.count())]
    shown += [pane.neighbours.item(r, c).text() for r in range(pane.neighbours.rowCount()) for c in (0, 2)]
    assert len(shown) > 20
    for text in shown:
        assert boxes_in(text, pane.most.font()) == [], text
    from PySide6.QtGui import QTextDocument

    title = QTextDocument()
    title.setHtml(pane.token_title.text())
    assert boxes_in(title.toPlainText(), pane.token_title.font()) == []
    # A token every character of which has a glyph is shown as it is.
    drawable = [t for t in tokens[2:] if not boxes_in(t, pane.most.font())]
    assert drawable and any(text.split()[0] in drawable for text in shown)


def test_table_bs_file_dialog_offers_what_the_readers_open(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QFileDialog

    from embedexplorer.core.readers import READERS

    offered: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args: (offered.append(args[3]), ("", ""))[1])
    window.panes.compare.pane._choose_file()
    lines = offered[0].split(";;")
    # One line per reader, with the patterns each reader declares, and every pattern in the first line.
    for reader in READERS:
        assert f"{reader.label} ({' '.join(reader.patterns)})" in lines
        assert all(pattern in lines[0] for pattern in reader.patterns)
    assert lines[-1] == "All files (*)"


def test_the_header_shows_a_path_as_plain_text(qtbot, window, tables, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A path is a file's name, never markup: "<b>x</b>" is read as typed, not as "x" in bold.
    folder = tmp_path / "<b>x</b>"  # a folder "<b>x<" holding a folder "b>"
    folder.mkdir(parents=True)
    b = folder / "b.gguf"
    b.write_bytes(tables["b"].read_bytes())
    open_model(qtbot, window, str(tables["a"]))
    open_compare(window)
    compare_with(qtbot, window, str(b))
    header = window.panes.compare.pane.header
    assert header.textFormat() == Qt.TextFormat.PlainText
    assert "<b>x</b>" in header.text() and header.text().startswith("A: ")
    assert header.font().bold()  # "A:" and "B:" stand out as before, by the label's font
