"""Text cells for CSV files that a spreadsheet opens: never read as a formula.

A token such as ``=HYPERLINK(...)`` or ``@SUM(...)`` is ordinary text in a vocabulary, but a
spreadsheet that opens the CSV would run it. A cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return gets a leading apostrophe, which spreadsheets show as
text and hide (OWASP's advice for CSV injection).
"""

from __future__ import annotations

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet reads as a formula."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text
