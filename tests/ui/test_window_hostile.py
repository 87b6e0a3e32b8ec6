"""Hostile files and odd environments seen from the window (issue 17): a message, never a crash."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from embedexplorer.core.common.errors import FileChangedError, TokenizerFailedError
from embedexplorer.jobs.table_jobs import (
    LOAD,
    MAP,
    NEIGHBOURS,
    ROW,
    TOKENS,
    NeighboursRequest,
    RowRequest,
    TokensRequest,
)
from tests.faults.helpers import build_rotary_folder, word_level_tokenizer, write_table_folder
from tests.faults.test_hostile import CATASTROPHIC, plant_modules
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS, answers, open_model

REPO = Path(__file__).resolve().parents[2]


def test_the_window_started_from_downloads_runs_no_planted_code(qtbot, window, tmp_path, monkeypatch) -> None:
    downloads, marker = tmp_path / "Downloads", tmp_path / "planted-code-ran"
    plant_modules(downloads, marker)
    monkeypatch.chdir(downloads)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), ""]))  # "" is the working folder
    open_model(qtbot, window, "bundled")  # the window's tokenizer runs in a child process
    with qtbot.waitSignal(
        answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == "paris"
    ):
        window.panes.token_pane.set_text("paris")
    assert [chip.token for chip in window.panes.token_pane.chip_tokens] == ["paris"]
    assert not marker.exists()


def test_a_model_file_truncated_while_open_is_named_and_the_window_lives(qtbot, window, tmp_path) -> None:
    folder = build_rotary_folder(tmp_path / "model")
    # No text: the window asks nothing by itself after opening, so no read of its own meets the cut.
    window.panes.token_pane.set_text_quietly("")
    open_model(qtbot, window, str(folder))
    # Let the quick lane finish what the window asked by itself: a read already under way when
    # the file is cut can still meet the cut (the check and the read are microseconds apart).
    with qtbot.waitSignal(answers(window, NEIGHBOURS).ready, timeout=ANSWER_TIMEOUT_MS):
        window.client.ask(NEIGHBOURS, NeighboursRequest("paris", 5), window.panes.neighbours_pane)
    os.truncate(folder / "model.safetensors", 4096)  # another program cuts the file
    with qtbot.waitSignal(answers(window, ROW).failed, timeout=ANSWER_TIMEOUT_MS) as failed:
        # as the row view asks for a row of the memory map
        window.client.ask(ROW, RowRequest(3000, 0), window.panes.row_view)
    failure = failed.args[0]
    assert failure.is_a(FileChangedError)
    assert "model.safetensors changed on disk since the model was opened" in failure.message
    with qtbot.waitSignal(answers(window, NEIGHBOURS).failed, timeout=ANSWER_TIMEOUT_MS) as failed:
        window.client.ask(NEIGHBOURS, NeighboursRequest("paris", 5), window.panes.neighbours_pane)
    assert failed.args[0].is_a(FileChangedError)
    qtbot.waitUntil(lambda: "changed on disk" in window.message_bar.text(), timeout=ANSWER_TIMEOUT_MS)
    open_model(qtbot, window, "bundled")  # still alive: another model opens
    assert window.state.model_name == "all-MiniLM-L6-v2 (bundled)"


def test_special_files_in_the_window(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    fifo = tmp_path / "families.json"
    os.mkfifo(fifo)
    with qtbot.waitSignal(answers(window, MAP).failed, timeout=ANSWER_TIMEOUT_MS):
        window.panes.map.view.use_families(str(fifo))
    qtbot.waitUntil(lambda: "is a FIFO (named pipe), not a regular file" in window.message_bar.text())

    pipe_png = tmp_path / "map.png"
    os.mkfifo(pipe_png)
    assert not window.panes.map.exports.export_to(str(pipe_png), 400)
    assert "is a FIFO (named pipe), not a regular file" in window.message_bar.text()
    assert stat.S_ISFIFO(os.lstat(pipe_png).st_mode)  # never replaced by a regular file

    real, link = tmp_path / "real.png", tmp_path / "link.png"
    real.write_bytes(b"old")
    link.symlink_to(real)
    assert window.panes.map.exports.export_to(str(link), 400)
    assert link.is_symlink() and real.read_bytes()[:4] == b"\x89PNG"


def test_a_tokenizer_trap_is_a_message_in_the_window(qtbot, window, tmp_path) -> None:
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "c": 3}
    folder = write_table_folder(tmp_path / "regex", 4, 8, word_level_tokenizer(vocab, pre_tokenizer=CATASTROPHIC))
    with qtbot.waitSignal(answers(window, LOAD).ready, timeout=LOAD_TIMEOUT_MS):
        window.open_model(str(folder))
    with qtbot.waitSignal(answers(window, TOKENS).failed, timeout=ANSWER_TIMEOUT_MS) as failed:
        window.client.ask(TOKENS, TokensRequest("a" * 5000 + "b"), window.panes.token_pane)
    assert failed.args[0].is_a(TokenizerFailedError)
    assert failed.args[0].message.startswith("The tokenizer cannot read this text")
    with qtbot.waitSignal(answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS) as ready:
        window.client.ask(TOKENS, TokensRequest("b"), window.panes.token_pane)
    assert [token.id for token in ready.args[0].report.tokens] == [2]


def test_the_self_test_leaves_nothing_in_the_temporary_folder(tmp_path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "embedexplorer", "--self-test"], capture_output=True, text=True, timeout=180, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["ok"] is True and report["png_bytes"] > 10_000 and report["png_width"] == 1200
    assert "png" not in report
    assert list(scratch.iterdir()) == []
    kept = tmp_path / "kept.png"
    result = subprocess.run(
        [sys.executable, "-m", "embedexplorer", "--self-test", "--self-test-png", str(kept)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert json.loads(result.stdout.strip().splitlines()[-1])["png"] == str(kept)
    assert kept.read_bytes()[:4] == b"\x89PNG"
    assert list(scratch.iterdir()) == []
    shutil.rmtree(scratch)


def test_lessons_and_ollama_manifests_that_are_traps_are_messages_in_the_window(qtbot, window, tmp_path) -> None:
    """Hostile round 2: a lesson nested past Python's stack, one naming an Ollama model whose manifest is,
    and a lesson that is a FIFO: each a message on the window's own thread, none a crash or a hang."""
    deep = tmp_path / "deep.lesson.json"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    assert not window.panes.teaching.open_from(str(deep))
    assert "deep.lesson.json is not a lesson file: it is nested too deeply" in window.message_bar.text()

    fifo = tmp_path / "pipe.lesson.json"
    os.mkfifo(fifo)
    assert not window.panes.teaching.open_from(str(fifo))
    assert "is a FIFO (named pipe), not a regular file" in window.message_bar.text()

    store = tmp_path / "ollama"
    manifest = store / "manifests" / "registry.ollama.ai" / "library" / "deep" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("{\"layers\": " + "[" * 200_000 + "]" * 200_000 + "}", encoding="utf-8")
    (store / "blobs").mkdir()
    os.environ["OLLAMA_MODELS"] = str(store)
    try:
        lesson = tmp_path / "ollama.lesson.json"
        lesson.write_text(json.dumps({"embedexplorer_lesson": 1, "model": "ollama:deep"}), encoding="utf-8")
        assert not window.panes.teaching.open_from(str(lesson))  # checked on this (the GUI) thread
    finally:
        del os.environ["OLLAMA_MODELS"]
    assert "nested too deeply" in window.message_bar.text()
