"""The application's state in one place, without Qt: what is open, typed, selected and shown.

Panes read it, change it with ``update`` and ``watch`` the fields they follow; nobody reaches
into another pane to learn or change these things. Remembered settings and lesson files are
snapshots of it (``Snapshot``), written and read in one place each.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine's types, named here only: the window shows before the engine loads
    from .core.compare.map_change import MapChange
    from .core.exercises.lessons import Lesson
    from .core.layers.trace import LayerInput
    from .core.maps.family_map import FamilyMap
    from .core.maps.provenance import Provenance
    from .core.maps.word_maps import WordMap

Range = tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class Selection:
    """The token looked at: its id, its place among the text's tokens (from 0) and its readable form.

    ``in_text`` is False for a token picked by its id from a list (Vocabulary health), whatever the
    text holds: ``place`` then names no token of the text, and nothing of the text is run for it.
    """

    token_id: int
    place: int
    token: str
    in_text: bool = True


@dataclass(frozen=True, eq=False)  # compared by identity: a new map is a new fact
class ShownMap:
    """The map on screen: the family map or a bigger one."""

    map: FamilyMap | WordMap


@dataclass(frozen=True, eq=False)  # compared by identity: numpy rows inside
class ShownLayerInput:
    """What really enters layer 1 for the token at ``place`` (from 0) of the text, from the whole model's run."""

    token_id: int
    place: int
    input: LayerInput


@dataclass(frozen=True)
class Snapshot:
    """Every field of the state at one moment. Equal snapshots mean nothing changed."""

    # The model in use: what was typed for it, its name, and a number that grows with each open.
    model_spec: str = ""
    model_name: str = ""
    model_serial: int = 0
    # What is looked at.
    text: str = ""
    selection: Selection | None = None
    place_wanted: int | None = None  # a place to select once the next text's tokens arrive (a lesson's)
    k: int = 8
    compare_text: str = ""  # "Cosine with"
    pair_texts: tuple[str, str] = ("", "")  # the two texts of the Two texts exercise
    pair_places: tuple[int | None, int | None] = (None, None)
    # The map.
    families_file: str = ""
    hidden_families: frozenset[str] = frozenset()
    multi_token: str = "average"
    map_range: Range | None = None  # the part of the map on screen
    map_range_wanted: Range | None = None  # a lesson's view, applied once its map is drawn
    map_provenance: Provenance | None = None  # where the map on screen came from: lesson files say it
    guess_mode: bool = False  # Exercises > Guess first
    # Guess first keeps the neighbours back: the sentence said instead, or "" when they show.
    neighbours_held: str = ""
    guess_mark: int | None = None  # the id guessed, marked in the revealed list
    presentation: bool = False
    lesson_note: str = ""  # the teacher's note of the lesson open (shown when it opens, saved with it)
    map_change: MapChange | None = None  # the map coloured by each token's change from A to B, or its families
    shown_map: ShownMap | None = None  # the map on screen (the map pane writes it; the exercises read it)
    layer_input: ShownLayerInput | None = None  # what enters layer 1, once the whole model ran (the Layers pane)
    local_models: tuple[str, ...] = ()  # the models found on this machine that open, as last listed


Watcher = Callable[[Any], None]
FIELD_NAMES = frozenset(f.name for f in fields(Snapshot))


@dataclass
class AppState:
    """The current snapshot, and who to tell when a field of it changes."""

    now: Snapshot = field(default_factory=Snapshot)
    _watchers: dict[str, list[Watcher]] = field(default_factory=lambda: defaultdict(list))

    def __getattr__(self, name: str) -> Any:
        if name in FIELD_NAMES:
            return getattr(self.now, name)
        raise AttributeError(name)

    def watch(self, name: str, watcher: Watcher) -> None:
        """Call ``watcher(value)`` each time field ``name`` changes, in the order watchers were added."""
        if name not in FIELD_NAMES:
            raise KeyError(f"the state has no field {name!r}")
        self._watchers[name].append(watcher)

    def update(self, **changes: Any) -> None:
        """Change fields; watchers of the fields whose value really changed are told, once each."""
        old = self.now
        self.now = replace(old, **changes)
        for name in changes:
            value = getattr(self.now, name)
            if value != getattr(old, name):
                for watcher in list(self._watchers[name]):
                    watcher(value)

    def touch(self, name: str) -> None:
        """Tell the watchers of ``name`` its value again: the same token picked again is asked about again."""
        value = getattr(self.now, name)
        for watcher in list(self._watchers[name]):
            watcher(value)

    @property
    def loaded(self) -> bool:
        return self.now.model_serial > 0


def lesson_of(now: Snapshot) -> Lesson:
    """A lesson file's content: the model, both texts, the selected tokens (counted from 1), k, the map."""
    from .core.exercises.lessons import Lesson, MapView

    # A token chosen by its id from a list (Vocabulary health) is no place of the text: the lesson names none.
    chosen = now.selection
    first_place = None if chosen is None or not chosen.in_text else chosen.place
    second_place = now.pair_places[1]
    # Two texts' first side is saved apart only when it is not the main text and its selected token.
    own_first = (now.pair_texts[0], now.pair_places[0]) != (now.text, first_place)
    pair_place = now.pair_places[0]
    return Lesson(
        model=now.model_spec or now.model_name,
        first_text=now.text,
        second_text=now.pair_texts[1],
        first_place=None if first_place is None else first_place + 1,
        second_place=None if second_place is None else second_place + 1,
        k=now.k,
        families_file=now.families_file,
        hidden_families=tuple(sorted(now.hidden_families)),
        map_view=None if now.map_range is None else MapView(*now.map_range),
        note=now.lesson_note,
        pair_first_text=now.pair_texts[0] if own_first else None,
        pair_first_place=None if not own_first or pair_place is None else pair_place + 1,
    )


def changes_of(lesson: Lesson) -> dict[str, Any]:
    """What opening a lesson changes (the model aside: it opens first, when it is not the one in use)."""
    first = _index(lesson.first_place)
    pair_first = (lesson.first_text, first)
    if lesson.pair_first_text is not None:
        pair_first = (lesson.pair_first_text, _index(lesson.pair_first_place))
    return {
        "k": lesson.k,
        "hidden_families": frozenset(lesson.hidden_families),
        "families_file": lesson.families_file,
        "pair_texts": (pair_first[0], lesson.second_text),
        "pair_places": (pair_first[1], _index(lesson.second_place)),
        "place_wanted": first,
        "map_range_wanted": None if lesson.map_view is None else (lesson.map_view.x, lesson.map_view.y),
        "lesson_note": lesson.note,
    }


def _index(place: int | None) -> int | None:
    return None if place is None else place - 1
