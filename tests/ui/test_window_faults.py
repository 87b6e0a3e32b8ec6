"""Bad input and faults seen from the window: a clear message, nothing lost, no hang."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from embedexplorer.jobs.table_jobs import LOAD, TOKENS
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model


def test_export_into_a_folder_that_cannot_exist(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    assert not window.panes.map.exports.export_to(str(blocker / "map.png"), 800)
    assert "was not exported" in window.message_bar.text()
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_existing_file_is_replaced_only_after_asking(qtbot, window, tmp_path, monkeypatch) -> None:
    open_model(qtbot, window, "bundled")
    target = tmp_path / "map.png"
    target.write_bytes(b"the user's own picture")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "PNG image (*.png)"))
    monkeypatch.setattr(QInputDialog, "getInt", lambda *a, **k: (700, True))
    asked: list[str] = []

    def answer(reply: QMessageBox.StandardButton):  # type: ignore[no-untyped-def]
        def question(parent, title, text, *args):  # type: ignore[no-untyped-def]
            asked.append(text)
            return reply

        return question

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    window.panes.map.exports.export_dialog()
    assert asked and "already exists" in asked[0]
    assert target.read_bytes() == b"the user's own picture"

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    window.panes.map.exports.export_dialog()
    assert target.read_bytes().startswith(b"\x89PNG")
    assert window.settings.export_width == 700


@contextlib.contextmanager
def full_disk(folder: Path):  # type: ignore[no-untyped-def]
    """A folder with almost no space: a 64 KiB tmpfs when we may mount, else a file-size limit."""
    folder.mkdir()
    mounted = (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True).returncode
        == 0
    )
    if mounted:
        try:
            yield "No space left on device"
        finally:
            subprocess.run(["umount", str(folder)], check=False)
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))
    try:
        yield "File too large"
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_full_disk_leaves_the_old_file_and_no_fragment(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    folder = tmp_path / "full"
    with full_disk(folder) as reason:
        target = folder / "map.png"
        target.write_bytes(b"old map")
        assert not window.panes.map.exports.export_to(str(target), 2400)
        assert reason in window.message_bar.text()
        assert target.read_bytes() == b"old map"
        assert sorted(p.name for p in folder.iterdir()) == ["map.png"]  # no half-written temporary


def test_pickle_only_folder_is_refused_in_the_window(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04 pretend pickle")
    with qtbot.waitSignal(answers(window, LOAD).failed, timeout=ANSWER_TIMEOUT_MS):
        window.open_model(str(tmp_path))
    assert "pickle" in window.message_bar.text()
    assert window.state.model_name == "all-MiniLM-L6-v2 (bundled)"  # the open model stays


def test_uncached_hub_id_offline_answers_at_once(qtbot, window) -> None:
    # No network is asked: the answer comes from the cache's index alone (a network wait would
    # outlast the signal's bound).
    with qtbot.waitSignal(answers(window, LOAD).failed, timeout=ANSWER_TIMEOUT_MS):
        window.open_model("someone/not-in-any-cache")
    assert "not in the local Hugging Face cache" in window.message_bar.text()
    assert window.message_bar.action_button.text() == "Open the bundled model"


def test_closing_while_a_model_loads_exits_quickly(gpt2_folder, tmp_path) -> None:
    code = (
        "import sys, time\n"
        "from PySide6.QtCore import QTimer\n"
        "from embedexplorer.app import create_app, create_window\n"
        "app = create_app()\n"
        "window = create_window(sys.argv[2])\n"
        "window.show()\n"
        "window.open_model(sys.argv[1])\n"
        "QTimer.singleShot(30, window.close)\n"
        "app.exec()\n"
        "print('closed', window.state.loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(gpt2_folder), str(tmp_path / "s.ini")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    # A close that waited for the load would still end (the worker's wait is bounded); a hang
    # would meet the run's 60 s bound.
    assert result.returncode == 0, result.stderr
    assert "closed" in result.stdout
    assert "QThread: Destroyed while thread is still running" not in result.stderr


@pytest.mark.parametrize("text", ["", "   ", "\x00\x01\x02", "😀🙂", "東京タワー", "مرحبا بالعالم"])
def test_odd_text_never_breaks_the_window(qtbot, window, text: str) -> None:
    open_model(qtbot, window, "bundled")
    with qtbot.waitSignal(
        answers(window, TOKENS).ready, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == text
    ):
        window.panes.token_pane.input.setText(text)
        window.panes.token_pane.flush()
    summary = window.panes.token_pane.summary.text()
    assert summary  # every case says something: tokens, or why there are none
    if not window.panes.token_pane.chip_tokens:
        assert "No tokens" in summary


def test_saving_families_into_a_full_disk_keeps_the_old_file(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, "bundled")
    folder = tmp_path / "full"
    with full_disk(folder) as reason:
        if reason != "No space left on device":
            pytest.skip("needs a small tmpfs: a families file is far below the file-size limit")
        target = folder / "families.json"
        target.write_text('{"families": {"old": [" one"]}}', encoding="utf-8")
        with contextlib.suppress(OSError), open(folder / "filler", "wb") as filler:
            filler.write(b"x" * 64 * 1024)  # fill every page that is left
        assert not window.panes.map.view.save_families(str(target))
        assert "unchanged" in window.message_bar.text()
        assert target.read_text(encoding="utf-8") == '{"families": {"old": [" one"]}}'
        assert sorted(p.name for p in folder.iterdir()) == ["families.json", "filler"]


def test_a_health_export_named_without_its_suffix_asks_before_replacing(qtbot, window, tmp_path, monkeypatch) -> None:
    """The save dialog confirms only the name typed ("health"); the file written is health.csv."""
    from embedexplorer.jobs.health_jobs import HEALTH

    open_model(qtbot, window, "bundled")
    pane = window.panes.health_pane
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=6 * ANSWER_TIMEOUT_MS):
        window.right.setCurrentWidget(pane)
    target = tmp_path / "health.csv"
    target.write_text("the user's own table", encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "health"), "CSV (*.csv)"))
    asked: list[str] = []

    def no(parent, title, text, *args):  # type: ignore[no-untyped-def]
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", no)
    pane.export_dialog()
    assert target.read_text(encoding="utf-8") == "the user's own table"
    assert len(asked) == 1 and "health.csv already exists" in asked[0]
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    pane.export_dialog()
    assert target.read_text(encoding="utf-8").startswith("# EmbedExplorer vocabulary health")
