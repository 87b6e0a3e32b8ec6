"""A dialog to edit the map's families: add, rename, remove and reorder families and their words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..style import theme

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.maps.family_map import Families


def swatch(colour: QColor) -> QIcon:
    """A small square of a family's colour."""
    pixmap = QPixmap(12, 12)
    pixmap.fill(colour)
    return QIcon(pixmap)


EDITABLE = Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class FamilyEditor(QDialog):
    """Families as a tree: each family a row (its colour follows its place), its words below it.

    Double-click (or F2) renames a family or changes a word; a word is taken literally,
    so GPT-2's leading space stays part of it (" Paris" is one token, "Paris" another).
    """

    def __init__(self, families: Families, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit the families")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Family / word"])
        self.tree.setAccessibleName("families and their words")
        for name, words in families.items():
            self._add_family(name, words)
        self.tree.expandAll()
        self.hint = QLabel(
            "Double-click to rename or retype. A family's colour follows its place in the list. "
            "Words are taken literally: GPT-2 words start with a space (' Paris')."
        )
        self.hint.setWordWrap(True)
        self.hint.setObjectName("hint")
        self.message = QLabel("")
        self.message.setObjectName("hint")
        buttons = QHBoxLayout()
        self.add_family_button = QPushButton("New &family")
        self.add_word_button = QPushButton("Add &word")
        self.remove_button = QPushButton("&Remove")
        self.up_button = QPushButton("Move &up")
        self.down_button = QPushButton("Move &down")
        for button in (
            self.add_family_button, self.add_word_button, self.remove_button, self.up_button, self.down_button
        ):
            buttons.addWidget(button)
        self.add_family_button.clicked.connect(lambda: self.add_family())
        self.add_word_button.clicked.connect(lambda: self.add_word())
        self.remove_button.clicked.connect(self.remove_selected)
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        self.tree.itemChanged.connect(lambda *_: self._recolour())
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self._on_save)
        box.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.tree, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(box)
        self.resize(460, 520)
        self._recolour()

    # ----- editing ----------------------------------------------------------------------------
    def _add_family(self, name: str, words: list[str]) -> QTreeWidgetItem:
        item = QTreeWidgetItem([name])
        item.setFlags(EDITABLE)
        self.tree.addTopLevelItem(item)
        for word in words:
            child = QTreeWidgetItem([word])
            child.setFlags(EDITABLE)
            item.addChild(child)
        return item

    def add_family(self, name: str = "", words: list[str] | None = None) -> QTreeWidgetItem:
        """A new family at the end (named "family N" unless ``name`` is given), ready to rename."""
        taken = set(self.families_in_order())
        name = name or next(f"family {n}" for n in range(1, 1000) if f"family {n}" not in taken)
        item = self._add_family(name, words or [])
        item.setExpanded(True)
        self.tree.setCurrentItem(item)
        self._recolour()
        return item

    def add_word(self, word: str = "") -> QTreeWidgetItem | None:
        """A word in the selected family (or the family of the selected word); edit it in place."""
        current = self.tree.currentItem()
        family = current.parent() or current if current is not None else None
        if family is None:
            self.message.setText("Select a family first.")
            return None
        child = QTreeWidgetItem([word])
        child.setFlags(EDITABLE)
        family.addChild(child)
        family.setExpanded(True)
        self.tree.setCurrentItem(child)
        if not word:
            self.tree.editItem(child, 0)
        return child

    def remove_selected(self) -> None:
        current = self.tree.currentItem()
        if current is None:
            return
        parent = current.parent()
        if parent is None:
            self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(current))
        else:
            parent.removeChild(current)
        self._recolour()

    def move_selected(self, step: int) -> None:
        """Move the selected family (or word) up or down; a family's colour follows its place."""
        current = self.tree.currentItem()
        if current is None:
            return
        parent = current.parent()
        if parent is None:
            index = self.tree.indexOfTopLevelItem(current)
            target = index + step
            if 0 <= target < self.tree.topLevelItemCount():
                expanded = current.isExpanded()
                self.tree.takeTopLevelItem(index)
                self.tree.insertTopLevelItem(target, current)
                current.setExpanded(expanded)
        else:
            index = parent.indexOfChild(current)
            target = index + step
            if 0 <= target < parent.childCount():
                parent.takeChild(index)
                parent.insertChild(target, current)
        self.tree.setCurrentItem(current)
        self._recolour()

    def rename(self, old: str, new: str) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is not None and item.text(0) == old:
                item.setText(0, new)

    def _recolour(self) -> None:
        self.tree.blockSignals(True)
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is not None:
                item.setIcon(0, swatch(theme.family_colour(i)))
        self.tree.blockSignals(False)

    # ----- the result ---------------------------------------------------------------------------
    def families_in_order(self) -> list[str]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item.text(0) for item in items if item is not None]

    def families(self) -> Families:
        """The families as edited: empty words are dropped, names and words kept as typed."""
        result: Families = {}
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is None:
                continue
            children = (item.child(j) for j in range(item.childCount()))
            words = [child.text(0) for child in children if child is not None]
            result[item.text(0)] = [w for w in words if w.strip()]
        return result

    def problem(self) -> str:
        """Why the families cannot be saved, or ""."""
        names = self.families_in_order()
        families = self.families()
        if not names:
            return "Keep at least one family."
        if any(not n.strip() for n in names):
            return "Every family needs a name."
        if len(set(names)) != len(names):
            return "Two families have the same name."
        if any(n.startswith("_") for n in names):
            return "A family name cannot start with '_' (families files use that for notes)."
        empty = [n for n, words in families.items() if not words]
        if empty:
            return f"The family {empty[0]!r} has no words."
        return ""

    def _on_save(self) -> None:
        problem = self.problem()
        if problem:
            self.message.setText(problem)
            return
        self.accept()
