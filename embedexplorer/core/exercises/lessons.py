"""Lesson files: a small JSON starting point a teacher hands to a class (model, texts, tokens, k, map).

Places are counted from 1, as the chapter counts them, so a teacher can write a
lesson by hand. Every field but the model has a default; anything malformed is
one LessonError naming the file and the field.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..common.errors import EmbedExplorerError, ModelNotFoundError, OfflineError
from ..common.files import atomic_write_bytes, read_regular
from ..sources.resolve import resolve_source

LESSON_VERSION = 1
# The key that marks a lesson file, and its format version.
MARKER = "embedexplorer_lesson"
# A lesson is a few hundred bytes; anything far larger is not one.
MAX_LESSON_BYTES = 1_000_000
MAX_TEXT_CHARS = 10_000
MAX_K = 200
# The key, in "texts" and "selected_places", of Two texts' own first text (absent: the first text is its).
TWO_TEXTS_FIRST = "two_texts_first"


class LessonError(EmbedExplorerError):
    """A lesson file cannot be read, or one of its fields is wrong."""


@dataclass(frozen=True)
class MapView:
    """The map's visible ranges."""

    x: tuple[float, float]
    y: tuple[float, float]


@dataclass(frozen=True)
class Lesson:
    """Everything a lesson sets up. ``places`` are 1-based token places, None when no token is picked."""

    model: str
    first_text: str = ""
    second_text: str = ""
    first_place: int | None = None
    second_place: int | None = None
    k: int = 8
    families_file: str = ""
    hidden_families: tuple[str, ...] = field(default=())
    map_view: MapView | None = None
    note: str = ""
    # Two texts' first text and place, when they are not the main text and its selected place: the
    # lesson's "first" text is both, unless the teacher gave the exercise a first text of its own.
    pair_first_text: str | None = None
    pair_first_place: int | None = None
    # Where the lesson's map came from (model, table file's SHA-256, projection, app, date): for the
    # reader's information, so a class can tell whether its model is the teacher's. Never applied.
    provenance: dict[str, object] | None = None

    def to_dict(self) -> dict[str, object]:
        texts: dict[str, object] = {"first": self.first_text, "second": self.second_text}
        places: dict[str, object] = {"first": self.first_place, "second": self.second_place}
        if self.pair_first_text is not None:
            texts[TWO_TEXTS_FIRST] = self.pair_first_text
            places[TWO_TEXTS_FIRST] = self.pair_first_place
        return {
            MARKER: LESSON_VERSION,
            "model": self.model,
            "texts": texts,
            "selected_places": places,
            "k": self.k,
            "families_file": self.families_file,
            "hidden_families": list(self.hidden_families),
            "map_view": None if self.map_view is None else {k: list(v) for k, v in asdict(self.map_view).items()},
            "note": self.note,
            "provenance": self.provenance,
        }


@dataclass(frozen=True)
class ModelCheck:
    """Whether a lesson's model can be opened here, and if not whether a download could fetch it."""

    available: bool
    downloadable: bool
    message: str


def save_lesson(lesson: Lesson, path: str | Path) -> None:
    """Write a lesson atomically; a failed write is a LessonError and leaves any old file untouched."""
    target = Path(path)
    checked = lesson_from_dict(lesson.to_dict(), target.name)  # never write a file we could not read back
    payload = json.dumps(checked.to_dict(), indent=2, ensure_ascii=False) + "\n"
    try:
        atomic_write_bytes(target, payload.encode("utf-8"), through_link=True)
    except OSError as exc:
        raise LessonError(f"Cannot save the lesson to {target}: {exc.strerror or exc}.") from exc


def load_lesson(path: str | Path) -> Lesson:
    """Read a lesson file; a families file named relative to it is found beside it."""
    file = Path(path)
    # Bounded, and never a FIFO or a device (a link to /dev/zero): refused at once, not waited on.
    raw = read_regular(file, "lesson file", MAX_LESSON_BYTES, LessonError)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise LessonError(f"{file.name} is not a lesson file: it is not UTF-8 text.") from exc
    except ValueError as exc:
        raise LessonError(f"{file.name} is not a lesson file: it is not valid JSON ({exc}).") from exc
    except RecursionError as exc:
        raise LessonError(f"{file.name} is not a lesson file: it is nested too deeply to read.") from exc
    lesson = lesson_from_dict(data, file.name)
    if lesson.families_file and not Path(lesson.families_file).is_absolute():
        beside = file.parent / lesson.families_file
        lesson = replace(lesson, families_file=str(beside))
    return lesson


