"""The window's panes, in the order they are built, placed and walked with Tab.

Adding a pane is one line here and its module (a class with ``plug(ctx)``, see ``plugging.py``).
"""

from __future__ import annotations

from ..exercises.desk import ExerciseDesk
from ..exercises.guess_first import GuessFirstBar, SuggestionsPane
from ..exercises.teaching import TeachingTools
from ..map.pane import MapPane
from ..panes.compare_pane import CompareDialog
from ..panes.directions_pane import DirectionsPane
from ..panes.health_pane import HealthPane
from ..panes.layers_pane import LayersPane
from ..panes.local_models import LocalModels
from ..panes.neighbours_pane import NeighboursPane
from ..panes.row_view import RowView
from ..panes.token_pane import TokenPane
from .plugging import PaneEntry, Place

PANES: tuple[PaneEntry, ...] = (
    PaneEntry("local_models", Place.NOWHERE, LocalModels),  # first: its File menu entry follows the open ones
    PaneEntry("token_pane", Place.TOP, TokenPane),
    PaneEntry("suggestions", Place.TOP, SuggestionsPane),
    PaneEntry("guess_bar", Place.LEFT_LOWER, GuessFirstBar),
    PaneEntry("neighbours_pane", Place.LEFT_LOWER, NeighboursPane),
    PaneEntry("row_view", Place.LEFT_UPPER, RowView),
    PaneEntry("map", Place.RIGHT_TAB, MapPane, "&Map"),
    PaneEntry("layers_pane", Place.RIGHT_TAB, LayersPane, "Through the &layers"),
    PaneEntry("directions_pane", Place.RIGHT_TAB, DirectionsPane, "&Directions"),
    PaneEntry("health_pane", Place.RIGHT_TAB, HealthPane, "Vocabulary heal&th"),
    PaneEntry("exercises", Place.NOWHERE, ExerciseDesk),
    PaneEntry("teaching", Place.NOWHERE, TeachingTools),
    PaneEntry("compare", Place.NOWHERE, CompareDialog),
)
