"""The first pass over a Q2_K or Q3_K table: a copy of its rows sixteen at a time, made at open.

Where the CPU has AVX-512 VNNI, ``_quants.copy_groups`` copies the rows' 2-bit codes (and
Q3_K's third bits as byte masks) so that one int32 lane of a register is one row, and
``_quants.low_bit_scores`` scans them against the query held as 16-bit integers
(``quants_groups_q2q3.h``, whose top comment proves the bound). The copy is about the size of the
stored blocks (Q2_K's exactly, Q3_K's 114 bytes per 110), where a bfloat16 copy is 6 and 4.7
times that. Elsewhere these tables keep the bfloat16 copy (``stored_search``).
"""

from __future__ import annotations

import numpy as np

from .group_copy import copy_in_groups
from .stored_screen import LOW_BIT_KINDS, StoredScreen, quantised_spread

try:
    from . import _quants
except ImportError:  # built without a C compiler: these tables keep the bfloat16 copy
    _quants = None  # type: ignore[assignment]

_Q2_K = LOW_BIT_KINDS["Q2_K"]
# Q2_K's numbers are d sc q - dmin m rounded once by gguf: 2^-24 of each, with room (as Q4_K's).
_Q2_K_ROUNDING = 2.0**-23


class LowBitScreen(StoredScreen):
    """A Q2_K or Q3_K table's stored blocks, lengths and grouped copy: cosines within ``error_bound``.

    The bound is the integer scan's (``StoredScreen.error_bound``): the query's rounding, and for
    Q2_K the table's ``spread`` and gguf's one rounding of each number, as for Q4_K.
    """

    def __init__(
        self,
        blocks: np.ndarray,
        kind: int,
        lengths: np.ndarray,
        notes: tuple[str, ...],
        width: int,
        spread: float | None,
        groups: np.ndarray,
    ) -> None:
        super().__init__(blocks, kind, lengths, 0.0, notes, quantised_width=width, groups=groups)
        self.integer = True
        self.query_rounding = float(_quants.QUERY_ROUNDING)
        self.spread = 1.0 if spread is None else spread
        self.value_rounding = _Q2_K_ROUNDING if kind == _Q2_K else 0.0
        # Same arguments as quant_scores; without VNNI (a test's other build) it scans the blocks in float32.
        self._scan = _quants.low_bit_scores

    def _groups_for_scan(self) -> np.ndarray | None:
        return self.groups


def low_bit_screen(
    blocks: np.ndarray, storage: str, lengths: np.ndarray, notes: tuple[str, ...], width: int
) -> LowBitScreen | None:
    """The grouped first pass over ``blocks`` (Q2_K or Q3_K rows as stored); None when a Q2_K table's
    spread is too large for the integer scan (its min offsets cancel its products): the caller then
    makes the bfloat16 copy."""
    kind = LOW_BIT_KINDS[storage]
    spread = None
    if kind == _Q2_K:
        spread = quantised_spread(blocks, width, lengths, kind)
        if spread is None:
            return None
    return LowBitScreen(blocks, kind, lengths, notes, width, spread, copy_in_groups(blocks, kind, width, _quants))