def lesson_from_dict(data: object, source: str = "the lesson") -> Lesson:
    """A checked Lesson from parsed JSON, or a LessonError naming ``source`` and the field."""
    if not isinstance(data, dict) or MARKER not in data:
        raise LessonError(f"{source} is not an EmbedExplorer lesson (it has no {MARKER!r} field).")
    version = data[MARKER]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise LessonError(f"{source}: {MARKER!r} must be a format number such as 1.")
    if version > LESSON_VERSION:
        raise LessonError(
            f"{source} was written by a newer EmbedExplorer (lesson format {version}; this one reads {LESSON_VERSION})."
        )
    model = data.get("model")
    if isinstance(model, str):
        model = _text(data, "model", f"{source}: model")
    if not isinstance(model, str) or not model.strip():
        raise LessonError(f"{source}: 'model' must name a model (a folder, a Hugging Face id or 'bundled').")
    texts = _object(data, "texts", source)
    places = _object(data, "selected_places", source)
    pair_first_text, pair_first_place = None, None
    if TWO_TEXTS_FIRST in texts:
        pair_first_text = _text(texts, TWO_TEXTS_FIRST, f"{source}: texts.{TWO_TEXTS_FIRST}")
        pair_first_place = _place(places.get(TWO_TEXTS_FIRST), f"{source}: selected_places.{TWO_TEXTS_FIRST}")
    return Lesson(
        model=model.strip(),
        first_text=_text(texts, "first", f"{source}: texts.first"),
        second_text=_text(texts, "second", f"{source}: texts.second"),
        first_place=_place(places.get("first"), f"{source}: selected_places.first"),
        second_place=_place(places.get("second"), f"{source}: selected_places.second"),
        k=_k(data.get("k", 8), source),
        families_file=_text(data, "families_file", f"{source}: families_file"),
        hidden_families=_names(data.get("hidden_families", []), source),
        map_view=_map_view(data.get("map_view"), source),
        note=_text(data, "note", f"{source}: note"),
        provenance=_provenance(data.get("provenance"), source),
        pair_first_text=pair_first_text,
        pair_first_place=pair_first_place,
    )


def check_model(spec: str) -> ModelCheck:
    """Can the lesson's model be opened here without a download? Never touches the network."""
    try:
        resolve_source(spec, allow_download=False)
    except OfflineError as exc:
        return ModelCheck(False, True, f"This lesson uses {spec}, which is not on this computer. {exc}")
    except ModelNotFoundError as exc:
        return ModelCheck(False, False, f"This lesson uses {spec}, which cannot be opened here: {exc}")
    return ModelCheck(True, False, "")


def _object(data: dict[str, object], key: str, source: str) -> dict[str, object]:
    value = data.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise LessonError(f"{source}: {key!r} must be an object with 'first' and 'second'.")
    return value


def _text(data: dict[str, object], key: str, where: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise LessonError(f"{where} must be text.")
    if any("\ud800" <= c <= "\udfff" for c in value):
        # JSON can spell half a character ("\ud800"); no file could save it again.
        raise LessonError(f"{where} holds half of a character (a lone surrogate), which is not text.")
    if len(value) > MAX_TEXT_CHARS:
        raise LessonError(f"{where} is {len(value):,} characters; a lesson keeps at most {MAX_TEXT_CHARS:,}.")
    return value


def _place(value: object, where: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise LessonError(f"{where} must be a place counted from 1 (or null), not {value!r}.")
    return value


def _k(value: object, source: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_K:
        raise LessonError(f"{source}: 'k' must be a whole number from 1 to {MAX_K}, not {value!r}.")
    return value


def _names(value: object, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LessonError(f"{source}: 'hidden_families' must be a list of family names.")
    for name in value:
        _text({"name": name}, "name", f"{source}: hidden_families")
    return tuple(dict.fromkeys(value))


def _map_view(value: object, source: str) -> MapView | None:
    if value is None:
        return None
    where = f"{source}: 'map_view'"
    if not isinstance(value, dict):
        raise LessonError(f"{where} must be an object with 'x' and 'y' ranges, or null.")
    ranges = []
    for axis in ("x", "y"):
        pair = value.get(axis)
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in pair)
            or not pair[0] < pair[1]
        ):
            raise LessonError(f"{where}.{axis} must be two finite numbers, the smaller first.")
        ranges.append((float(pair[0]), float(pair[1])))
    return MapView(ranges[0], ranges[1])


def _provenance(value: object, source: str) -> dict[str, object] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise LessonError(f"{source}: 'provenance' must be an object of facts, or null.")
    return dict(value)
