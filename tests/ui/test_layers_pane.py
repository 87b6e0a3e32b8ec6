"""The Layers pane alone and in the window: two "bank"s through MiniLM, a missing model, closing mid-run."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from embedexplorer import open_table
from embedexplorer.core.layers.output_head import percent
from embedexplorer.jobs.base import JobContext, Session
from embedexplorer.jobs.layer_jobs import LAYERS, LayersReply, LayersRequest, ModelMissing, run_layers
from embedexplorer.jobs.table_jobs import NEIGHBOURS, ROW, NeighboursRequest
from embedexplorer.ui.panes.layers_pane import LayersPane
from embedexplorer.ui.panes.layers_text import (
    COLUMNS,
    GUESS_COLUMN,
    NEAREST_COLUMN,
    TWO_COLUMN,
    label_fits,
    top_with_room,
)
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model, settle, type_text

RIVER, ACCOUNT = "the river bank", "my bank account"


@pytest.fixture(scope="module")
def bundled_layers() -> Iterator[JobContext]:
    """The bundled table in a session of its own: its model's process starts once for the module's
    questions (each only asks), and ends with the module."""
    session = Session()
    session.replace_table(open_table("bundled"))
    yield JobContext(session)
    session.replace_table(None)


@pytest.fixture(scope="module")
def bank_reply(bundled_layers: JobContext) -> LayersReply:
    """The engine's own answer for the two "bank"s, computed without any widget."""
    return run_layers(bundled_layers, LayersRequest(RIVER, 3, ACCOUNT, None, k=4))


def test_the_pane_draws_every_layer_and_the_two_banks(qtbot, bank_reply: LayersReply) -> None:
    pane = LayersPane()
    qtbot.addWidget(pane)
    answer = bank_reply.answer
    assert answer is not None and answer.compare is not None and answer.compare.place == 2  # found by its id
    pane.show_reply(bank_reply)
    compare = [s.cosine_to_compare for s in answer.steps]
    xs, ys = pane._compare_curve.getData()
    assert list(xs) == list(range(7)) and list(ys) == pytest.approx(compare)
    assert list(pane._row_curve.getData()[1]) == pytest.approx([s.cosine_to_row for s in answer.steps])
    assert list(pane._length_curve.getData()[1]) == pytest.approx([s.length for s in answer.steps])
    headline = pane.headline.text()
    assert "table rows: <b>1.000</b>" in headline
    assert f"after layer 6: <b>{compare[-1]:.3f}</b>" in headline and f"input {compare[0]:.3f}" in headline
    assert pane.nearest.rowCount() == 7
    assert pane.nearest.item(0, 0).text() == "input" and pane.nearest.item(6, 0).text() == "6"
    first = answer.steps[6].nearest[0]
    assert pane.nearest.item(6, NEAREST_COLUMN).text().startswith(f"{first.token} {first.cosine:.2f}")
    # The two tokens' cosine after each layer, as the command line prints it.
    assert [pane.nearest.item(r, TWO_COLUMN).text() for r in range(7)] == [f"{c:.3f}" for c in compare]
    assert not pane.nearest.isColumnHidden(TWO_COLUMN)
    # MiniLM was saved without an output head: no guess, and the pane says so.
    assert pane.nearest.isColumnHidden(GUESS_COLUMN) and pane.nearest.item(6, GUESS_COLUMN).text() == ""
    assert "<b>none</b>" in pane.head_line.text() and "No guess" in pane.note.text()
    assert "not the model's guess" in pane.note.text() and "LayerNorm" in pane.note.text()
    # "bank" is place 3; [CLS] comes first, so it reads the fourth position row, counted as places are.
    assert "Place 3 reads position row 4" in pane.note.text() and "[CLS] takes row 1" in pane.note.text()
    assert pane._table_line.value() == 1.0


@pytest.fixture(scope="module")
def llama_reply(llama_folder) -> LayersReply:  # type: ignore[no-untyped-def]
    """The engine's answer on the small Llama with an output head of its own, through its model process."""
    return _reply_of(str(llama_folder), LayersRequest(" The river bank was steep", 3, k=4))


