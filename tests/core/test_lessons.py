"""Lesson files: round trip, every broken field named, the model checked without the network."""

from __future__ import annotations

import json

import pytest

from embedexplorer.core.exercises.chapter_model import chapter_notice
from embedexplorer.core.exercises.lessons import Lesson, LessonError, MapView, check_model, load_lesson, save_lesson

LESSON = Lesson(
    model="openai-community/gpt2",
    first_text="the river bank",
    second_text="my bank account",
    first_place=3,
    second_place=2,
    k=12,
    families_file="families.json",
    hidden_families=("days", "food"),
    map_view=MapView((-1.5, 2.0), (-0.75, 1.25)),
    note="Which bank is which?",
)


def test_round_trip_and_relative_families_file(tmp_path) -> None:
    path = tmp_path / "bank.lesson.json"
    save_lesson(LESSON, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["embedexplorer_lesson"] == 1
    assert data["texts"] == {"first": "the river bank", "second": "my bank account"}
    assert data["selected_places"] == {"first": 3, "second": 2}
    back = load_lesson(path)
    assert back.families_file == str(tmp_path / "families.json")  # found beside the lesson
    assert back == Lesson(**{**LESSON.__dict__, "families_file": str(tmp_path / "families.json")})
    assert [p.name for p in tmp_path.iterdir()] == ["bank.lesson.json"]  # no temporary left behind


def test_a_hand_written_lesson_needs_only_a_model(tmp_path) -> None:
    path = tmp_path / "short.json"
    path.write_text('{"embedexplorer_lesson": 1, "model": "bundled", "texts": {"first": " Monday"}}', encoding="utf-8")
    lesson = load_lesson(path)
    assert (lesson.model, lesson.first_text, lesson.second_text, lesson.k) == ("bundled", " Monday", "", 8)
    assert lesson.first_place is None and lesson.map_view is None and lesson.hidden_families == ()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b"[1, 2]", "not an EmbedExplorer lesson"),
        (b'{"model": "bundled"}', "not an EmbedExplorer lesson"),
        (b'{"embedexplorer_lesson": 7, "model": "bundled"}', "newer EmbedExplorer"),
        (b'{"embedexplorer_lesson": 1, "model": ""}', "'model' must name a model"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "k": 0}', "'k' must be a whole number"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "k": true}', "'k' must be a whole number"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "texts": "x"}', "'texts' must be an object"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "texts": {"first": 3}}', "texts.first must be text"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "selected_places": {"first": 0}}', "counted from 1"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "hidden_families": "days"}', "list of family names"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "map_view": {"x": [1, 0], "y": [0, 1]}}', "smaller first"),
        (b'{"embedexplorer_lesson": 1, "model": "bundled", "map_view": {"x": [0, 1e999], "y": [0, 1]}}', "finite"),
    ],
)
def test_broken_lessons_give_one_clear_message(tmp_path, content: bytes, message: str) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(LessonError, match=message) as caught:
        load_lesson(path)
    assert "broken.json" in str(caught.value) and "\n" not in str(caught.value)


def test_missing_and_huge_files(tmp_path) -> None:
    with pytest.raises(LessonError, match="Cannot read the lesson file"):
        load_lesson(tmp_path / "nowhere.json")
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * 1_000_001)
    with pytest.raises(LessonError, match="more than a lesson file can sensibly be"):
        load_lesson(huge)
    with pytest.raises(LessonError, match="Cannot save the lesson"):
        save_lesson(LESSON, tmp_path / "no-such-folder" / "x.json")


def test_model_check_never_downloads(tmp_path) -> None:
    assert check_model("bundled").available
    missing = check_model("someone/not-a-cached-model")
    assert not missing.available and missing.downloadable and "not on this computer" in missing.message
    folder = check_model(str(tmp_path / "gone"))
    assert not folder.available and not folder.downloadable and "cannot be opened here" in folder.message


def test_chapter_notice_only_for_other_models(minilm_table, gpt2_table) -> None:
    facts = minilm_table.facts()
    notice = chapter_notice(facts.model, facts.rows, facts.width)
    assert "GPT-2 small's (50,257 rows x 768 numbers)" in notice and "(30,522 x 384)" in notice
    gpt2 = gpt2_table.facts()
    assert chapter_notice(gpt2.model, gpt2.rows, gpt2.width) == ""
