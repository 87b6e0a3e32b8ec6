"""IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M rows sixteen at a time, the copy their first pass scans.

These types keep eight numbers behind one grid index, so their blocks cannot be scanned in place
cheaply; they were rounded once to a bfloat16 copy, 2 bytes a number (6-10 times their stored
bytes). Where the CPU has AVX-512 VNNI (with GFNI and VBMI) the table is instead copied, when it
opens, into planes of 2-bit grid codes and minus bits with the stored scales as small integers
(``quants_iq.h``: 0.30-0.45 bytes a number, no disk cache needed; IQ2_XXS and IQ2_XS keep their grid
indices as stored and each number's sign as a bit, 0.27-0.30 bytes a number, and look the codes up as
they scan), which
``_quants.iq_scores`` scans against the query as 16-bit integers with the integer scan's ``error_bound``
(the proof is the header's top comment); a table's own search scans it against the query in signed
bytes with that query's measured rounding (``StoredScreen.bounded_scores``,
``StoredScreen.whole_search``). Other builds keep the bfloat16 copy.
"""

from __future__ import annotations

# The C code of each type (``_quants.c``'s kinds; ``_quants.dequantise`` reads them too).
GRID_KINDS = {"IQ2_XXS": 18, "IQ2_XS": 19, "IQ2_S": 20, "IQ1_S": 21, "IQ1_M": 22}
GRID_CODES = frozenset(GRID_KINDS.values())