def _reply_of(model: str, request: LayersRequest) -> LayersReply:
    """``request`` answered by the engine in a session of its own, before any widget; its model's process ended."""
    session = Session()
    session.replace_table(open_table(model))
    try:
        return run_layers(JobContext(session), request)
    finally:
        session.replace_table(None)


def test_the_guess_column_is_the_models_own_guess_beside_the_nearest_rows(qtbot, llama_reply, llama_folder) -> None:
    from transformers import AutoModelForCausalLM

    pane = LayersPane()
    qtbot.addWidget(pane)
    answer = llama_reply.answer
    assert answer is not None
    pane.set_token(answer.token.text, answer.token.place, answer.token.token.token)
    pane.show_reply(llama_reply)
    headers = [pane.nearest.horizontalHeaderItem(c).text() for c in range(pane.nearest.columnCount())]
    assert headers == list(COLUMNS)
    assert "length and all" in pane.nearest.horizontalHeaderItem(GUESS_COLUMN).toolTip()
    assert "not what the model would say" in pane.nearest.horizontalHeaderItem(NEAREST_COLUMN).toolTip()
    # The last row's guess is transformers' own top 4, with its probabilities.
    full = AutoModelForCausalLM.from_pretrained(str(llama_folder), use_safetensors=True).eval()
    import torch

    table = open_table(str(llama_folder))
    ids = [t.id for t in table.encode(answer.token.text)]
    with torch.inference_mode():
        top = torch.topk(torch.softmax(full(torch.tensor([ids])).logits[0, answer.token.position], -1), 4)
    pairs = zip(top.indices.tolist(), top.values.tolist(), strict=True)
    want = ", ".join(f"{table.tokens[i]} {percent(p)}" for i, p in pairs)
    assert pane.nearest.item(4, GUESS_COLUMN).text() == want
    nearest = answer.steps[4].nearest
    assert pane.nearest.item(4, NEAREST_COLUMN).text() == ", ".join(f"{n.token} {n.cosine:.2f}" for n in nearest)
    assert pane.nearest.isColumnHidden(TWO_COLUMN)  # no second token to compare with
    assert not pane.nearest.isColumnHidden(GUESS_COLUMN)
    # The head is the model's own: the pane says so, with the token's two rows' cosine.
    assert "a table of its own" in pane.head_line.text()
    assert f"<b>{answer.head_row_cosine:.3f}</b>" in pane.head_line.text()
    assert "Place 3 reads position row" not in pane.note.text()  # Llama has no position table
    assert "its own output table" in pane.note.text()


def test_another_token_never_shows_the_old_tokens_numbers(qtbot, bank_reply: LayersReply) -> None:
    pane = LayersPane()
    qtbot.addWidget(pane)
    pane.set_token(RIVER, 3, "bank")
    pane.set_compare(ACCOUNT)
    pane.show_reply(bank_reply)
    assert pane.nearest.rowCount() == 7 and pane.headline.text()
    pane.set_token(RIVER, 2, "river")
    assert "river" in pane.heading.text()
    assert pane.nearest.rowCount() == 0 and pane.headline.text() == "" and pane.head_line.text() == ""
    assert len(pane._row_curve.getData()[0] or []) == 0 and len(pane._compare_curve.getData()[0] or []) == 0
    # The old token's answer arriving late is not shown under the new heading.
    pane.show_reply(bank_reply)
    assert pane.nearest.rowCount() == 0
    # Another second text also clears what was shown for the old one.
    pane.set_token(RIVER, 3, "bank")
    pane.show_reply(bank_reply)
    pane.set_compare("the bank of the river")
    assert pane.nearest.rowCount() == 0


