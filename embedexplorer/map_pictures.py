"""Map pictures, for the window's export and the command line's ``map --png/--svg``: one place for both.

A map drawn by the window's own canvas (offscreen when there is no window) into PNG, or
written as SVG from the map's numbers.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .core.common.constants import EXPORT_WIDTH_RANGE

if TYPE_CHECKING:
    from PySide6.QtGui import QFont, QFontMetricsF

    from .core.maps.family_map import FamilyMap
    from .core.maps.selection_marks import SelectionMarks
    from .core.maps.word_maps import WordMap
    from .ui.map.canvas import MapCanvas

# The widest map drawn, as the window's export dialog allows: 20,000 x 15,200 pixels take 1.2 GB.
MAX_PNG_WIDTH = EXPORT_WIDTH_RANGE[1]


def write_map_picture(
    family_map: FamilyMap | WordMap,
    model_name: str,
    path: str | Path,
    width: int = 1600,
    date: str | None = None,
    marks: SelectionMarks | None = None,
) -> None:
    """Render offscreen with the same canvas the window uses and write ``path``: SVG for a ``.svg``
    name, PNG otherwise; either says where the map came from, exported on ``date`` (now by default).
    ``marks``: the selected token's star and its nearest rows' rings, drawn as the window draws them."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from .core.common.errors import EmbedExplorerError
    from .ui.map.canvas import MapCanvas

    if not 1 <= width <= MAX_PNG_WIDTH:
        raise EmbedExplorerError(f"A map is drawn at most {MAX_PNG_WIDTH:,} pixels wide, not {width:,}.")
    # Qt's own warnings would reach the terminal as many lines; keep them, and say the first
    # one only if the drawing fails.
    heard: list[str] = []
    previous = qInstallMessageHandler(lambda _kind, _context, message: heard.append(message))
    try:
        app = QApplication.instance() or QApplication(["embedexplorer"])
        canvas = MapCanvas()
        canvas.resize(1000, 760)
        canvas.set_map(family_map, model_name)
        canvas.show_legend(True)
        if marks is not None:
            canvas.set_selection(marks.token, marks.at, marks.places, marks.names)
        app.processEvents()
        try:
            if str(path).lower().endswith(".svg"):
                write_svg(canvas, path, date)
            else:
                canvas.export_png(path, width=width, texts=png_texts(canvas, date))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            said = f" (Qt said: {heard[0]})" if heard else ""
            raise EmbedExplorerError(f"Cannot write the map to {path}: {reason}{said}") from exc
        finally:
            canvas.deleteLater()
    finally:
        qInstallMessageHandler(previous)


# ----- where the map came from, in the picture's own kind of metadata ---------------------------
PNG_PROVENANCE_KEY = "EmbedExplorer provenance"


def png_texts(canvas: MapCanvas, date: str | None = None) -> dict[str, str]:
    """PNG text chunks: the standard Software, Title and Creation Time, and every fact as JSON.

    The date is in Creation Time alone, so two exports of one map differ in that chunk only.
    """
    import json

    from .core.maps.provenance import DATE_KEY, stamped

    shown = canvas.map
    facts = stamped(shown.provenance if shown is not None else None, date)
    when = str(facts.pop(DATE_KEY))
    title = html.unescape(canvas.caption_html.split("<br>")[0].replace("<b>", "").replace("</b>", ""))
    return {
        "Software": str(facts["app"]),
        "Title": title,
        "Creation Time": when,
        PNG_PROVENANCE_KEY: json.dumps(facts, ensure_ascii=False, sort_keys=False),
    }


def svg_metadata(facts: dict[str, object]) -> str:
    """An SVG ``<metadata>`` element holding the facts as JSON, one key a line (the date's line last)."""
    import json

    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in facts.items())
    text = "{\n" + lines + "\n}"
    return f'<metadata id="embedexplorer-provenance">{escape(text, quote=False)}</metadata>'


# ----- SVG: written from the map's own numbers ---------------------------------------------------
SVG_WIDTH, SVG_HEIGHT = 1200, 900
_PLOT_LEFT, _PLOT_TOP, _LEGEND_WIDTH, _AXIS_ROOM, _CAPTION_LINE = 80, 20, 250, 60, 20
_LEGEND_FONT_PX, _AXIS_FONT_PX = 15, 14


# Pixels kept between two labels, and between a label and the star's name, in a drawing that another
# program lays out: a browser rounds a text's height up to whole pixels (13 for the 12.8 measured here),
# and labels placed edge to edge, as the screen may place them, would then overlap.
SVG_LABEL_SPACING = 2.0
# An SVG's pixels: CSS's 96 to the inch, whatever the screen's own.
SVG_DPI = 96


