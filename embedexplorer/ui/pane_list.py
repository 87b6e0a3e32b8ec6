"""The window's panes, in the order they are built, placed and walked with Tab.

Adding a pane is one line here and its module (a class with ``plug(ctx)``, see ``plugging.py``).
"""

from __future__ import annotations

from .compare_pane import CompareDialog
from .directions_pane import DirectionsPane
from .exercise_desk import ExerciseDesk
from .guess_first import GuessFirstBar, SuggestionsPane
from .layers_pane import LayersPane
from .local_models import LocalModels
from .map_pane import MapPane
from .neighbours_pane import NeighboursPane
from .plugging import PaneEntry, Place
from .row_view import RowView
from .teaching import TeachingTools
from .token_pane import TokenPane

PANES: tuple[PaneEntry, ...] = (
    PaneEntry("local_models", Place.NOWHERE, LocalModels),  # first: its File menu entry follows the open ones
    PaneEntry("token_pane", Place.TOP, TokenPane),
    PaneEntry("suggestions", Place.TOP, SuggestionsPane),
    PaneEntry("guess_bar", Place.LEFT_LOWER, GuessFirstBar),
    PaneEntry("neighbours_pane", Place.LEFT_LOWER, NeighboursPane),
    PaneEntry("row_view", Place.LEFT_UPPER, RowView),
    PaneEntry("map_view", Place.RIGHT_TAB, MapPane, "&Map"),
    PaneEntry("layers_pane", Place.RIGHT_TAB, LayersPane, "Through the &layers"),
    PaneEntry("directions_pane", Place.RIGHT_TAB, DirectionsPane, "&Directions"),
    PaneEntry("exercises", Place.NOWHERE, ExerciseDesk),
    PaneEntry("teaching", Place.NOWHERE, TeachingTools),
    PaneEntry("compare", Place.NOWHERE, CompareDialog),
)
