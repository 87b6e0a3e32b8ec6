"""Rows that point nowhere: holding NaN or infinity (a damaged file or block), or all zero.

Such a row has no direction, so its cosine with anything is undefined: left in, NaN
spreads through a mean, a PCA or a t-SNE and turns every point into nan, and two
identical zero rows have "row cosine 0", the most changed token of two equal files.
One rule everywhere: the rows are found once per table (from their lengths, summed in
float64), named once when the table opens, and left out of every computation they
would poison (comparisons, directions, maps, t-SNE), each saying so in a line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.errors import QueryError
from ..search.stored_rows import StoredRows

# Ids named in a sentence; the rest are counted.
_NAMED = 5


@dataclass(frozen=True)
class PointingNowhere:
    """The ids of a table's rows that hold NaN or infinity, and of those that are all zero."""

    non_finite: np.ndarray
    zero: np.ndarray
    rows: int

    @classmethod
    def from_lengths(cls, lengths: np.ndarray) -> PointingNowhere:
        """From each row's length (NaN or infinite for a row holding such a number, 0 for an all-zero row)."""
        lengths = np.asarray(lengths)
        return cls(
            non_finite=np.flatnonzero(~np.isfinite(lengths)),
            zero=np.flatnonzero(lengths == 0),
            rows=int(lengths.shape[0]),
        )

    @property
    def ids(self) -> np.ndarray:
        """Every such row, in id order."""
        return np.union1d(self.non_finite, self.zero)

    def __len__(self) -> int:
        return int(self.non_finite.size + self.zero.size)

    def usable(self, ids: np.ndarray) -> np.ndarray:
        """A mask over ``ids``: True for rows that point somewhere."""
        return ~np.isin(np.asarray(ids), self.ids)

    def sentence(self) -> str:
        """What a person is told once when the table opens ("" when every row points somewhere)."""
        if not len(self):
            return ""
        parts = []
        if self.non_finite.size:
            parts.append(f"{_counted(self.non_finite, self.rows)} hold NaN or infinity")
        if self.zero.size:
            parts.append(f"{_counted(self.zero, self.rows)} are all zero")
        return (
            f"{' and '.join(parts)}: they point nowhere, so they are left out of comparisons, directions, "
            "maps and averages, and have no neighbours."
        )

    def left_out(self, ids: np.ndarray, what: str) -> tuple[np.ndarray, str]:
        """``ids`` without the rows that point nowhere, and a line saying how many went (or "")."""
        ids = np.asarray(ids)
        keep = self.usable(ids)
        if keep.all():
            return ids, ""
        gone = ids[~keep]
        return ids[keep], f"{_counted(gone, None)} of {what} point nowhere (NaN, infinity or all zero): left out."

    def check_example(self, token_id: int, token: str, rows: np.ndarray | StoredRows, use: str) -> None:
        """Refuse, naming it, a row that points nowhere where ``use`` needs its direction."""
        if token_id in self.non_finite or token_id in self.zero:
            raise QueryError(row_sentence(token_id, token, np.asarray(rows[token_id], dtype=np.float32), use) or "")


def row_sentence(token_id: int, token: str, row: np.ndarray, use: str) -> str | None:
    """Why one row points nowhere, ending with what it cannot do (``use``); None when it points somewhere."""
    bad = int(np.count_nonzero(~np.isfinite(row)))
    if bad:
        return (
            f"The row of {token} (id {token_id:,}) holds {bad:,} of {row.size:,} numbers that are not finite "
            f"(infinity or NaN) in the model file, so it points nowhere and {use}; the file may be damaged."
        )
    if not np.any(row):
        return f"The row of {token} (id {token_id:,}) is all zero in the model file, so it points nowhere and {use}."
    return None


def _counted(ids: np.ndarray, of: int | None) -> str:
    shown = ", ".join(f"{int(i):,}" for i in ids[:_NAMED]) + (", ..." if ids.size > _NAMED else "")
    total = f" of {of:,}" if of is not None else ""
    noun = "row" if ids.size == 1 and of is None else "rows"
    return f"{ids.size:,}{total} {noun} (id{'s' if ids.size > 1 else ''} {shown})"
