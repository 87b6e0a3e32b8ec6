"""The map's caption (fitted to the canvas, shortened on a short one) and its legend (pictures only)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QTextDocumentFragment,
)

from ..style import fonts, theme
from ..style.plain_text import markup_free
from .canvas_parts import CanvasParts
from .change_colours import change_key
from .scatter import legend_sample, rest_colour
from .sizes import (
    CAPTION_SHARE,
    LEGEND_TEXT_PT,
)

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.maps.word_maps import WordMap


class CaptionAndLegend(CanvasParts):
    """The caption under the map and the legend beside it."""

    def _update_caption(self) -> None:
        if self.map is not None:
            name = fonts.for_map(self.model_name, self.labels.font)
            self._caption_html = caption_html_of(self.map, name, self._hidden)
            if self.change is not None:
                self._caption_html += "<br>" + html.escape(self.change.sentence(), quote=False)
            self._show_caption(self._caption_html)
            self._caption_short = False
            self._fit_caption(force=True)

    def _show_caption(self, html: str) -> None:
        self.caption.setText(html, size=f"{9 * self.marker_scale:g}pt")

    def set_caption_folded(self, folded: bool) -> None:
        """Presentation mode: the caption's first line only on screen, whatever the room."""
        self.caption_folded = folded
        self._fit_caption(force=True)

    def _fit_caption(self, force: bool = False) -> None:
        """Wrap the caption at the canvas' width: a long line would widen the plot past the canvas' edge.

        On a short canvas (a laptop in presentation mode) the whole caption would leave the
        plot a strip: past ``CAPTION_SHARE`` of the height only its first line stays, the
        rest in its tooltip. Pictures always get the whole caption (``_export_geometry``).
        """
        left, _top, right, _bottom = self.ci.layout.getContentsMargins()
        room = self.viewport().width() - left - right - 2 * self.ci.layout.horizontalSpacing() - 4
        height = self.viewport().height()
        if room <= 0 or not (force or self._caption_fit != (room, height)):
            return
        self._caption_fit = (room, height)
        whole = self._caption_html
        if self._caption_short:
            self._show_caption(whole)
            self._caption_short = False
        self.caption.item.setTextWidth(room)
        tall = self.caption.item.boundingRect().height() > CAPTION_SHARE * height
        if whole and self.caption.text == whole and (tall or self.caption_folded) and "<br>" in whole:
            first = whole.split("<br>")[0]
            self._show_caption(first)
            self.caption.item.setTextWidth(room)
            if self.caption_folded and self._wraps() and first.startswith("<b>") and "</b>: " in first:
                # Presentation on a narrow canvas: the model's name is in the title and status bars, and
                # the line that follows it fits on one line.
                self._show_caption(first.split("</b>: ", 1)[1])
                self.caption.item.setTextWidth(room)
            self._caption_short = True
            self.caption.setToolTip(QTextDocumentFragment.fromHtml(whole).toPlainText())
        else:
            self.caption.setToolTip("")
        self.caption.updateMin()

    def _wraps(self) -> bool:
        """True when the caption on screen takes more than one line."""
        return self.caption.item.boundingRect().height() > 1.5 * QFontMetricsF(self.caption.item.font()).lineSpacing()

    @property
    def caption_html(self) -> str:
        """The caption as pictures show it: whole, even while the canvas shows its first line only."""
        return self._caption_html if self._caption_short else self.caption.text

    def legend_entries(self) -> list[tuple[str, QColor | None, QColor | None, int, str]]:
        """What the exported legend lists: (symbol, fill, outline, size in px, text)."""
        entries: list[tuple[str, QColor | None, QColor | None, int, str]] = []
        if self.change is not None:
            # The scale alone: every dot, a family's or another row, is filled by its value now.
            entries += [("o", colour, None, 10, text) for colour, text in change_key(self.change)]
        else:
            for family, item in self._family_items.items():
                if family not in self._hidden:
                    colour = item.opts["brush"].color()
                    entries.append(("o", colour, colour.darker(150), 10, family))
            if self._rest_item is not None:
                entries.append(("o", rest_colour(False), None, 6, "other rows"))
        if self._selection[1] is not None:
            accent = theme.accent()
            entries.append(("star", accent, QColor("black"), 16, f"{self._selection[0]}: the selected token"))
            entries.append(("ring", None, accent, 12, "rings: its nearest rows"))
        # Presentation mode draws the legend's markers as much larger as the map's.
        return [(sym, fill, outline, round(self._sized(size)), text) for sym, fill, outline, size, text in entries]

    def show_legend(self, visible: bool) -> None:
        # Filled only when shown: on screen it stays hidden, and rebuilding it costs paint time.
        self.legend.clear()
        if visible:
            self.legend.opts["labelTextSize"] = f"{LEGEND_TEXT_PT * self.marker_scale:g}pt"
            for symbol, fill, outline, size, text in self.legend_entries():
                brush = pg.mkBrush(fill) if fill is not None else pg.mkBrush(None)
                width = self._sized(2 if symbol == "ring" else 1)
                pen = pg.mkPen(outline, width=width) if outline is not None else None
                self.legend.addItem(
                    legend_sample("o" if symbol == "ring" else symbol, size, brush, pen),
                    markup_free(fonts.for_map(text, self.labels.font)),  # pyqtgraph draws it as HTML
                )
            for _sample, label in self.legend.items:
                label.item.setFont(fonts.map_font(10 * self.marker_scale))
        self._legend_column.setVisible(visible)
        # As wide as its longest line needs (a long selected token, presentation's larger type).
        needed = self.legend.layout.effectiveSizeHint(pg.QtCore.Qt.SizeHint.PreferredSize).width() + 12
        self._legend_column.setMaximumWidth(round(max(self._sized(220), needed)) if visible else 0)
        self.ci.layout.activate()


def caption_html_of(shown: WordMap, model_name: str, hidden: set[str]) -> str:
    """The caption's lines as HTML, the model's name in bold; every name in them shown as the text it is."""
    from ...core.maps.map_caption import caption_lines

    lines = caption_lines(shown, model_name, hidden)
    lines = [f"<b>{markup_free(model_name)}</b>{markup_free(lines[0][len(model_name):])}"] + [
        markup_free(line) for line in lines[1:]
    ]
    return "<br>".join(lines)
