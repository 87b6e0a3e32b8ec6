"""Where a map came from, in every export: the facts, their stability, and the points read back."""

from __future__ import annotations

import csv
import json
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from embedexplorer import __version__
from embedexplorer.core.common import digest
from embedexplorer.core.common.cache import file_key
from embedexplorer.core.exercises.lessons import Lesson, load_lesson, save_lesson
from embedexplorer.core.maps.family_map import family_map, load_families
from embedexplorer.core.maps.map_origin import with_provenance
from embedexplorer.core.maps.points_export import points_csv, write_points
from embedexplorer.core.maps.provenance import SHA_DIGITS, stamped
from embedexplorer.core.maps.web_page import map_page
from embedexplorer.core.maps.word_maps import from_family_map, word_map
from embedexplorer.core.maps.word_sets import from_list
from tests.core.test_sources import run_cli

DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def sha256sum(path: Path) -> str:
    """coreutils' own answer, not ours."""
    return subprocess.run(["sha256sum", str(path)], capture_output=True, text=True, check=True).stdout.split()[0]


@pytest.fixture(scope="module")
def bundled_map(minilm_table):  # type: ignore[no-untyped-def]
    return with_provenance(family_map(minilm_table, load_families()), minilm_table)


def test_a_map_says_which_model_file_storage_words_and_projection_made_it(minilm_table, bundled_map) -> None:
    facts = stamped(bundled_map.provenance, "2026-01-02T03:04:05Z")
    table_file = minilm_table.mapped_files[0].path
    assert facts["model"] == minilm_table.name == "all-MiniLM-L6-v2 (bundled)"
    assert "bundled" in str(facts["source"])
    assert facts["table_file"] == table_file.name == "model.safetensors"
    assert facts["table_sha256"] == sha256sum(table_file)[:SHA_DIGITS]
    assert facts["storage"] == "F32"
    assert facts["table"] == "30522 rows x 384 numbers"
    assert facts["words"] == "63 words in 8 families"
    assert facts["families"] == list(load_families())
    assert (facts["projection"], facts["seed"], facts["multi_token"]) == ("PCA", None, "average")
    assert facts["app"] == f"EmbedExplorer {__version__}"
    assert list(facts)[-1] == "exported" and facts["exported"] == "2026-01-02T03:04:05Z"
    assert DATE.fullmatch(str(stamped(bundled_map.provenance)["exported"]))


def test_a_tsne_map_names_its_library_settings_and_seed(minilm_table) -> None:
    words = from_list(minilm_table, "\n".join(minilm_table.tokens[i] for i in range(2000, 2200)), "skip", "a list")
    drawn = with_provenance(word_map(minilm_table, words, load_families(), "tsne", seed=7), minilm_table, "skip")
    facts = stamped(drawn.provenance)
    assert (facts["projection"], facts["seed"], facts["multi_token"]) == ("t-SNE", 7, "skip")
    settings = facts["projection_settings"]
    assert isinstance(settings, dict)
    assert settings["perplexity"] == 30 and settings["metric"] == "cosine"
    assert str(settings["library"]).startswith("openTSNE ") and "?" not in str(settings["library"])
    assert facts["words"] == words.description


