"""Text bound for a CSV file: a cell a spreadsheet would run as a formula is written as text.

A token, a family name or a model path comes from a file someone else wrote; a spreadsheet
opening the CSV runs a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return as a formula (``=HYPERLINK(...)``, ``@SUM(...)``).  OWASP's advice on CSV injection:
such a cell gets a leading apostrophe, which spreadsheets read as "this is text" and do not
show.  Every CSV the app writes passes its text here; ``original`` gives the value back.
"""

from __future__ import annotations

import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Where a spreadsheet may start a new cell inside a line it was not told is one cell.
_SEPARATOR = re.compile(r"([,;\t])")


def _needs_mark(text: str) -> bool:
    # A value that already begins with apostrophes before a formula start gets one more, so that
    # taking one away (``original``) always gives the value back exactly.
    return text.lstrip("'").startswith(FORMULA_STARTS)


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell: with a leading apostrophe when a spreadsheet would run it as a formula."""
    return "'" + text if _needs_mark(text) else text


def original(cell: str) -> str:
    """The value ``csv_cell`` was given, from the cell it made."""
    return cell[1:] if cell.startswith("'") and _needs_mark(cell[1:]) else cell


def csv_comment(line: str) -> str:
    """A ``# key: value`` line for a CSV, with every part a spreadsheet would split off made safe.

    Such a line is one cell to a reader that skips comments, but a spreadsheet splits it at
    each comma or semicolon, and a part after one may begin with ``=``.  Each such part gets
    the apostrophe (after its leading spaces and quotes, none of which stop a formula).
    """
    pieces = _SEPARATOR.split(line)
    for index in range(2, len(pieces), 2):  # the text after each separator
        piece = pieces[index]
        body = piece.lstrip(' "')
        if _needs_mark(body):
            pieces[index] = "'" + piece
    return "".join(pieces)
