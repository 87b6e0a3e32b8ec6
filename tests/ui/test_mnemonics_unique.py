"""Each Alt+letter a person sees underlined does one thing, in every view of the window.

Seen in a real window at 1024x640 with "the river bank" typed: on the Through the layers tab, R was
underlined both in the Row tab and in "Run through the layers", so Alt+R moved the focus between
them instead of running; Alt+M was the Map menu's and the Map tab's, Alt+F the File menu's and
"flagged only"'s, Alt+W "Cosine with"'s and "Compare with"'s. Qt takes a letter two visible
controls share as ambiguous: the first press only moves the focus.
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QMenuBar, QTabBar, QWidget

from tests.ui.conftest import open_model, type_text
from tests.ui.test_every_size import every_view

_MNEMONIC = re.compile(r"&([^&])")


def _letter(text: str) -> str | None:
    found = _MNEMONIC.search(text.replace("&&", ""))
    return found.group(1).lower() if found else None


def shared_letters(window) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """The Alt+letters that more than one visible, enabled control of ``window`` answers to, with those controls."""
    owners: dict[str, list[str]] = {}

    def own(text: str, what: str) -> None:
        letter = _letter(text)
        if letter is not None:
            owners.setdefault(letter, []).append(f"{what} {text!r}")

    for widget in window.findChildren(QWidget):
        if widget.window() is not window or not widget.isVisible() or not widget.isEnabled():
            continue
        if isinstance(widget, QAbstractButton):
            own(widget.text(), type(widget).__name__)
        elif isinstance(widget, QLabel) and widget.buddy() is not None:
            own(widget.text(), "label")
        elif isinstance(widget, QGroupBox):
            own(widget.title(), "group")
        elif isinstance(widget, QTabBar):
            for tab in range(widget.count()):
                if widget.isTabVisible(tab) and widget.isTabEnabled(tab):
                    own(widget.tabText(tab), "tab")
        elif isinstance(widget, QMenuBar):
            for action in widget.actions():
                if action.isVisible() and action.isEnabled():
                    own(action.text(), "menu")
    return {letter: which for letter, which in owners.items() if len(which) > 1}


def test_no_two_controls_in_sight_share_an_alt_letter(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "the river bank")  # every button that needs a token is on
    found = {}
    for width, height, tab, presenting in every_view(qtbot, window):
        shared = shared_letters(window)
        if shared:
            found[(width, height, tab.replace("&", ""), presenting)] = shared
    assert found == {}
