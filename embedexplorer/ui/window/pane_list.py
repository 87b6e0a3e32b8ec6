"""The window's panes, in the order they are built, placed and walked with Tab.

Adding a pane is its module (a class that follows ``plugging.Pane``: ``TITLE``, ``PLACE``,
``MENUS`` and ``bind(ctx)``) and one line here; a menu it declares joins the menu bar by itself.
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
from .plugging import PaneEntry

PANES: tuple[PaneEntry, ...] = (
    PaneEntry("local_models", LocalModels),  # first: its File menu entry follows the open ones
    PaneEntry("token_pane", TokenPane),
    PaneEntry("suggestions", SuggestionsPane),
    PaneEntry("guess_bar", GuessFirstBar),
    PaneEntry("neighbours_pane", NeighboursPane),
    PaneEntry("row_view", RowView),
    PaneEntry("map", MapPane),
    PaneEntry("layers_pane", LayersPane),
    PaneEntry("directions_pane", DirectionsPane),
    PaneEntry("health_pane", HealthPane),
    PaneEntry("exercises", ExerciseDesk),
    PaneEntry("teaching", TeachingTools),
    PaneEntry("compare", CompareDialog),
)