def test_a_file_is_hashed_once_then_its_digest_is_read_from_the_cache(tmp_path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(bytes(range(256)) * 40_000)
    assert digest.file_sha256(model) == sha256sum(model)
    # The next process finds the cached digest, keyed by the file's identity: plant another to see it read.
    digest._known.clear()
    key = file_key(model, "sha256")
    assert key is not None
    from embedexplorer.core.common.cache import cache_dir

    (cache_dir() / f"{key}.sha256").write_bytes(b"\x11" * 32)
    assert digest.file_sha256(model) == "11" * 32
    # A changed file is a new identity: hashed again, right.
    model.write_bytes(b"another model")
    assert digest.file_sha256(model) == sha256sum(model)


def test_points_as_csv_read_back_are_the_maps_points(minilm_table, bundled_map, tmp_path) -> None:
    target = tmp_path / "points.csv"
    write_points(target, bundled_map, minilm_table.name)
    text = target.read_text(encoding="utf-8")
    facts = [line for line in text.splitlines() if line.startswith("#")]
    assert f"# table_sha256: {bundled_map.provenance.table_sha256}" in facts
    rows = list(csv.reader((line for line in text.splitlines() if not line.startswith("#")),
                           quoting=csv.QUOTE_NONNUMERIC))
    assert rows[0] == ["token", "id", "family", "x", "y"]
    shown = from_family_map(bundled_map, minilm_table.name)
    assert len(rows) - 1 == len(shown) == 63
    for (token, ids, family, x, y), label, pieces, f, (mx, my) in zip(
        rows[1:], shown.labels, shown.pieces, shown.family_of, shown.coords, strict=True
    ):
        assert token == label
        assert ([int(i) for i in ids.split()] if isinstance(ids, str) else [int(ids)]) == list(pieces)
        assert family == shown.families[f]
        assert (x, y) == (mx, my)  # exactly: the shortest text that reads back as the same float64
    # The ids are the tokenizer's.
    assert rows[1 + shown.labels.index("monday")][1] == minilm_table.encode("monday")[0].id


def test_a_word_of_several_tokens_has_its_ids_joined(minilm_table) -> None:
    families = {"made up": ["unbelievably", "cat"], "other": ["dog", "sun"]}
    drawn = with_provenance(family_map(minilm_table, families), minilm_table)
    rows = list(csv.reader((line for line in points_csv(drawn, "m").splitlines() if not line.startswith("#")),
                           quoting=csv.QUOTE_NONNUMERIC))
    several = next(r for r in rows[1:] if " " in str(r[1]))
    assert [int(i) for i in str(several[1]).split()] == [t.id for t in minilm_table.encode("unbelievably")]


def test_points_as_json_carry_provenance_and_the_same_points(minilm_table, bundled_map, tmp_path) -> None:
    target = tmp_path / "points.json"
    write_points(target, bundled_map, minilm_table.name)
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["provenance"]["table_sha256"] == bundled_map.provenance.table_sha256
    shown = from_family_map(bundled_map, minilm_table.name)
    assert [(p["token"], p["x"], p["y"]) for p in data["points"]] == [
        (label, float(x), float(y)) for label, (x, y) in zip(shown.labels, shown.coords.tolist(), strict=True)
    ]


def test_the_page_holds_no_address_and_forbids_every_request(minilm_table, bundled_map) -> None:
    page = map_page(bundled_map, minilm_table.name)
    assert "default-src 'none'" in page
    assert not re.search(r"(?i)\b(src|href)\s*=|https?://|@import|url\(", page)
    assert bundled_map.provenance.table_sha256 in page


def test_hostile_words_stay_words_in_the_page(minilm_table) -> None:
    families = {"</script><script>alert(1)</script>": ["cat", "dog"], "__TITLE__ & <b>": ["sun", "moon"]}
    drawn = with_provenance(family_map(minilm_table, families), minilm_table)
    page = map_page(drawn, "<!-- __MAP_DATA__ -->")
    assert page.count("</script>") == 2  # the data's and the program's: nothing ended early
    assert "<!--" not in page and "alert(1)</script>" not in page
    data = json.loads(re.search(r'id="map-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    assert data["families"][0] == "</script><script>alert(1)</script>"
    assert data["model"] == "<!-- __MAP_DATA__ -->"


def _without_png_date(data: bytes) -> bytes:
    """The PNG's chunks, less the tEXt/iTXt chunk that holds the Creation Time."""
    out, at = bytearray(data[:8]), 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        chunk = data[at : at + 12 + length]
        if not (chunk[4:8] in (b"tEXt", b"iTXt", b"zTXt") and chunk[8:].startswith(b"Creation Time\0")):
            out += chunk
        at += 12 + length
    return bytes(out)


def test_the_same_map_exported_twice_differs_only_in_its_date(tmp_path) -> None:
    outputs = []
    for run in ("first", "second"):
        folder = tmp_path / run
        folder.mkdir()
        names = {kind: folder / f"map.{kind}" for kind in ("png", "svg", "html", "csv")}
        result = run_cli("map", "--model", "bundled", "--json", "--width", "800",
                         *(f for kind, path in names.items() for f in (f"--{kind}", str(path))))
        assert result.returncode == 0, result.stderr
        payload = json.loads(result.stdout)
        dates = {payload["provenance"]["exported"]}
        files = {kind: path.read_bytes() for kind, path in names.items()}
        for kind in ("svg", "html", "csv"):
            dates |= set(DATE.findall(files[kind].decode("utf-8")))
        from PySide6.QtGui import QImage

        image = QImage(str(names["png"]))
        dates.add(image.text("Creation Time"))
        facts = json.loads(image.text("EmbedExplorer provenance"))
        assert facts["table_sha256"] == payload["provenance"]["table_sha256"]
        assert len(dates) == 1, dates  # one date for everything one command wrote
        for text_payload in ("svg", "html", "csv"):
            assert DATE.search(files[text_payload].decode("utf-8"))
        stripped = {kind: DATE.sub("", data.decode("utf-8")).encode("utf-8") for kind, data in files.items()
                    if kind != "png"}
        stripped["png"] = _without_png_date(files["png"])
        stripped["json"] = DATE.sub("", result.stdout.replace(str(folder), "")).encode("utf-8")
        outputs.append(stripped)
    for kind in outputs[0]:
        assert outputs[0][kind] == outputs[1][kind], kind
    first_csv = outputs[0]["csv"].decode("utf-8")
    assert "# table_sha256: " in first_csv and "# projection: PCA" in first_csv


def test_a_lesson_says_where_its_map_came_from_and_reads_back(bundled_map, tmp_path) -> None:
    facts = stamped(bundled_map.provenance)
    target = tmp_path / "class.lesson.json"
    save_lesson(Lesson(model="bundled", first_text="monday", provenance=facts), target)
    saved = json.loads(target.read_text(encoding="utf-8"))
    assert saved["provenance"]["table_sha256"] == bundled_map.provenance.table_sha256
    assert load_lesson(target).provenance == facts
    # A lesson written before provenance existed still opens.
    del saved["provenance"]
    target.write_text(json.dumps(saved), encoding="utf-8")
    assert load_lesson(target).provenance is None


def test_coordinates_in_the_page_are_the_maps(minilm_table, bundled_map) -> None:
    import base64

    page = map_page(bundled_map, minilm_table.name)
    data = json.loads(re.search(r'id="map-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    shown = from_family_map(bundled_map, minilm_table.name)
    x = np.frombuffer(base64.b64decode(data["x"]), dtype="<f4")
    assert np.array_equal(x, shown.coords[:, 0].astype(np.float32))
    assert data["labels"] == list(shown.labels)
    assert data["ids"] == [p[0] for p in shown.pieces]


def test_the_command_line_writes_the_page_and_points_without_qt(tmp_path) -> None:
    import sys

    page, points = tmp_path / "map.html", tmp_path / "points.csv"
    code = (
        "import sys\n"
        "from embedexplorer.cli import main\n"
        f"args = ['map', '--model', 'bundled', '--words', 'all', '--html', {str(page)!r}, '--csv', {str(points)!r}]\n"
        "assert main(args) == 0\n"
        "loaded = [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "30,522 shown" in page.read_text(encoding="utf-8")
    assert sum(1 for line in points.read_text(encoding="utf-8").splitlines() if not line.startswith("#")) == 30_523


def test_a_page_that_cannot_be_written_is_one_line_and_status_2(tmp_path) -> None:
    result = run_cli("map", "--model", "bundled", "--html", str(tmp_path / "no such folder" / "map.html"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Cannot write the page to" in result.stderr
    result = run_cli("map", "--model", "bundled", "--csv", str(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1


def test_a_map_on_two_directions_names_them_and_its_page_titles_its_axes(minilm_table) -> None:
    from functools import partial

    from embedexplorer.core.directions.direction import DirectionSpec, make_direction
    from embedexplorer.core.maps.direction_axes import direction_layout

    x = make_direction(minilm_table, DirectionSpec(pairs=(("he", "she"), ("king", "queen"))))
    y = make_direction(minilm_table, DirectionSpec(pairs=(("small", "big"),)))
    words = from_list(minilm_table, "nurse\ndoctor\nking\nqueen\ncat", "skip", "a list")
    drawn = with_provenance(
        word_map(minilm_table, words, load_families(), seed=9, layout_of=partial(direction_layout, x=x, y=y)),
        minilm_table,
    )
    facts = stamped(drawn.provenance)
    assert facts["seed"] is None  # nothing random: each point is its two cosines
    assert facts["projection"] == drawn.layout.name
    settings = facts["projection_settings"]
    assert isinstance(settings, dict)
    assert settings["x"] == drawn.layout.axis_title(0) and "he" in str(settings["x"])
    page = map_page(drawn, minilm_table.name)
    data = json.loads(re.search(r'id="map-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    assert data["axes"] == [drawn.layout.axis_title(0), drawn.layout.axis_title(1)]
