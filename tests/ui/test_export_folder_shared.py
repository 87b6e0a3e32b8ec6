"""Every save dialog opens where the last thing was saved, whichever pane saved it.

Read in the code and then seen: the Vocabulary health tab kept the export folder it had at launch, so
after a map export to another folder its Export... dialog opened in the old one; a lesson or the
families saved somewhere did not move the folder the next dialog opens in at all.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from embedexplorer.jobs.health_jobs import HEALTH
from tests.ui.conftest import answers, open_model
from tests.ui.test_health_pane import HEALTH_TIMEOUT_MS


def test_each_save_dialog_starts_in_the_last_folder_saved_to(qtbot, window, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    health = window.panes.health_pane
    with qtbot.waitSignal(answers(window, HEALTH).ready, timeout=HEALTH_TIMEOUT_MS):
        window.right.setCurrentWidget(health)
    started: list[Path] = []

    def cancelled(_parent, _title, start, *_args, **_kwargs) -> tuple[str, str]:  # type: ignore[no-untyped-def]
        started.append(Path(start))  # only where the dialog opened matters here: the person cancels
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", cancelled)
    saves = {
        "map": lambda folder: window.panes.map.exports.export_points_to(str(folder / "points.csv")),
        "lesson": lambda folder: window.panes.teaching.save_to(str(folder / "class.lesson.json"), ""),
        "families": lambda folder: window.panes.map.view.save_families(str(folder / "families.json")),
    }
    for name, save in saves.items():
        folder = tmp_path / name
        folder.mkdir()
        assert save(folder)
        started.clear()
        health.export_dialog()
        window.panes.teaching.save_dialog()
        assert [path.parent for path in started] == [folder, folder], (name, started)
