"""Sharing from the window: File > Export map as web page, File > Export points, and where every export came from."""

from __future__ import annotations

import csv
import json
import re
import subprocess

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from tests.ui.conftest import open_model


def page_data(path) -> dict:  # type: ignore[no-untyped-def]
    page = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="map-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]


def answer_save_dialog(monkeypatch, path, kind: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (str(path), kind))


def test_the_window_exports_the_map_as_a_web_page_with_its_hidden_families(qtbot, window, tmp_path, monkeypatch):
    view, exports = window.panes.map.view, window.panes.map.exports
    assert not exports.page_action.isEnabled() and not exports.points_action.isEnabled()
    assert exports.page_action in window.menuBar().actions()[0].menu().actions()
    open_model(qtbot, window, "bundled")
    assert exports.page_action.isEnabled() and exports.points_action.isEnabled()
    view.panel.visibility["food"].setChecked(False)  # as a click on its box does
    target = tmp_path / "shared"
    answer_save_dialog(monkeypatch, target, "Web page (*.html)")
    exports.page_action.trigger()
    written = tmp_path / "shared.html"
    assert written.is_file()
    data = page_data(written)
    assert data["hidden"] == ["food"]
    assert data["caption"][0] == f"{window.state.model_name}: 55 words in 7 families"  # as the window's caption
    assert data["count"] == len(view.canvas.map) == 63
    table_file = window.client.session.table.mapped_files[0].path
    sha = subprocess.run(["sha256sum", str(table_file)], capture_output=True, text=True, check=True).stdout[:12]
    assert data["provenance"]["table_sha256"] == sha
    assert data["provenance"]["model"] == window.state.model_name
    assert window.settings.export_dir == str(tmp_path)


def test_the_window_exports_points_as_csv_and_json_that_read_back(qtbot, window, tmp_path, monkeypatch):
    open_model(qtbot, window, "bundled")
    view, exports = window.panes.map.view, window.panes.map.exports
    answer_save_dialog(monkeypatch, tmp_path / "points", "CSV table (*.csv)")
    exports.points_action.trigger()
    text = (tmp_path / "points.csv").read_text(encoding="utf-8")
    rows = list(csv.reader((line for line in text.splitlines() if not line.startswith("#")),
                           quoting=csv.QUOTE_NONNUMERIC))
    shown = view.canvas.map
    assert rows[0] == ["token", "id", "family", "x", "y"]
    assert [r[0] for r in rows[1:]] == list(shown.labels)
    assert [(r[3], r[4]) for r in rows[1:]] == [tuple(p) for p in shown.coords.tolist()]
    assert [r[2] for r in rows[1:]] == [shown.families[f] for f in shown.family_of]
    assert any(line.startswith("# table_sha256: ") for line in text.splitlines())

    answer_save_dialog(monkeypatch, tmp_path / "points", "JSON (*.json)")
    exports.points_action.trigger()
    data = json.loads((tmp_path / "points.json").read_text(encoding="utf-8"))
    assert [(p["token"], p["x"], p["y"]) for p in data["points"]] == [
        (label, x, y) for label, (x, y) in zip(shown.labels, shown.coords.tolist(), strict=True)
    ]
    assert data["provenance"]["projection"] == "PCA"


def test_pictures_and_lessons_from_the_window_say_where_the_map_came_from(qtbot, window, tmp_path):
    open_model(qtbot, window, "bundled")
    sha = window.panes.map.view.family_map.provenance.table_sha256
    png = tmp_path / "map.png"
    assert window.panes.map.exports.export_to(str(png), 800)
    image = QImage(str(png))
    assert json.loads(image.text("EmbedExplorer provenance"))["table_sha256"] == sha
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", image.text("Creation Time"))
    svg = tmp_path / "map.svg"
    assert window.panes.map.exports.export_to(str(svg))
    assert f'"table_sha256": "{sha}"' in svg.read_text(encoding="utf-8")
    lesson = tmp_path / "class.lesson.json"
    assert window.panes.teaching.save_to(str(lesson))
    assert json.loads(lesson.read_text(encoding="utf-8"))["provenance"]["table_sha256"] == sha


def test_a_page_that_cannot_be_written_is_one_sentence(qtbot, window, tmp_path):
    open_model(qtbot, window, "bundled")
    said: list[str] = []
    window.panes.map.view.message.connect(lambda text, _level: said.append(text))
    folder = tmp_path / "a folder"
    folder.mkdir()
    assert not window.panes.map.exports.export_page_to(str(folder))
    assert not window.panes.map.exports.export_points_to(str(folder))
    assert len(said) == 2 and all("\n" not in s and "Traceback" not in s for s in said)
    assert all(s.endswith("nothing was overwritten.") and s.count(". ") == 0 for s in said), said  # one sentence
    assert folder.is_dir()


def test_the_state_holds_where_the_map_came_from(qtbot, window):
    open_model(qtbot, window, "bundled")
    provenance = window.state.map_provenance
    assert provenance is not None and provenance is window.panes.map.view.family_map.provenance
    assert provenance.model == window.state.model_name
