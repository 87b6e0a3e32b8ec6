"""How places in a text and rows of the position table are counted: one rule, said once.

The window (row pane, Two texts, Through the layers, Help), the command line and
docs/exercises.md all name a position row through these, so none can count differently.
"""

from __future__ import annotations

RULE = (
    "Places in a text and rows of the position table both count from 1, as the chapter does; "
    "a BERT-style model puts [CLS] in row 1, so its token at place N reads position-table row N + 1."
)


def row_number(position_index: int) -> int:
    """The position table's row ``position_index`` (from 0, as stored) counted as the rule counts: from 1."""
    return position_index + 1


def row_name(position_index: int) -> str:
    """ "position row 4": a row's name in the row pane and in Through the layers."""
    return f"position row {row_number(position_index):,}"


def place_and_row(place: int, position_index: int | None) -> str:
    """ "place 3, position-table row 4": a token's place (from 0, as stored) and the row it reads."""
    if position_index is None:
        return f"place {place + 1:,}"
    return f"place {place + 1:,}, position-table row {row_number(position_index):,}"
