"""Finding things on the map: search matches, the next match, the selection shown alone."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ..style import theme
from .canvas_parts import CanvasParts


class Finding(CanvasParts):
    """Search matches and isolation."""

    def search(self, text: str) -> int:
        """Mark the points whose text or label contains ``text`` (any case); returns how many are shown."""
        if self.map is None or not text.strip():
            return self.set_search_matches(np.empty(0, dtype=np.int64))
        needle = text.strip().casefold()
        if self._folded is None:  # once per map: 50,257 casefolds would cost each keystroke 30 ms
            # The text and the label as drawn ("_Paris" for " Paris"): a person types what the map shows.
            # A line break between them: a typed needle (one line) never spans both.
            pairs = zip(self.map.texts, self.map.labels, strict=True)
            self._folded = [f"{text}\n{label}".casefold() for text, label in pairs]
        found = [i for i, t in enumerate(self._folded) if needle in t]
        return self.set_search_matches(np.asarray(found, dtype=np.int64))

    def set_search_matches(self, matches: np.ndarray) -> int:
        if self.map is not None and matches.size:
            matches = matches[self._visible_mask()[matches]]
        self._matches, self._current = matches, -1
        if self.map is None or not matches.size:
            self._match_item.setData(x=[], y=[])
            self._current_item.setData(x=[], y=[])
        else:
            # Not the accent of the star and rings: a search and a selection can be on screen together.
            self._match_item.setData(
                x=self.map.coords[matches, 0], y=self.map.coords[matches, 1],
                brush=pg.mkBrush(None), pen=pg.mkPen(theme.plot_foreground(), width=2),
            )
            self._current_item.setData(x=[], y=[])
        self._overlays_changed()
        self.matches_changed.emit(int(matches.size), -1)
        return int(matches.size)

    @property
    def matches(self) -> list[str]:
        return [] if self.map is None else [self.map.labels[i] for i in self._matches.tolist()]

    def next_match(self) -> str:
        """Centre the view on the next match (keeping the zoom) and ring it; its label, or ""."""
        if self.map is None or not self._matches.size:
            return ""
        self._current = (self._current + 1) % self._matches.size
        index = int(self._matches[self._current])
        x, y = self.map.coords[index]
        (x0, x1), (y0, y1) = self.plot.getViewBox().viewRange()
        self.plot.getViewBox().setRange(
            xRange=(x - (x1 - x0) / 2, x + (x1 - x0) / 2), yRange=(y - (y1 - y0) / 2, y + (y1 - y0) / 2), padding=0
        )
        self._current_item.setData(
            x=[x], y=[y], brush=pg.mkBrush(None), pen=pg.mkPen(theme.plot_foreground(), width=3)
        )
        self._overlays_changed()
        self.matches_changed.emit(int(self._matches.size), self._current)
        return self.map.labels[index]

    def isolate(self, on: bool) -> bool:
        """Show the selected token and its rings alone (others faint), zoomed to them; False if none."""
        token, at, places, _names = self._selection
        if on and at is None:
            return False
        self._isolated = on
        self._restyle()
        if on and at is not None:
            points = np.array([at] + [p for p in places if p is not None], dtype=float)
            (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
            pad_x, pad_y = max((x1 - x0) * 0.15, 1e-3), max((y1 - y0) * 0.15, 1e-3)
            self.plot.getViewBox().setRange(xRange=(x0 - pad_x, x1 + pad_x), yRange=(y0 - pad_y, y1 + pad_y), padding=0)
        else:
            self.reset_view()
        del token
        return True

    @property
    def isolated(self) -> bool:
        return self._isolated