def test_plot_points_show_their_values_on_hover(qtbot, bank_reply: LayersReply) -> None:
    pane = LayersPane()
    qtbot.addWidget(pane)
    pane.resize(900, 800)
    pane.show()
    pane.set_token(RIVER, 3, "bank")
    pane.set_compare(ACCOUNT)
    pane.show_reply(bank_reply)
    qtbot.waitExposed(pane)
    settle()  # the plots laid out at their final size
    steps = bank_reply.answer.steps
    view = pane.cosine_plot.getViewBox()
    for layer in (2, 5):
        qtbot.wait(50)  # pyqtgraph drops mouse moves closer together than a screen refresh
        scene_point = view.mapViewToScene(pg.Point(layer, steps[layer].cosine_to_compare))
        pixel = QPointF(pane.cosine_plot.mapFromScene(scene_point))
        viewport = pane.cosine_plot.viewport()
        # The mouse moving over the plot, as Qt delivers it to the plot's view.
        move = QMouseEvent(
            QEvent.Type.MouseMove,
            pixel,
            QPointF(viewport.mapToGlobal(pixel.toPoint())),
            Qt.MouseButton.NoButton,
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(viewport, move)
        qtbot.waitUntil(lambda layer=layer: f"after layer {layer}" in view.toolTip())
        assert f"after layer {layer}" in view.toolTip()
        assert f"{steps[layer].cosine_to_compare:.3f}" in view.toolTip()


def test_the_cosine_legend_sits_above_the_curves_and_is_never_cut(qtbot, bank_reply: LayersReply) -> None:
    pane = LayersPane()
    qtbot.addWidget(pane)
    pane.show_reply(bank_reply)
    columns = []
    for width in (900, 330):
        pane.resize(width, 700)
        pane.show()
        qtbot.waitUntil(lambda w=width: pane.cosine_plot.width() <= w)
        plot_item = pane.cosine_plot.getPlotItem()
        plot_item.layout.activate()
        curves = plot_item.vb.mapRectToScene(plot_item.vb.boundingRect())
        labels = [label.text for _sample, label in pane.cosine_legend.items]
        assert labels == ["bank vs its own table row", "the two tokens"]
        for _sample, label in pane.cosine_legend.items:
            text = label.item.mapRectToScene(label.item.boundingRect())
            assert text.bottom() <= curves.top() + 1, (width, label.text)  # above the curves, not over them
            assert text.right() <= pane.cosine_plot.width(), (width, label.text)
        columns.append(pane.cosine_legend.columnCount)
    assert columns == [2, 1]  # side by side when there is room, stacked when not


@pytest.fixture(scope="module")
def markup_reply(gpt2_folder) -> LayersReply:  # type: ignore[no-untyped-def]
    """GPT-2's " <!--" (id 37922) through the layers, computed as the other replies are: before any widget."""
    return _reply_of(str(gpt2_folder), LayersRequest("x <!-- y", 2, k=2))


def test_a_token_that_looks_like_markup_is_named_whole_in_the_legend(qtbot, markup_reply: LayersReply) -> None:
    """" <!--" opened an HTML comment in the legend (pyqtgraph draws an entry as HTML): it read "_" alone.
    The vocabulary's strings are text wherever they are shown."""
    answer = markup_reply.answer
    assert answer is not None and answer.token.token.token == "_<!--"
    pane = LayersPane()
    qtbot.addWidget(pane)
    pane.set_token("x <!-- y", 2, "_<!--")
    pane.show_reply(markup_reply)
    shown = [label.item.toPlainText() for _sample, label in pane.cosine_legend.items]
    assert shown == ["_<!-- vs its own table row"]


def test_the_table_lines_label_sits_above_every_curve_inside_the_plot(qtbot, bundled_layers: JobContext) -> None:
    """A token compared with itself: the two tokens' curve lies on the table's line at every layer."""
    reply = run_layers(bundled_layers, LayersRequest(RIVER, 3, RIVER, 3, k=2))
    assert reply.answer is not None
    assert [s.cosine_to_compare for s in reply.answer.steps] == pytest.approx([1.0] * 7, abs=1e-5)
    pane = LayersPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_reply(reply)
    shown = []
    for height, scale in ((800, 1.0), (420, 1.0), (420, 1.8), (800, 1.8)):
        pane.set_scale(scale)
        pane.resize(700, height)
        qtbot.waitUntil(lambda h=height: pane.height() == h)
        qtbot.wait(100)  # the label follows the view's new range on the next turn of the event loop
        view = pane.cosine_plot.getPlotItem().vb
        frame = view.mapRectToScene(view.boundingRect())
        label = pane._table_line.label
        box = label.mapRectToScene(label.boundingRect())
        line_y = view.mapViewToScene(pg.Point(0, 1.0)).y()
        shown.append(label.isVisible())
        if label.isVisible():
            assert frame.top() - 0.5 <= box.top() and box.bottom() <= line_y + 0.5, (height, scale)  # above, not cut
            assert frame.left() <= box.left() and box.right() <= frame.right() + 0.5, (height, scale)
        lowest = min(s.cosine_to_row for s in reply.answer.steps)
        assert view.viewRange()[1][0] < lowest  # and every curve's lowest point is on the plot
    # Too short a plot in presentation mode leaves the label out rather than cut it; with room it is back.
    assert shown == [True, True, False, True]


@pytest.mark.parametrize("bottom", [-0.1, -0.6])
@pytest.mark.parametrize("plot_height", [130.0, 260.0, 900.0])
def test_the_cosine_axis_top_leaves_exactly_the_labels_height_above_the_line(bottom, plot_height) -> None:
    label = 18.0
    top = top_with_room(bottom, plot_height, label)
    room = (top - 1.0) * plot_height / (top - bottom)
    assert room >= label - 1e-9
    assert top == 1.08 or room == pytest.approx(label)  # the least top that gives the room, never less than 1.08


def test_too_short_a_plot_has_no_room_for_the_label() -> None:
    assert label_fits(130.0, 21.0) and not label_fits(56.0, 31.0)
    assert top_with_room(-0.1, 56.0, 31.0) == 1.08


def test_the_pane_asks_for_what_it_shows(qtbot) -> None:
    pane = LayersPane()
    qtbot.addWidget(pane)
    assert pane.request() is None and not pane.run_button.isEnabled()
    pane.set_token(RIVER, 3, "bank")
    pane.set_compare(ACCOUNT, 2)
    with qtbot.waitSignal(pane.layers_requested) as sent:
        qtbot.mouseClick(pane.run_button, Qt.MouseButton.LeftButton)
    assert sent.args == [LayersRequest(RIVER, 3, ACCOUNT, 2)]
    pane.set_compare(None)
    assert pane.request() == LayersRequest(RIVER, 3)


def test_a_missing_model_says_its_size_and_offers_a_download(qtbot) -> None:
    pane = LayersPane()
    qtbot.addWidget(pane)
    pane.show()
    missing = ModelMissing("The folder has the embedding table but not the whole model.", 497_759_232, "owner/model")
    pane.show_reply(LayersReply(LayersRequest(RIVER, 3), missing=missing))
    assert pane.missing.isVisible() and pane.download_button.isVisible()
    assert "The whole model is 498 MB." in pane.missing_label.text()
    with qtbot.waitSignal(pane.download_requested) as asked:
        qtbot.mouseClick(pane.download_button, Qt.MouseButton.LeftButton)
    assert asked.args == ["owner/model"]
    pane.show_reply(LayersReply(LayersRequest(RIVER, 3), missing=ModelMissing("Only the table.", None, None)))
    assert not pane.download_button.isVisible()  # a local folder: nowhere to download from


def test_two_banks_in_the_window_while_quick_questions_keep_answering(qtbot, window, bank_reply) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, RIVER)
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.select(2)
    window.right.setCurrentWidget(window.panes.layers_pane)
    window.panes.layers_pane.set_compare(ACCOUNT)
    order: list[str] = []
    answers(window, NEIGHBOURS).ready.connect(lambda _answer: order.append("neighbours"))
    with qtbot.waitSignal(answers(window, LAYERS).ready, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(window.panes.layers_pane.run_button, Qt.MouseButton.LeftButton)
        order.append("layers asked")
        # The whole model loads in the long lane; a neighbour question is answered meanwhile.
        window.client.ask(NEIGHBOURS, NeighboursRequest("river", 5), window.panes.neighbours_pane)
        qtbot.waitUntil(lambda: "neighbours" in order, timeout=ANSWER_TIMEOUT_MS)
        order.append("neighbours before layers")
    expected = [s.cosine_to_compare for s in bank_reply.answer.steps]
    assert f"after layer 6: <b>{expected[-1]:.3f}</b>" in window.panes.layers_pane.headline.text()
    assert not window.progress.isVisible()
    # The row pane now shows what really enters layer 1: the model's own step, LayerNorm included.
    np.testing.assert_allclose(window.panes.row_view._result.combined, bank_reply.answer.input.enters, atol=1e-6)
    # "bank" is place 3; MiniLM puts [CLS] first, so its position-table row (counted from 1, as places are) is 4.
    names = [name for name, _ in window.panes.row_view.row_lines()]
    assert names == ["token row", "position row 4", "LayerNorm, enters layer 1"]
    assert "LayerNorm" in window.panes.row_view.note.text()
    # A token the second text does not have: the pane says so, in words.
    with qtbot.waitSignal(answers(window, LAYERS).failed, timeout=ANSWER_TIMEOUT_MS):
        window.panes.token_pane.select(1)
    assert "river is not a token of 'my bank account'" in window.panes.layers_pane.headline.text()
    # Once the model is loaded, a change runs at once: here, clearing the second text.

    def about_river(reply: LayersReply) -> bool:
        return reply.answer is not None and reply.answer.token.token.token == "river"

    layers = answers(window, LAYERS).ready
    with qtbot.waitSignal(layers, timeout=ANSWER_TIMEOUT_MS, check_params_cb=about_river) as second:
        window.panes.layers_pane.set_compare(None)
    assert second.args[0].load_seconds is None and second.args[0].answer.compare is None


CLOSE_DURING_FORWARD = """
import sys, time
from embedexplorer.app import create_app, create_window
from embedexplorer.jobs.layer_jobs import LAYERS, LayersRequest
from embedexplorer.jobs.table_jobs import LOAD
app = create_app()
window = create_window(sys.argv[2])
window.show()
channel = window.client.channel
first = []
def loaded(_answer):
    window.client.ask(LAYERS, LayersRequest("warm", 1), window.panes.layers_pane)
def layers_ready(reply):
    if not first:
        first.append(reply)
        # a long text: its forward pass takes seconds, so the window closes in the middle of it
        window.client.ask(LAYERS, LayersRequest(" the river bank was steep" * 150, 3), window.panes.layers_pane)
def progress(share, message):
    if first and message.startswith("Running the text"):
        print("closing during the forward pass", flush=True)
        window.started_close = time.perf_counter()
        window.close()
channel(LOAD, window.model_bar).ready.connect(loaded)
channel(LAYERS, window.panes.layers_pane).ready.connect(layers_ready)
channel(LAYERS, window.panes.layers_pane).failed.connect(lambda failure: print("failed:", failure.message, flush=True))
channel(LAYERS, window.panes.layers_pane).progress.connect(progress)
window.open_model(sys.argv[1])
app.exec()
print(f"closed in {time.perf_counter() - window.started_close:.2f} s, stuck {window.worker_stuck}", flush=True)
"""


def test_closing_the_window_during_a_forward_pass(gpt2_folder, tmp_path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", CLOSE_DURING_FORWARD, str(gpt2_folder), str(tmp_path / "s.ini")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert result.returncode == 0, result.stderr
    assert "closing during the forward pass" in result.stdout, result.stdout + result.stderr
    assert "stuck False" in result.stdout, result.stdout
    # "stuck False": the pass stopped between layers, within the window's bounded wait.
    assert "QThread: Destroyed while thread is still running" not in result.stderr
    assert "Traceback" not in result.stderr


def test_the_layers_pane_starts_the_models_process_and_closing_ends_it(qtbot, window) -> None:
    from embedexplorer.core.layers.layer_process import LayerProcess
    from embedexplorer.jobs.layer_jobs import MODEL_KEY

    open_model(qtbot, window, "bundled")
    derived = window.client.session.derived
    assert MODEL_KEY not in derived  # nobody asked for the layers: no torch anywhere
    window.right.setCurrentWidget(window.panes.layers_pane)
    qtbot.waitUntil(lambda: isinstance(derived.get(MODEL_KEY), LayerProcess), timeout=ANSWER_TIMEOUT_MS)
    process = derived[MODEL_KEY]
    pid = process.pid
    assert pid is not None
    window.close()
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] == "Z"
