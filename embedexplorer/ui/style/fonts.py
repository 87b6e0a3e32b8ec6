"""The bundled font (DejaVu Sans): registered at start, drawn on the map and in its exports.

A system without fonts (a minimal Linux install) draws every Qt text as empty boxes, and
a token that no font covers (CJK on a Latin-only system, emoji) does the same.  So the
app carries one family, the map and its pictures use only that family (the same picture
on every machine), and text that still has no glyph is shown as ``U+XXXX`` escapes.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QGuiApplication, QRawFont, QTextLayout

from ...resources import resource_path

FAMILY = "DejaVu Sans"
FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")
# A source checkout has no resources/fonts: Debian's fonts-dejavu-core puts the same files here.
SYSTEM_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/TTF"), Path("/usr/share/fonts/dejavu"))
# Invisible or undefined characters: drawn as nothing (or a box), so always escaped.
_INVISIBLE = {"Cc", "Cf", "Co", "Cn", "Cs"}

# Emoji a person types (a pizza, a party) in the Text box: drawn by the system's emoji font where it
# has one (all of it, sequences too); elsewhere by this file, as Qt's fallback for those characters:
# the packaged app bundles a subset in resources/fonts (packaging/spec_common.emoji_font_files), and a
# source checkout finds Debian's fonts-noto-color-emoji.
EMOJI_FILE = "NotoColorEmoji.ttf"
EMOJI_SAMPLE = "\U0001F355\U0001F389"  # a pizza and a party popper: what the self-test asks to be drawn
EMOJI_DIRS = (Path("/usr/share/fonts/truetype/noto"), Path("/usr/share/fonts/noto"), Path("/usr/share/fonts/TTF"))

_registered: list[str] = []


def font_files() -> list[Path]:
    """The family's files: bundled in the app first, else Debian's package."""
    for folder in (resource_path("fonts"), *SYSTEM_DIRS):
        found = [folder / name for name in FILES if (folder / name).is_file()]
        if found:
            return found
    return []


def register() -> str | None:
    """Add the family to Qt's font database once; its name, or None when no file was found."""
    if _registered:
        return _registered[0]
    for path in font_files():
        font_id = QFontDatabase.addApplicationFont(str(path))
        if font_id >= 0 and not _registered:
            _registered.extend(QFontDatabase.applicationFontFamilies(font_id)[:1])
    emoji = emoji_file()
    family = _registered[0] if _registered else None
    if emoji is not None and undrawn(EMOJI_SAMPLE, QFont(family) if family else QFont()):
        # Qt then falls back to it for the characters the window's font lacks.
        QFontDatabase.addApplicationFont(str(emoji))
    return family


def emoji_file() -> Path | None:
    """The emoji font: bundled in the app first, else Debian's package; None where neither is."""
    for folder in (resource_path("fonts"), *EMOJI_DIRS):
        if (folder / EMOJI_FILE).is_file():
            return folder / EMOJI_FILE
    return None


def use_for_window_if_needed(app: QGuiApplication) -> bool:
    """Give the window the bundled family when the system's default font draws nothing.

    Where the system has fonts they keep serving the window; only where the default font
    cannot draw a plain letter (no fonts installed at all) does the bundled one take over.
    """
    family = register()
    if family is None:
        return False
    if _draws(app.font(), "A") and QFontInfo(app.font()).family() != "":
        return False
    font = QFont(family)
    font.setPointSizeF(app.font().pointSizeF() if app.font().pointSizeF() > 0 else 10.0)
    app.setFont(font)
    return True


def map_font(point_size: float, bold: bool = False) -> QFont:
    """The bundled family without fallback to other fonts: maps look the same everywhere."""
    family = register()
    font = QFont(family) if family else QFont()
    font.setPointSizeF(point_size)
    font.setBold(bold)
    if family:
        font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)
    return font


def escape(char: str) -> str:
    return f"U+{ord(char):04X}"


def _draws(font: QFont, char: str) -> bool:
    """Whether ``font`` (without fallback) has a glyph for ``char``."""
    return _font_draws(font.key(), char, font)


# Keyed by the font's description: the answer for one font and character never changes, and
# a QRawFont built per character made each new selection's labels cost milliseconds (and a
# new map's first labels one QRawFont for each of their characters): one per font, kept.
_drawn: dict[tuple[str, str], bool] = {}
_raw_fonts: dict[str, QRawFont] = {}


def _font_draws(key: str, char: str, font: QFont) -> bool:
    found = _drawn.get((key, char))
    if found is None:
        raw = _raw_fonts.get(key)
        if raw is None:
            raw = _raw_fonts[key] = QRawFont.fromFont(font)
        found = raw.isValid() and raw.supportsCharacter(ord(char))
        if len(_drawn) > 100_000:  # a whole vocabulary's characters stay far below this
            _drawn.clear()
        _drawn[(key, char)] = found
    return found


def undrawn(text: str, font: QFont) -> list[str]:
    """The characters of ``text`` Qt draws as an empty box in ``font``, fallback fonts included."""
    return [char for char in dict.fromkeys(text) if not char.isspace() and not _draws_with_fallback(char, font)]


def _draws_with_fallback(char: str, font: QFont) -> bool:
    layout = QTextLayout(char, font)
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    runs = layout.glyphRuns()
    return bool(runs) and all(index != 0 for run in runs for index in run.glyphIndexes())


@lru_cache(maxsize=4096)
def _window_draws(char: str, family: str) -> bool:
    """Whether Qt draws ``char`` with a real glyph in the window's font or any fallback font."""
    return _draws_with_fallback(char, QFont(family) if family else QFont())


def missing_glyphs(text: str, font: QFont) -> list[str]:
    """Characters of ``text`` that ``font`` itself cannot draw (white space aside), each once."""
    missing: list[str] = []
    for char in text:
        if char.isspace() or char in missing:
            continue
        if unicodedata.category(char) in _INVISIBLE or not _draws(font, char):
            missing.append(char)
    return missing


def _readable(text: str, drawable: Callable[[str], bool]) -> str:
    """Replace undrawable characters by escapes, a space between an escape and its neighbours."""
    pieces: list[tuple[bool, str]] = []
    for char in text:
        if char in " \t" or (unicodedata.category(char) not in _INVISIBLE and drawable(char)):
            if pieces and not pieces[-1][0]:
                pieces[-1] = (False, pieces[-1][1] + char)
            else:
                pieces.append((False, char))
        else:
            pieces.append((True, escape(char)))
    out = ""
    for index, (is_escape, piece) in enumerate(pieces):
        if index and (is_escape or pieces[index - 1][0]) and not out.endswith(" ") and not piece.startswith(" "):
            out += " "
        out += piece
    return out


def for_window(text: str) -> str:
    """``text`` with every character that no installed or bundled font can draw as ``U+XXXX``."""
    family = QGuiApplication.font().family()
    return _readable(text, lambda char: _window_draws(char, family))


def for_map(text: str, font: QFont) -> str:
    """``text`` with every character the map's font cannot draw as ``U+XXXX``."""
    key = font.key()
    return _readable(text, lambda char: _font_draws(key, char, font))
