"""The map drawn with pyqtgraph: the same picture on screen and in exported files.

One scatter item per family plus one grey item for every other row (a big map holds up
to the whole vocabulary), a label layer that never lets two labels overlap, the selected
token's star and its neighbours' rings, search matches, and PNG and SVG export.

The canvas holds the items and the map; its parts are split by what they do: ``labels``
(placing words), ``scatter`` (the items), ``selection`` (star and rings), ``finding``
(search and isolation), ``caption`` (caption and legend) and ``picture`` (PNG export).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontMetricsF,
    QResizeEvent,
)
from PySide6.QtWidgets import QWidget

from ...core.common.constants import NO_FAMILY
from ..style import fonts, theme
from .caption import CaptionAndLegend
from .change_colours import change_colour
from .finding import Finding
from .keys import KEYS_HINT, KeyboardMoves
from .labels import WordLabels
from .picture import Picture
from .pointing import Pointing
from .scatter import OverlayScatter, UniformScatter, rest_colour
from .selection import SelectionMarks
from .sizes import (
    BIG_FAMILY_SIZE,
    CURRENT_SIZE,
    HIGHLIGHT_SIZE,
    LEGEND_TEXT_PT,
    MATCH_SIZE,
    MAX_LABELLED_POINTS,
    REST_SIZE,
    RING_SIZE,
    SMALL_FAMILY_SIZE,
    STAR_SIZE,
)

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.compare.map_change import MapChange
    from ...core.maps.family_map import FamilyMap
    from ...core.maps.word_maps import WordMap


class MapCanvas(
    KeyboardMoves, SelectionMarks, Finding, Pointing, CaptionAndLegend, Picture, pg.GraphicsLayoutWidget
):
    """Scatter of a map's points, a legend, a caption, the selected token's place and search matches.

    Families can be hidden or highlighted; the highlight and the matches are drawn as
    items on top rather than by restyling every point.
    """

    point_clicked = Signal(str)  # what a clicked point stands for, ready to look up
    matches_changed = Signal(int, int)  # how many points match the search, which one is current (-1: none)
    colouring_changed = Signal(object)  # the MapChange the dots are filled by now, or None: by family

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.addPlot(row=0, col=0, enableMenu=False)  # no context menu: not even built
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self._axis_titles = {"bottom": "direction 1 of the map", "left": "direction 2 of the map"}
        for axis, title in self._axis_titles.items():
            self.plot.setLabel(axis, title)
        self.plot.getViewBox().sigResized.connect(self._fit_axis_titles)
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
            # The axes draw the grid, so each reaches across the whole plot and is painted again
            # whenever anything in it changes (a new star and rings, a hovered point). Kept as a
            # picture on the screen, that costs a copy, not a replay of every line and tick.
            self.plot.getAxis(axis).setCacheMode(pg.QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # The legend sits beside the plot, not on it, so it never hides a point.
        self.legend = pg.LegendItem(labelTextSize=f"{LEGEND_TEXT_PT:g}pt")
        side = self.addLayout(row=0, col=1)
        side.addItem(self.legend, row=0, col=0)
        side.addLabel("", row=1, col=0)
        side.layout.setRowStretchFactor(1, 10)
        side.setMaximumWidth(200)
        self.ci.layout.setColumnStretchFactor(0, 10)
        self._legend_column = side
        self.show_legend(False)  # on screen the family panel is the legend; pictures get this one
        self.caption = pg.LabelItem(justify="left")
        self._caption_html = ""  # the whole caption; a short canvas shows its first line only
        self._caption_fit: tuple[float, int] | None = None  # the room and height it was last fitted to
        self._caption_short = False  # True while only the first line is shown
        self.caption_folded = False  # presentation mode: the first line only, whatever the room
        self.addItem(self.caption, row=1, col=0, colspan=2)
        self.map: WordMap | None = None
        self.change: MapChange | None = None  # points coloured by their token's change, or by family
        self._folded: list[str] | None = None
        self.model_name = ""
        self._family_items: dict[str, pg.ScatterPlotItem] = {}
        self._rest_item: pg.ScatterPlotItem | None = None
        self.labels = WordLabels()
        self.labels.setZValue(4)
        self.plot.addItem(self.labels)
        self._hidden: set[str] = set()
        self._highlight: str | None = None
        self._isolated = False
        # How many times its normal size each marker and text is drawn (presentation mode: larger).
        self.marker_scale = 1.0
        self._highlight_item = OverlayScatter(pxMode=True)
        self._highlight_item.setZValue(5)
        self._match_item = OverlayScatter(pxMode=True, symbol="o", size=MATCH_SIZE)
        self._match_item.setZValue(6)
        self._current_item = OverlayScatter(pxMode=True, symbol="o", size=CURRENT_SIZE)
        self._current_item.setZValue(7)
        self._query_item = OverlayScatter(pxMode=True, symbol="star", size=STAR_SIZE)
        self._query_item.setZValue(10)
        self._neighbour_item = OverlayScatter(pxMode=True, symbol="o", size=RING_SIZE)
        self._neighbour_item.setZValue(9)
        # On a faint box of the plot's own colour: read over the grid, dots and rings it may still touch.
        self._query_label = pg.TextItem(anchor=(0, 1))
        self._query_label.setZValue(11)
        # The name moves to the star's other side when a pan, zoom or resize would cut it.
        self.plot.getViewBox().sigRangeChanged.connect(self._place_query_label)
        self.plot.getViewBox().sigResized.connect(self._place_query_label)
        # The point a click would look up, drawn larger on top (``Pointing`` says which). pyqtgraph's
        # own hover style would restyle the hovered point inside its item and so repaint every
        # point of the map (40 ms at 50,257 points); this item repaints only the few pixels around it.
        self._hover_item = OverlayScatter(pxMode=True, symbol="o")
        self._hover_item.setZValue(8)
        self._hover_item.setVisible(False)
        self._hover_point = -1
        self._pointer_at: QPointF | None = None  # where the pointer rests on the map, in the scene
        self._tip_shown = ""
        # One hit-test for the click too: pyqtgraph's click (press and release in one place, not a pan).
        self.scene().sigMouseClicked.connect(self._on_scene_clicked)
        for item in (
            self._highlight_item, self._match_item, self._current_item,
            self._neighbour_item, self._query_item, self._query_label, self._hover_item,
        ):
            self.plot.addItem(item)
        # Each marker item's size at the normal scale; family items join with each map.
        self._base_sizes: dict[pg.ScatterPlotItem, float] = {
            self._match_item: MATCH_SIZE, self._current_item: CURRENT_SIZE,
            self._query_item: STAR_SIZE, self._neighbour_item: RING_SIZE,
        }
        self._selection: tuple[str, tuple[float, float] | None, list[tuple[float, float] | None], list[str]] = (
            "", None, [], []
        )
        self._matches = np.empty(0, dtype=np.int64)
        self._current = -1
        # set by render_image: where its texts lie in the last exported picture, in pixels
        self.export_text_areas: dict[str, QRectF] = {}
        self._use_map_font()
        self.apply_palette()
        # Reached with Tab like any control: a frame in the focus colour says so (room kept when unfocused).
        self.setStyleSheet(
            "MapCanvas { border: 2px solid transparent; } MapCanvas:focus { border: 2px solid palette(highlight); }"
        )
        self.setAccessibleDescription(KEYS_HINT)

    def _use_map_font(self) -> None:
        """Every text of the map in the bundled family, so pictures match on every machine."""
        scale = self.marker_scale
        for axis in ("bottom", "left"):
            item = self.plot.getAxis(axis)
            item.setStyle(tickFont=fonts.map_font(8 * scale))
            item.label.setFont(fonts.map_font(9 * scale))
        self.caption.item.setFont(fonts.map_font(9 * scale))
        self._query_label.textItem.setFont(fonts.map_font(10 * scale))
        self._fit_axis_titles()

    def _fit_axis_titles(self) -> None:
        """Each axis's whole title where the plot is long enough for it, else only "direction 1" or "2".

        A short canvas (a laptop in presentation mode) would cut the left title at both ends;
        the caption names the map's kind as well. Pictures are laid out large: whole titles.
        """
        view = self.plot.getViewBox()
        for axis_name, room in (("bottom", view.width()), ("left", view.height())):
            axis = self.plot.getAxis(axis_name)
            whole = self._axis_titles[axis_name]
            metrics = QFontMetricsF(axis.label.font())
            fits = metrics.horizontalAdvance(whole) <= room
            if fits:
                title = whole
            elif " of the " in whole:
                title = whole.split(" of the ")[0]
            else:  # a direction's pairs: as many as fit, then an ellipsis
                title = metrics.elidedText(whole, Qt.TextElideMode.ElideRight, max(room, 40.0))
            if axis.labelText != title:
                axis.setLabel(title)
                # pyqtgraph places the title as the axis is resized: placed again for its new length.
                axis.resizeEvent()

    def refit_axis_titles_later(self) -> None:
        """Once the layout has given the plot its new size (the search row moved), fit and place the titles."""
        QTimer.singleShot(0, self._fit_axis_titles)

    # ----- presentation: larger markers and text for a projector ---------------------------
    def set_marker_scale(self, scale: float) -> None:
        """Draw every marker and text of the map ``scale`` times its normal size (1.0: normal).

        Maps drawn later keep the scale; the view, the selection and the search stay as they are.
        """
        self.marker_scale = float(scale)
        self._use_map_font()
        for item, base in self._base_sizes.items():
            self._resize_item(item, base)
        self.labels.set_font(fonts.map_font(8 * self.marker_scale), self._sized(SMALL_FAMILY_SIZE) / 2)
        if self.map is not None:
            self._update_caption()
            self._restyle()  # the highlight's markers
        if self._selection[1] is not None:
            self._draw_selection()  # the star's and the rings' outlines, and the labels
        else:
            self._set_labels()
        self.show_legend(self._legend_column.isVisible())

    def _sized(self, base: float) -> float:
        """A size in pixels at the normal scale, at the scale in use."""
        return base * self.marker_scale

    def _resize_item(self, item: pg.ScatterPlotItem, base: float) -> None:
        item.setSize(self._sized(base))

    def marker_sizes(self) -> dict[str, float]:
        """The size in pixels of each kind of marker drawn now (family names, "other rows", "star", "rings")."""
        items = dict(self._family_items)
        items.update({"other rows": self._rest_item, "star": self._query_item, "rings": self._neighbour_item})
        # A point's own size, or (-1) the item's: what pyqtgraph draws.
        return {
            name: float(item.data["size"][0] if item.data["size"][0] >= 0 else item.opts["size"])
            for name, item in items.items()
            if item is not None and len(item.data)
        }

    # ----- content -----------------------------------------------------------------------
    def set_map(self, the_map: FamilyMap | WordMap, model_name: str, hidden: set[str] | None = None) -> None:
        """Draw a map: one scatter item and one brush per family, grey for the rest."""
        from ...core.maps.word_maps import WordMap, from_family_map

        if hidden is not None:
            self._hidden = set(hidden)
        shown = the_map if isinstance(the_map, WordMap) else from_family_map(the_map, model_name)
        self.map, self.model_name = shown, model_name
        self._folded = None
        for item in list(self._family_items.values()) + ([self._rest_item] if self._rest_item else []):
            self.plot.removeItem(item)
            self._base_sizes.pop(item, None)
        self._family_items.clear()
        self._rest_item = None
        self._hover_item.setVisible(False)
        self._hover_point = -1
        self._isolated = False
        big = len(shown) > MAX_LABELLED_POINTS
        size = BIG_FAMILY_SIZE if big else SMALL_FAMILY_SIZE
        rest = np.flatnonzero(shown.family_of == NO_FAMILY)
        if rest.size:
            grey = rest_colour(big)
            self._rest_item = self._scatter(rest, pg.mkBrush(grey), None, REST_SIZE if big else 7, "other rows")
            self._rest_item.setZValue(1)
        for index, family in enumerate(shown.families):
            members = np.flatnonzero(shown.family_of == index)
            colour = theme.family_colour(index)
            item = self._scatter(members, pg.mkBrush(colour), pg.mkPen(colour.darker(150), width=1), size, family)
            item.setZValue(2)
            self._family_items[family] = item
        if self.change is not None:  # the items were made with their family's brush: restyled only for a change
            self._colour_by_change()
        self._set_labels()
        self._axis_titles = {"bottom": shown.layout.axis_title(0), "left": shown.layout.axis_title(1)}
        self._fit_axis_titles()
        self._matches = np.empty(0, dtype=np.int64)
        self._current = -1
        self._match_item.setData(x=[], y=[])
        self._current_item.setData(x=[], y=[])
        self.clear_selection()
        self._restyle()
        self.reset_view()

    def _scatter(self, members: np.ndarray, brush: object, pen: object, size: int, name: str) -> pg.ScatterPlotItem:
        """One family's points (``size`` in pixels at the normal scale)."""
        assert self.map is not None
        coords = self.map.coords
        item = UniformScatter(
            x=coords[members, 0],
            y=coords[members, 1],
            data=members,
            brush=brush,
            pen=pen,
            size=self._sized(size),
            pxMode=True,
            name=name,
        )
        self._base_sizes[item] = size
        self.plot.addItem(item)
        return item

    # ----- colour by change -----------------------------------------------------------------
    def set_change(self, change: MapChange | None) -> None:
        """Colour each point by its token's change from table A to B (None: by family again)."""
        self.change = change
        self._colour_by_change()
        self._restyle()  # a highlighted family's larger dots take its points' new fill
        if self._selection[1] is not None:
            self._draw_selection()  # the labels' colours follow, the selection's with them
        else:
            self._set_labels()
        self._update_caption()
        self.colouring_changed.emit(change)  # the key beside the map follows

    @property
    def _big(self) -> bool:
        return self.map is not None and len(self.map) > MAX_LABELLED_POINTS

    def point_colour(self, point: int) -> QColor | None:
        """A point's colour on the change scale, or None while the map shows families."""
        if self.change is None or self.map is None:
            return None
        value = self.change.value_of(self.map.pieces[point])
        return change_colour(None if value is None else self.change.share(value))

    def _colour_by_change(self) -> None:
        items = list(self._family_items.items()) + ([("", self._rest_item)] if self._rest_item else [])
        for family, item in items:
            if self.change is None:
                # Back to the item's one brush: no point keeps a style of its own (the fast drawing).
                item.data["brush"] = None
                index = self.map.families.index(family) if family and self.map is not None else -1
                item.setBrush(pg.mkBrush(theme.family_colour(index) if family else rest_colour(self._big)))
            else:
                # One brush a value, shared: a whole vocabulary's points are not 30,000 brushes.
                brushes: dict[float | None, QBrush] = {}  # overlaps have k + 1 values
                chosen = []
                for point in item.data["data"].tolist():
                    value = self.change.value_of(self.map.pieces[point]) if self.map is not None else None
                    if value not in brushes:
                        brushes[value] = pg.mkBrush(self.point_colour(int(point)))
                    chosen.append(brushes[value])
                item.setBrush(chosen)

    def _set_labels(self) -> None:
        shown = self.map
        if shown is None:
            return
        big = len(shown) > MAX_LABELLED_POINTS
        order = np.flatnonzero(shown.family_of != NO_FAMILY) if big else np.arange(len(shown))
        order = order[:MAX_LABELLED_POINTS]
        families = shown.family_of[order].tolist()
        # One colour per family, not per label: each asks the palette, and a map has hundreds of labels.
        dark = theme.is_dark()
        by_family = {family: self._label_colour(family, dark) for family in set(families)}
        colours = [by_family[family] for family in families]
        groups = [shown.families[f] if f >= 0 else "" for f in families]
        texts = [shown.labels[i] for i in order.tolist()]
        x, y = shown.coords[order, 0], shown.coords[order, 1]
        # Rings first: every neighbour gets its name before the family words fill the room.
        token, at, places, names = self._selection
        ring_x = [p[0] for p, n in zip(places, names, strict=False) if p is not None]
        ring_y = [p[1] for p, n in zip(places, names, strict=False) if p is not None]
        ring_names = [n for p, n in zip(places, names, strict=False) if p is not None]
        keep = [i for i, n in enumerate(ring_names) if not self._ring_hidden(n)]
        ring_x, ring_y, ring_names = [ring_x[i] for i in keep], [ring_y[i] for i in keep], [ring_names[i] for i in keep]
        accent = theme.accent()
        already = set(ring_names)
        rest = [i for i, t in enumerate(texts) if t not in already]
        obstacles = shown.coords[order] if not big else np.column_stack([x, y])
        extra = np.array([[a, b] for a, b in zip(ring_x, ring_y, strict=True)] + ([list(at)] if at else []))
        self.labels.set_labels(
            np.concatenate([np.asarray(ring_x, dtype=float), x[rest]]),
            np.concatenate([np.asarray(ring_y, dtype=float), y[rest]]),
            ring_names + [texts[i] for i in rest],
            ["ring"] * len(ring_names) + [groups[i] for i in rest],
            [accent] * len(ring_names) + [colours[i] for i in rest],
            np.vstack([obstacles, extra.reshape(-1, 2)]),
        )
        del token

    def _label_colour(self, family: int, dark: bool) -> QColor:
        # Under a scale a word in its family's colour would say what the key no longer does.
        if family < 0 or self.change is not None:
            return theme.plot_foreground()
        colour = theme.family_colour(family)
        return colour if dark else colour.darker(120)

    @property
    def hovered(self) -> tuple[float, float] | None:
        """Where the point under the pointer is drawn larger, or None."""
        if not self._hover_item.isVisible():
            return None
        xs, ys = self._hover_item.getData()
        return float(xs[0]), float(ys[0])

    @property
    def families(self) -> list[str]:
        return list(self._family_items)

    def visible_points(self, family: str) -> int:
        item = self._family_items.get(family)
        return 0 if item is None or not item.isVisible() else len(item.data)

    # ----- families: hide and highlight ---------------------------------------------------
    def set_hidden(self, hidden: set[str]) -> None:
        self._hidden = set(hidden)
        self._restyle()
        if self._selection[1] is not None:
            self._draw_selection()  # rings on a hidden family's words go with it
        else:
            self._set_labels()
        self._update_caption()
        self.set_search_matches(self._matches)

    def set_highlight(self, family: str | None) -> None:
        self._highlight = family
        self._restyle()

    @property
    def highlighted(self) -> str | None:
        return self._highlight

    @property
    def highlight_count(self) -> int:
        return len(self._highlight_item.data)

    def _restyle(self) -> None:
        if self._highlight not in self._family_items:  # a new map without the highlighted family
            self._highlight = None
        dim = self._highlight is not None and self._highlight not in self._hidden
        faint = 0.12 if self._isolated else (0.3 if dim else 1.0)
        for family, item in self._family_items.items():
            item.setVisible(family not in self._hidden)
            if family in self._hidden and self._hover_point >= 0 and self._item_of(self._hover_point) is item:
                self.hover_at(None)
            item.setOpacity(1.0 if family == self._highlight and not self._isolated else faint)
        if self._rest_item is not None:
            self._rest_item.setOpacity(faint)
        dimmed = {f for f in self._family_items if (dim or self._isolated) and f != self._highlight}
        self.labels.set_state(self._hidden, dimmed | ({""} if self._isolated else set()))
        if dim and self._highlight is not None and not self._isolated:
            item = self._family_items[self._highlight]
            x, y = item.getData()
            # Each point's own fill under a scale (health, change); the family's one brush otherwise.
            own = item.data["brush"]
            brush = list(own) if self.change is not None and len(own) else pg.mkBrush(item.opts["brush"].color())
            self._highlight_item.setData(
                x=x, y=y, size=self._sized(HIGHLIGHT_SIZE), brush=brush,
                pen=pg.mkPen(theme.plot_foreground(), width=self._sized(2)),
            )
        else:
            self._highlight_item.setData(x=[], y=[])
        self._overlays_changed()
        self._update_caption()

    def _overlays_changed(self) -> None:
        """After the star, rings, highlight or matches change: hide the empty ones, follow the pointer.

        An empty scatter still costs a paint on every frame. A dot that was on top under a resting
        pointer may now lie beneath new rings (an answer came while the pointer rested): the
        grown dot follows, so it names what the tip and the click name.
        """
        for item in (
            self._highlight_item, self._match_item, self._current_item, self._query_item, self._neighbour_item
        ):
            item.setVisible(len(item.data) > 0)
        self.follow_pointer()

    def _visible_mask(self) -> np.ndarray:
        """Which points are shown: those of hidden families are not."""
        assert self.map is not None
        hidden = [i for i, f in enumerate(self.map.families) if f in self._hidden]
        return ~np.isin(self.map.family_of, hidden)


    def resizeEvent(self, event: QResizeEvent | None) -> None:  # noqa: N802 - Qt's name
        if hasattr(self, "caption"):  # pyqtgraph resizes the view before __init__ has made the caption
            self._fit_caption()
        super().resizeEvent(event)

    @property
    def hidden(self) -> set[str]:
        return set(self._hidden)

    def reset_view(self) -> None:
        """Show the whole map again."""
        self.plot.autoRange(padding=0.08)

    def set_labels_visible(self, on: bool) -> None:
        self.labels.set_on(on)

    # ----- looks and export ---------------------------------------------------------------
    def apply_palette(self) -> None:
        self.setBackground(theme.plot_background())
        foreground = theme.plot_foreground()
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).setPen(foreground)
            self.plot.getAxis(axis).setTextPen(foreground)
        self.legend.setLabelTextColor(foreground)
        self.caption.setAttr("color", foreground.name())
        self.caption.setText(self.caption.text)
        backdrop = theme.plot_background()
        backdrop.setAlpha(200)
        self._query_label.fill = pg.mkBrush(backdrop)
        self._query_label.update()