def svg_label_metrics(font: QFont) -> tuple[float, QFontMetricsF]:
    """The labels' size in SVG pixels and their measure at that size.

    The screen's measure would be at the screen's resolution (72 dots to the inch on a Mac, 120 on a
    Windows laptop at 125%): there the labels' widths would not be those of the text written here.
    """
    from PySide6.QtGui import QFontMetricsF, QImage

    page = QImage(1, 1, QImage.Format.Format_ARGB32)
    dots_per_metre = round(SVG_DPI / 0.0254)
    page.setDotsPerMeterX(dots_per_metre)
    page.setDotsPerMeterY(dots_per_metre)
    return font.pointSizeF() * SVG_DPI / 72, QFontMetricsF(font, page)


def write_svg(canvas: MapCanvas, path: str | Path, date: str | None = None) -> None:
    """Write an SVG drawing of the map, atomically: every marker a shape, one grid, the same labels."""
    from .core.common.files import atomic_write_bytes

    atomic_write_bytes(path, svg_drawing(canvas, date).encode("utf-8"), through_link=True)


def svg_drawing(canvas: MapCanvas, date: str | None = None) -> str:
    """The map on screen as SVG text: dots, star and rings as shapes, one grid, the placed labels.

    Drawn from the map's numbers rather than by painting the scene, so that every marker
    is a vector shape and the grid is drawn once, at the axis ticks. Markers and text are as
    much larger as on screen when the window is in presentation mode.
    """
    import numpy as np
    from PySide6.QtCore import QPointF, QRectF, QSizeF
    from PySide6.QtGui import QFont, QFontMetricsF

    from .core.maps.provenance import stamped
    from .core.maps.word_maps import NO_FAMILY
    from .ui.map.labels import place_labels, star_label_corner
    from .ui.style import theme

    shown = canvas.map
    scale = canvas.marker_scale
    axis_px, legend_px, caption_line = _AXIS_FONT_PX * scale, _LEGEND_FONT_PX * scale, _CAPTION_LINE * scale
    # The caption's HTML holds its names escaped: back to their text, which the SVG escapes its own way.
    caption_html = canvas.caption_html.replace("<b>", "").replace("</b>", "")
    caption_lines = [html.unescape(line) for line in caption_html.split("<br>")]
    plot_w = SVG_WIDTH - _PLOT_LEFT - _LEGEND_WIDTH * scale - 20
    plot_h = SVG_HEIGHT - _PLOT_TOP - _AXIS_ROOM * scale - caption_line * len(caption_lines) - 10
    (x0, x1), (y0, y1) = canvas.plot.getViewBox().viewRange()

    def px(x: np.ndarray) -> np.ndarray:
        return _PLOT_LEFT + (np.asarray(x, dtype=float) - x0) / (x1 - x0) * plot_w

    def py(y: np.ndarray) -> np.ndarray:
        return _PLOT_TOP + (y1 - np.asarray(y, dtype=float)) / (y1 - y0) * plot_h

    foreground = theme.plot_foreground().name()
    background = theme.plot_background().name()
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_WIDTH}" height="{SVG_HEIGHT}" '
        f'viewBox="0 0 {SVG_WIDTH} {SVG_HEIGHT}" font-family="DejaVu Sans, Arial, sans-serif">',
        "<title>EmbedExplorer map</title>",
        svg_metadata(stamped(shown.provenance if shown is not None else None, date)),
        f'<rect width="100%" height="100%" fill="{background}"/>',
        f'<defs><clipPath id="plot"><rect x="{_PLOT_LEFT}" y="{_PLOT_TOP}" width="{plot_w}" height="{plot_h}"/>'
        "</clipPath></defs>",
    ]
    # One grid, at the axis' major ticks, with their numbers.
    grid = ['<g stroke="#888" stroke-opacity="0.35" stroke-width="1">']
    numbers = [f'<g fill="{foreground}" font-size="{axis_px:g}">']
    for axis_name, low, high, length in (("bottom", x0, x1, plot_w), ("left", y0, y1, plot_h)):
        axis = canvas.plot.getAxis(axis_name)
        levels = axis.tickValues(low, high, length)
        if not levels:
            continue
        spacing, values = levels[0]
        for value, text in zip(values, axis.tickStrings(values, 1, spacing), strict=True):
            if axis_name == "bottom":
                tick = float(px(np.array([value]))[0])
                grid.append(f'<line x1="{tick:.2f}" y1="{_PLOT_TOP}" x2="{tick:.2f}" y2="{_PLOT_TOP + plot_h}"/>')
                numbers.append(
                    f'<text x="{tick:.2f}" y="{_PLOT_TOP + plot_h + 4 + axis_px:.1f}" text-anchor="middle">'
                    f"{escape(text)}</text>"
                )
            else:
                tick = float(py(np.array([value]))[0])
                grid.append(f'<line x1="{_PLOT_LEFT}" y1="{tick:.2f}" x2="{_PLOT_LEFT + plot_w}" y2="{tick:.2f}"/>')
                numbers.append(
                    f'<text x="{_PLOT_LEFT - 6}" y="{tick + axis_px * 0.36:.2f}" text-anchor="end">'
                    f"{escape(text)}</text>"
                )
    out += grid + ["</g>"] + numbers + ["</g>"]
    out.append(
        f'<rect x="{_PLOT_LEFT}" y="{_PLOT_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        f'stroke="{foreground}" stroke-width="1"/>'
    )
    titles = (shown.layout.axis_title(0), shown.layout.axis_title(1)) if shown is not None else ("", "")
    out.append(
        f'<text x="{_PLOT_LEFT + plot_w / 2:.1f}" y="{_PLOT_TOP + plot_h + 3 * axis_px:.1f}" text-anchor="middle" '
        f'fill="{foreground}" font-size="{axis_px:g}">{escape(titles[0])}</text>'
    )
    mid_y = _PLOT_TOP + plot_h / 2
    out.append(
        f'<text x="20" y="{mid_y:.1f}" text-anchor="middle" fill="{foreground}" font-size="{axis_px:g}" '
        f'transform="rotate(-90 20 {mid_y:.1f})">{escape(titles[1])}</text>'
    )

    out.append('<g clip-path="url(#plot)">')
    if shown is not None:
        hidden = {i for i, f in enumerate(shown.families) if f in canvas.hidden}
        coords = shown.coords
        big = len(shown) > 500
        rest = np.flatnonzero(shown.family_of == NO_FAMILY)
        if rest.size:
            r = (1.6 if big else 3.5) * scale
            out.append(f'<g fill="{foreground}" fill-opacity="{0.3 if big else 0.6}">')
            out += [
                f'<circle cx="{a:.2f}" cy="{b:.2f}" r="{r}"{_fill(canvas, i)}/>'
                for i, a, b in zip(
                    rest.tolist(), px(coords[rest, 0]).tolist(), py(coords[rest, 1]).tolist(), strict=True
                )
            ]
            out.append("</g>")
        for f in range(len(shown.families)):
            if f in hidden:
                continue
            members = np.flatnonzero(shown.family_of == f)
            colour = theme.family_colour(f)
            out.append(f'<g fill="{colour.name()}" stroke="{colour.darker(150).name()}" stroke-width="1">')
            out += [
                f'<circle cx="{a:.2f}" cy="{b:.2f}" r="{(4.5 if big else 5.5) * scale:g}"{_fill(canvas, i)}/>'
                for i, a, b in zip(
                    members.tolist(), px(coords[members, 0]).tolist(), py(coords[members, 1]).tolist(), strict=True
                )
            ]
            out.append("</g>")
        token, star_at, rings = canvas.selection
        accent = theme.accent().name()
        for ring_x, ring_y in rings:
            cx, cy = float(px(np.array([ring_x]))[0]), float(py(np.array([ring_y]))[0])
            out.append(
                f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{7.5 * scale:g}" fill="none" stroke="{accent}" '
                f'stroke-width="{2 * scale:g}"/>'
            )
        reserved: list[tuple[float, float, float, float]] = []
        frame = QRectF(_PLOT_LEFT, _PLOT_TOP, plot_w, plot_h)
        if star_at is not None:
            sx, sy = float(px(np.array([star_at[0]]))[0]), float(py(np.array([star_at[1]]))[0])
            out.append(_star(sx, sy, 11 * scale, accent))
            # The star's name: above and to its right, or on the side where the plot has room for it,
            # as on screen. The placed labels keep clear of it.
            star_font = QFont(canvas.labels.font)
            star_font.setPixelSize(round(14 * scale))
            star_metrics = QFontMetricsF(star_font)
            name_width, ascent = star_metrics.horizontalAdvance(token), star_metrics.ascent()
            gap_x, gap_y = 10 * scale, 8 * scale
            # Clear of the rings and dots where a side has room: the name is read over them, not under.
            shown_dots = np.flatnonzero(~np.isin(shown.family_of, list(hidden)))
            ring_xy = np.array(rings, dtype=float).reshape(-1, 2)
            around = (
                np.column_stack([px(ring_xy[:, 0]), py(ring_xy[:, 1])]),
                np.column_stack([px(coords[shown_dots, 0]), py(coords[shown_dots, 1])]),
            )
            x_anchor, y_anchor = star_label_corner(
                QPointF(sx, sy), QSizeF(gap_x + name_width, gap_y + ascent), frame, around, 7.5 * scale
            )
            left = sx + gap_x if x_anchor == 0 else sx - gap_x - name_width
            baseline = sy - gap_y if y_anchor == 1 else sy + gap_y + ascent
            top = baseline - ascent
            out.append(
                f'<rect x="{left - 2:.2f}" y="{top - 1:.2f}" width="{name_width + 4:.2f}" '
                f'height="{star_metrics.height() + 2:.2f}" fill="{theme.plot_background().name()}" fill-opacity="0.8"/>'
            )
            out.append(
                f'<text x="{left:.2f}" y="{baseline:.2f}" fill="{accent}" '
                f'font-size="{14 * scale:g}">{escape(token)}</text>'
            )
            # All the name's backdrop is kept clear, not the text alone: a label under it would be veiled.
            reserved.append((left - 2, top - 1, left + name_width + 2, top + star_metrics.height() + 1))
        # The labels, placed for this drawing by the same rule as on screen, measured at the size written.
        lx, ly, texts, colours, _screen_widths, wanted, obstacles = canvas.labels.entries()
        size, metrics = svg_label_metrics(canvas.labels.font)
        placed = place_labels(
            px(lx), py(ly), [metrics.horizontalAdvance(text) for text in texts], metrics.height(), wanted,
            px(obstacles[:, 0]), py(obstacles[:, 1]), frame, reserved,
            radius=5.5 * scale, spacing=SVG_LABEL_SPACING,
        )
        for i, rect in placed:
            out.append(
                f'<text x="{rect.left():.2f}" y="{rect.top() + metrics.ascent():.2f}" font-size="{size:.3f}" '
                f'fill="{colours[i].name()}">{escape(texts[i])}</text>'
            )
    out.append("</g>")

    # The legend, beside the plot, as large as the axis text or larger.
    legend_x = _PLOT_LEFT + plot_w + 25
    for n, (symbol, fill, outline, size_px, text) in enumerate(canvas.legend_entries()):
        cy = _PLOT_TOP + 20 * scale + n * 26 * scale
        cx = legend_x + 8 * scale
        fill_attr = "none" if fill is None else fill.name()
        opacity = "" if fill is None or fill.alpha() == 255 else f' fill-opacity="{fill.alphaF():.2f}"'
        stroke = "none" if outline is None else outline.name()
        if symbol == "star":
            out.append(_star(cx, cy, 9 * scale, fill_attr))
        else:
            width = (2 if symbol == "ring" else 1) * scale
            out.append(
                f'<circle cx="{cx:g}" cy="{cy:g}" r="{size_px / 2}" fill="{fill_attr}"{opacity} stroke="{stroke}" '
                f'stroke-width="{width:g}"/>'
            )
        out.append(
            f'<text x="{cx + 16 * scale:g}" y="{cy + legend_px / 3:.1f}" fill="{foreground}" '
            f'font-size="{legend_px:g}">{escape(text)}</text>'
        )
    for n, line in enumerate(caption_lines):
        y = SVG_HEIGHT - caption_line * (len(caption_lines) - n) + 4
        out.append(f'<text x="12" y="{y:.1f}" fill="{foreground}" font-size="{14 * scale:g}">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _fill(canvas: MapCanvas, point: int) -> str:
    """A point's own fill when the map is coloured by change (its group's otherwise)."""
    colour = canvas.point_colour(point)
    return "" if colour is None else f' fill="{colour.name()}" fill-opacity="1"'


def escape(text: str, quote: bool = True) -> str:
    """Text for an SVG element: markup escaped, and characters XML cannot hold (a token may
    stand for any byte) shown as the replacement character."""
    from html import escape as html_escape

    return html_escape(_NOT_XML.sub("\ufffd", text), quote=quote)


def _star(cx: float, cy: float, radius: float, fill: str) -> str:
    """A five-pointed star as a polygon (the selected token's marker)."""
    import math

    points = []
    for k in range(10):
        r = radius if k % 2 == 0 else radius * 0.45
        angle = -math.pi / 2 + k * math.pi / 5
        points.append(f"{cx + r * math.cos(angle):.2f},{cy + r * math.sin(angle):.2f}")
    return f'<polygon points="{" ".join(points)}" fill="{fill}" stroke="black" stroke-width="1"/>'
