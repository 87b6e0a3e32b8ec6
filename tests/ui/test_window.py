"""The main window driven as a person would, on the bundled MiniLM and the GPT-2-shaped fixture."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
from PySide6.QtCore import QPointF, Qt

from embedexplorer.jobs.table_jobs import COSINE, MAP, NEIGHBOURS, ROW, TOKENS, RowRequest, TokensRequest
from tests.images import png_facts
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model, settle, type_text


def test_chapter_sentence_shows_five_chips_with_ids(qtbot, window, gpt2_folder) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    type_text(qtbot, window, "The capital of France is")
    assert [token.id for token in window.panes.token_pane.chip_tokens] == [464, 3139, 286, 4881, 318]
    assert window.panes.token_pane.chip_labels[3] == "_France\n4881"
    assert "31.0%" in window.facts_label.text()
    assert "38,597,376" in window.facts_label.text()
    # Untrained rows: family means round to zero, and neither "-0.00" nor a ratio of noise is shown.
    caption = window.panes.map.view.canvas.caption.text
    assert "between families 0.00 (no ratio" in caption and "-0.00" not in caption
    assert "The tick marks 0.000," in window.panes.neighbours_pane.baseline_label.text()


def test_clicking_a_chip_shows_the_engines_neighbours_and_rows(qtbot, window, gpt2_folder, gpt2_table) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    type_text(qtbot, window, "The capital of France is")
    with qtbot.waitSignals([answers(window, NEIGHBOURS).ready, answers(window, ROW).ready], timeout=ANSWER_TIMEOUT_MS):
        chips = window.panes.token_pane.chip_list
        qtbot.mouseClick(chips.viewport(), Qt.MouseButton.LeftButton, pos=chips.visualItemRect(chips.item(3)).center())
    expected = gpt2_table.neighbours(4881, k=window.panes.neighbours_pane.k()).neighbours
    assert window.panes.neighbours_pane.neighbour_tokens() == [n.token for n in expected]
    assert "_France" in window.panes.neighbours_pane.heading.text()
    shown = window.panes.row_view._result
    assert shown.token.id == 4881 and shown.place == 3
    np.testing.assert_array_equal(shown.row, gpt2_table.row(4881))
    np.testing.assert_allclose(shown.combined, gpt2_table.row(4881) + gpt2_table.position_row(3))
    assert "row 4,881" in window.panes.row_view.title.text()


def test_monday_on_bundled_model_lists_weekdays(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    result = type_text(qtbot, window, "monday")
    tokens = {n.token for n in result.result.neighbours}
    assert {"tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"} <= tokens
    # The map asks for itself: the selected token starred on it and each neighbour ringed.
    token, at, rings = window.panes.map.view.canvas.selection
    assert token == "monday" and at is not None and len(rings) == len(result.result.neighbours)
    assert "(ratio " in window.panes.map.view.canvas.caption.text  # a learned table: families stand apart


def test_family_panel_highlights_and_hides(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    canvas, panel = window.panes.map.view.canvas, window.panes.map.view.panel
    assert len(canvas.families) == 8
    qtbot.mouseClick(panel.highlight_buttons["days"], Qt.MouseButton.LeftButton)
    assert canvas.highlighted == "days" and canvas.highlight_count == 7
    qtbot.mouseClick(panel.highlight_buttons["days"], Qt.MouseButton.LeftButton)
    assert canvas.highlighted is None and canvas.highlight_count == 0
    assert canvas.visible_points("animals") == 8
    panel.visibility["animals"].click()
    assert canvas.visible_points("animals") == 0
    assert window.settings.hidden_families == ["animals"]


def test_export_writes_png_of_requested_width(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    target = tmp_path / "map.png"
    assert window.panes.map.exports.export_to(str(target), 900)
    width, height, colours = png_facts(target)
    assert width == 900 and height > 300
    assert colours > 20
    svg = tmp_path / "map.svg"
    assert window.panes.map.exports.export_to(str(svg))
    assert "<svg" in svg.read_text(encoding="utf-8")[:2000]


def test_word_labels_never_overlap_follow_hiding_and_reach_exported_pictures(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    canvas, panel = window.panes.map.view.canvas, window.panes.map.view.panel
    words = list(canvas.map.labels)
    # The window opens on its restored text: wait, as a person does, for its neighbours' rings (they
    # want labels too), so that nothing arrives between the steps below.
    qtbot.waitUntil(lambda: canvas.selection[1] is not None and bool(canvas.ring_names), timeout=ANSWER_TIMEOUT_MS)
    settle()
    # Every family word wants a label, and so does each ring, except the selected word: its marker names it.
    assert set(words) - {canvas.selection[0]} <= set(canvas.labels.wanted) and len(words) == 63
    shown = canvas.labels.shown
    assert set(shown) <= set(canvas.labels.wanted) and len(shown) >= 20  # the rest are named by hover tips
    rects = [rect for _i, rect in canvas.labels.placed]
    assert not any(a.intersects(b) for n, a in enumerate(rects) for b in rects[n + 1 :])
    with_days = tmp_path / "with-days.svg"
    assert window.panes.map.exports.export_to(str(with_days))
    drawing = with_days.read_text(encoding="utf-8")
    # The drawing places its labels by the same rule, for its own size: most of them fit there too.
    assert sum(f">{word}<" in drawing for word in canvas.labels.wanted) >= 20
    wanted = set(canvas.labels.wanted)
    panel.visibility["days"].click()
    days = {w for w in words if w in {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}}
    assert len(days) == 7 and set(canvas.labels.wanted) == wanted - days and not days & set(canvas.labels.shown)
    without_days = tmp_path / "without-days.svg"
    assert window.panes.map.exports.export_to(str(without_days))
    assert ">tuesday<" not in without_days.read_text(encoding="utf-8")
    panel.visibility["days"].click()
    # The selected word is named by its marker's label, so its own label steps aside.
    type_text(qtbot, window, "monday")
    assert "monday" not in canvas.labels.wanted and len(canvas.labels.wanted) >= 62


def test_no_label_covers_the_selected_tokens_own_name(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    for word in ("paris", "monday", "dog"):  # stars among crowded families
        type_text(qtbot, window, word)
        settle()
        canvas.labels.layout()
        name = canvas._query_label
        assert name.isVisible() and name.textItem.toPlainText() == word
        star_box = name.mapRectToScene(name.boundingRect())
        placed = enumerate(canvas.labels.placed)
        covering = [canvas.labels.shown[n] for n, (_i, rect) in placed if rect.intersects(star_box)]
        assert covering == [], (word, covering)


def test_the_selected_tokens_name_stays_inside_the_map_at_its_edges(qtbot, window, tmp_path) -> None:
    """The star at the top or the right edge of the view: its name goes below it or to its left, never cut."""
    open_model(qtbot, window, "bundled")
    canvas = window.panes.map.view.canvas
    view = canvas.plot.getViewBox()
    shown = canvas.map
    assert shown is not None
    edges = {edge: shown.labels[int(np.argmax(shown.coords[:, axis]))] for edge, axis in (("top", 1), ("right", 0))}
    for edge, word in edges.items():
        type_text(qtbot, window, word)
        settle()
        # The star one percent of the view from its edge: no room there for the name above or to the right.
        (x0, x1), (y0, y1) = view.viewRange()
        at_x, at_y = canvas.selection[1]
        if edge == "top":
            view.setRange(xRange=(x0, x1), yRange=(y0, at_y + 0.01 * (y1 - y0)), padding=0)
        else:
            view.setRange(xRange=(x0, at_x + 0.01 * (x1 - x0)), yRange=(y0, y1), padding=0)
        settle()
        name = canvas._query_label
        assert name.isVisible() and name.textItem.toPlainText() == word
        frame = view.sceneBoundingRect()
        box = name.mapRectToScene(name.boundingRect())
        assert frame.contains(box), (edge, word, box, frame)
        star = view.mapViewToScene(QPointF(*canvas.selection[1]))
        assert (box.top() >= star.y() - 1) if edge == "top" else (box.right() <= star.x() + 1), (edge, box, star)
        # The picture puts it on the same side, inside its plot.
        target = tmp_path / f"{edge}.svg"
        assert window.panes.map.exports.export_to(str(target))
        drawing = target.read_text(encoding="utf-8")
        plot = re.search(r'<clipPath id="plot"><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"', drawing)
        tip = re.search(r'<polygon points="([-0-9.]+),([-0-9.]+)', drawing)  # the star's top point, 11 px up
        text = re.search(rf'<text x="([-0-9.]+)" y="([-0-9.]+)" fill="[^"]+" font-size="14">{re.escape(word)}</text>',
                         drawing)
        assert plot and tip and text, edge
        left, top, width = map(float, plot.groups())
        star_x, star_y = float(tip[1]), float(tip[2]) + 11
        text_x, baseline = float(text[1]), float(text[2])
        assert left <= text_x < left + width and baseline - 14 >= top, (edge, text.group(0))
        assert baseline > star_y if edge == "top" else text_x < star_x, (edge, text.group(0), star_x, star_y)

def test_failures_leave_the_window_usable(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    from embedexplorer.jobs.table_jobs import LOAD

    with qtbot.waitSignal(answers(window, LOAD).failed, timeout=ANSWER_TIMEOUT_MS):
        window.open_model(str(tmp_path / "no-such-model"))
    assert "No such folder" in window.message_bar.text()
    assert "Still using all-MiniLM-L6-v2" in window.facts_label.text()
    # A computation that fails inside the worker becomes a message; the next request is answered.
    with qtbot.waitSignal(answers(window, ROW).failed, timeout=ANSWER_TIMEOUT_MS) as blocker:
        window.client.ask(ROW, RowRequest(10**9, 0), window.panes.row_view)
    assert "outside the table" in blocker.args[0].message
    result = type_text(qtbot, window, "tuesday")
    assert result.result.query.token == "tuesday"


def test_only_the_newest_answer_is_shown(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    shown: list[object] = []
    answers(window, TOKENS).ready.connect(shown.append)
    texts = [f"day {i}" for i in range(40)]
    with qtbot.waitSignal(answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS):
        for text in texts:
            window.client.ask(TOKENS, TokensRequest(text), window.panes.token_pane)
    # The quick lane answers in order: once a later request is answered, no earlier answer is on its way.
    with qtbot.waitSignal(answers(window, ROW).ready, timeout=ANSWER_TIMEOUT_MS):
        window.client.ask(ROW, RowRequest(0, 0), window.panes.row_view)
    assert [a.text for a in shown] == [texts[-1]]


def test_k_and_double_click_and_compare(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    neighbours = answers(window, NEIGHBOURS).ready
    with qtbot.waitSignal(
        neighbours, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: len(r.result.neighbours) == 12
    ):
        window.panes.neighbours_pane.k_box.setValue(12)
    assert window.panes.neighbours_pane.table.rowCount() == 12
    first = window.panes.neighbours_pane.neighbour_tokens()[0]
    with qtbot.waitSignal(
        neighbours, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.result.query.token == first
    ) as blocker:
        window.panes.neighbours_pane.table.cellDoubleClicked.emit(0, 0)
    assert blocker.args[0].result.query.token == first
    with qtbot.waitSignal(answers(window, COSINE).ready, timeout=ANSWER_TIMEOUT_MS) as blocker:
        qtbot.keyClicks(window.panes.neighbours_pane.compare_input, "france")
    assert blocker.args[0].b == "france"
    assert "cosine(" in window.panes.neighbours_pane.compare_result.text()


def test_settings_are_remembered(qtbot, tmp_path) -> None:
    from embedexplorer.app import create_window

    settings = str(tmp_path / "remember.ini")
    first = create_window(settings)
    qtbot.addWidget(first)
    first.show()
    open_model(qtbot, first, "bundled")
    first.panes.neighbours_pane.k_box.setValue(5)
    qtbot.waitUntil(lambda: first.settings.k == 5)  # the k box waits for a pause before it asks
    first.panes.map.view.panel.visibility["food"].click()
    first.close()

    second = create_window(settings)
    qtbot.addWidget(second)
    assert second.settings.model == "bundled"
    assert second.panes.neighbours_pane.k_box.value() == 5
    assert second.settings.hidden_families == ["food"]
    second.close()


def _run_window_script(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (so sys.modules is its own), a settings path as argv[1]."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return subprocess.run(
            [sys.executable, "-c", code, f"{folder}/s.ini"], capture_output=True, text=True, timeout=120
        )


# The engine's parts the window's first frame does not need: they load in the worker with the first model.
ENGINE_MODULES = (
    "embedexplorer.core.tables.embedding_table", "embedexplorer.core.search.neighbours",
    "embedexplorer.core.maps.family_map", "embedexplorer.core.maps.projections", "embedexplorer.core.layers.trace",
    "embedexplorer.core.compare.comparison", "embedexplorer.core.health.vocabulary_health",
    "embedexplorer.core.directions.report", "embedexplorer.core.exercises.analogies", "gguf", "regex",
)


def test_window_shows_before_heavy_imports() -> None:
    code = (
        "import sys\n"
        "from embedexplorer.app import create_app, create_window\n"
        "app = create_app()\n"
        "window = create_window(sys.argv[1])\n"
        f"engine = [m for m in {ENGINE_MODULES!r} if m in sys.modules]\n"  # built, before the event loop turns
        "window.show()\n"
        "app.processEvents()\n"
        "heavy = [m for m in ('torch', 'transformers', 'tokenizers', 'sklearn') if m in sys.modules]\n"
        "print(window.isVisible(), heavy, engine)\n"
        "window.close()\n"
    )
    result = _run_window_script(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True [] []"


def test_window_process_never_builds_a_tokenizer() -> None:
    # Building one holds the GIL for ~90 ms (GPT-2); the window's tokenizer lives in a child process.
    code = (
        "import sys\n"
        "from PySide6.QtCore import QEventLoop, QTimer\n"
        "from embedexplorer.app import create_app, create_window\n"
        "from embedexplorer.jobs.table_jobs import LOAD, NEIGHBOURS, NeighboursRequest\n"
        "app = create_app()\n"
        "window = create_window(sys.argv[1])\n"
        "loop = QEventLoop()\n"
        "answers = []\n"
        "channel = window.client.channel\n"
        "asker = {LOAD: window.model_bar, NEIGHBOURS: window.panes.neighbours_pane}\n"
        "heard = lambda r: (answers.append(r.result.query.token), loop.quit())\n"
        "channel(NEIGHBOURS, asker[NEIGHBOURS]).ready.connect(heard)\n"
        "ask = lambda _r: window.client.ask(NEIGHBOURS, NeighboursRequest('monday', 5), asker[NEIGHBOURS])\n"
        "channel(LOAD, asker[LOAD]).ready.connect(ask)\n"
        "for kind in (LOAD, NEIGHBOURS):\n"
        "    failed = lambda f: (answers.append('failed: ' + f.message), loop.quit())\n"
        "    channel(kind, asker[kind]).failed.connect(failed)\n"
        "QTimer.singleShot(60000, loop.quit)\n"
        "window.open_model('bundled')\n"
        "loop.exec()\n"
        "print(len(answers), answers[0], [m for m in ('tokenizers', 'transformers') if m in sys.modules])\n"
        "window.close()\n"
    )
    result = _run_window_script(code)
    assert result.returncode == 0, result.stderr
    count, first, heavy = result.stdout.strip().splitlines()[-1].split(" ", 2)
    assert not first.startswith("failed"), result.stdout
    assert int(count) >= 1 and heavy == "[]"


def test_self_test_runs_the_whole_app(tmp_path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "embedexplorer", "--self-test"], capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["ok"] is True
    assert report["map_points"] == 63
    assert report["png_bytes"] > 10_000
    assert report["layers"] == 6  # MiniLM forward in the window's model process


def test_families_file_bad_then_good_then_saved(qtbot, window, tmp_path) -> None:
    from embedexplorer.core.maps.family_map import load_families

    open_model(qtbot, window, "bundled")
    bad = tmp_path / "bad.json"
    bad.write_text('{"families": {"days": ["monday", ', encoding="utf-8")
    with qtbot.waitSignal(answers(window, MAP).failed, timeout=ANSWER_TIMEOUT_MS):
        window.panes.map.view.use_families(str(bad))
    assert "not valid JSON" in window.message_bar.text()
    assert "keeps the families it had" in window.message_bar.text()
    assert len(window.panes.map.view.canvas.families) == 8  # the chapter's map is still there

    good = tmp_path / "good.json"
    good.write_text('{"families": {"days": ["monday", "friday"], "fruit": ["apple", "pear"]}}', encoding="utf-8")
    with qtbot.waitSignal(answers(window, MAP).ready, timeout=ANSWER_TIMEOUT_MS):
        window.panes.map.view.use_families(str(good))
    assert window.panes.map.view.canvas.families == ["days", "fruit"]
    assert window.settings.families_file == str(good)

    saved = tmp_path / "saved.json"
    assert window.panes.map.view.save_families(str(saved))
    assert load_families(saved) == {"days": ["monday", "friday"], "fruit": ["apple", "pear"]}


def test_long_paste_says_what_fits(qtbot, window, gpt2_folder) -> None:
    open_model(qtbot, window, str(gpt2_folder))
    text = " word" * 1_100 + "x" * 100_000  # 1,100 tokens and a huge tail: a careless paste
    with qtbot.waitSignal(
        answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == text
    ) as blocker:
        window.panes.token_pane.input.setText(text)
    result = blocker.args[0].report
    assert result.count > 1_024
    assert "no row for position 1,025" in window.panes.token_pane.summary.text()
    assert len(window.panes.token_pane.chip_tokens) == len(result.tokens) <= 1_024


def test_answers_never_re_lay_out_the_window(qtbot, window) -> None:
    # A pane that changes size repaints both plots; answers must land in space already there.
    window.resize(1360, 860)
    window.show()
    qtbot.waitExposed(window)
    # The window's own layout for its size first: the row pane where this height has room for it.
    placement = window.row_placement
    qtbot.waitUntil(lambda: placement.compact == placement.wants_compact())
    settle()
    panes = [window.panes.row_view, window.panes.neighbours_pane, window.panes.map.view.canvas, window.panes.token_pane]

    def sizes() -> list[object]:
        # The family panel grows downwards into empty space as families arrive; its width must not move.
        return [pane.size() for pane in panes] + [window.panes.map.view.panel.width()]

    before_load = sizes()
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "monday")
    settle()
    assert sizes() == before_load
    # (Only a text whose chips need another row grows the chip list, up to three rows.)
    for text in ("tokenization embeddings", "x", "supercalifragilistic", "?!", "paris"):
        type_text(qtbot, window, text)
        settle()
        assert sizes() == before_load, text
