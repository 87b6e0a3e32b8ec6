"""The declarations the map canvas's parts share (for the type checker: the canvas defines them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF

from .labels import WordLabels
from .scatter import OverlayScatter

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.map_change import MapChange
    from ...core.maps.word_maps import WordMap


class CanvasParts:
    """What the canvas's parts (selection, finding, caption and legend, pictures) use of one another.

    Declared for the type checker only: ``MapCanvas`` builds these in ``__init__`` and defines the methods.
    """

    if TYPE_CHECKING:
        plot: Any
        ci: Any
        legend: Any
        caption: Any
        labels: WordLabels
        map: WordMap | None
        change: MapChange | None
        model_name: str
        marker_scale: float
        matches_changed: Any
        point_clicked: Any
        export_text_areas: dict[str, QRectF]
        _hidden: set[str]
        _isolated: bool
        _folded: list[str] | None
        _family_items: dict[str, pg.ScatterPlotItem]
        _rest_item: pg.ScatterPlotItem | None
        _match_item: OverlayScatter
        _current_item: OverlayScatter
        _query_item: OverlayScatter
        _neighbour_item: OverlayScatter
        _query_label: Any
        _legend_column: Any
        _selection: tuple[str, tuple[float, float] | None, list[tuple[float, float] | None], list[str]]
        _matches: np.ndarray
        _current: int
        _caption_html: str
        _caption_fit: tuple[float, int] | None
        _caption_short: bool
        caption_folded: bool

        def _sized(self, base: float) -> float: ...
        def _set_labels(self) -> None: ...
        def _restyle(self) -> None: ...
        def _overlays_changed(self) -> None: ...
        def _visible_mask(self) -> np.ndarray: ...
        def reset_view(self) -> None: ...
        def viewport(self) -> Any: ...
        def isolate(self, on: bool) -> bool: ...
        def show_legend(self, visible: bool) -> None: ...
        def _fit_caption(self, force: bool = False) -> None: ...
        def _show_caption(self, html: str) -> None: ...


def scene_points(view: pg.ViewBox, points: np.ndarray) -> np.ndarray:
    """Map coordinates to the view's scene pixels, all at once (the view's mapping is affine)."""
    origin = view.mapViewToScene(QPointF(0, 0))
    unit_x, unit_y = view.mapViewToScene(QPointF(1, 0)) - origin, view.mapViewToScene(QPointF(0, 1)) - origin
    x, y = points[:, 0:1], points[:, 1:2]
    return np.hstack([
        origin.x() + x * unit_x.x() + y * unit_y.x(),
        origin.y() + x * unit_x.y() + y * unit_y.y(),
    ]).reshape(-1, 2)
