"""Inside each menu, each underlined letter picks one item.

Seen in a real window: Alt+M, then W (the underlined letter of "Export map as &web page...") only
moved the highlight to "&Whole vocabulary", which has the same letter, and a second W moved it
back; Qt opens neither while two items of a menu share their letter. E (Edit families, Export map)
and P (Projection, Export points) were shared the same way.
"""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from tests.ui.conftest import open_model, type_text
from tests.ui.test_mnemonics_unique import _letter


def shared_in_menu(menu: QMenu) -> dict[str, list[str]]:
    """The letters more than one item of ``menu`` answers to (separators and hidden items aside)."""
    owners: dict[str, list[str]] = {}
    for action in menu.actions():
        if action.isSeparator() or not action.isVisible():
            continue
        letter = _letter(action.text())
        if letter is not None:
            owners.setdefault(letter, []).append(action.text())
    return {letter: texts for letter, texts in owners.items() if len(texts) > 1}


def every_menu(actions: list[QAction]) -> list[QMenu]:
    menus = [a.menu() for a in actions if isinstance(a.menu(), QMenu)]
    return menus + [sub for menu in menus for sub in every_menu(menu.actions())]


def test_no_two_items_of_a_menu_share_their_letter(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    type_text(qtbot, window, "paris")
    found = {}
    for menu in every_menu(window.menuBar().actions()):
        shared = shared_in_menu(menu)
        if shared:
            found[menu.title()] = shared
    assert found == {}, found
