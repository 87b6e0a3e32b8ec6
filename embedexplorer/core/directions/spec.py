"""A direction as a person writes it: word pairs (he -> she) or two word groups, and their parsing.

Text only, no table: the window reads and checks what is typed before the engine loads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..common.errors import QueryError

# The chapter's own pairs, the default direction.
DEFAULT_PAIRS = (("he", "she"), ("king", "queen"), ("man", "woman"))
ARROW = "\u2192"
_PAIR_SPLIT = re.compile(r"\s*(?:->|\u2192|=>)\s*")


@dataclass(frozen=True)
class DirectionSpec:
    """What the learner gave: pairs (A, B), or two groups (from, to). Exactly one of them."""

    pairs: tuple[tuple[str, str], ...] = ()
    groups: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    @property
    def label(self) -> str:
        """The pairs as typed, "he→she, king→queen"; groups as "[he, man] → [she, woman]"."""
        if self.groups is not None:
            first, second = (", ".join(w.strip() for w in group) for group in self.groups)
            return f"[{first}] {ARROW} [{second}]"
        return ", ".join(f"{a.strip()}{ARROW}{b.strip()}" for a, b in self.pairs)

    def to_dict(self) -> dict[str, object]:
        if self.groups is not None:
            return {"groups": {"from": list(self.groups[0]), "to": list(self.groups[1])}}
        return {"pairs": [list(pair) for pair in self.pairs]}


def parse_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """Pairs as a person types them: "he->she, king->queen" (commas or new lines between pairs)."""
    pairs = []
    for part in re.split(r"[,\n;]", text):
        if not part.strip():
            continue
        sides = _PAIR_SPLIT.split(part.strip())
        if len(sides) != 2 or not all(s.strip() for s in sides):
            raise QueryError(f"{part.strip()!r} is not a pair: write two words with an arrow between, as he->she.")
        pairs.append((sides[0], sides[1]))
    if not pairs:
        raise QueryError("Type at least one pair of words, as he->she.")
    return tuple(pairs)


def parse_words(text: str) -> tuple[str, ...]:
    """Words separated by commas or new lines (a word may hold spaces)."""
    return tuple(w.strip() for w in re.split(r"[,\n;]", text) if w.strip())
