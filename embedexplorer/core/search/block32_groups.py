"""GGUF tables of 32-number blocks (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL) copied sixteen rows at a time.

The copy (``quants_groups32.h``) holds each block's float16 scale (and min) as stored and its codes
arranged for one vector instruction per four numbers of 16 rows: the same bytes as the stored
blocks, scanned at the cache's or memory's bandwidth.  Q4_1, Q5_0, Q5_1 and IQ4_NL get it at open
(instead of a bfloat16 copy, 3-4 times their bytes, which was cached on disk); Q4_0 and Q8_0, whose
blocks are scanned as stored, from their second query on (``StoredScreen``).
"""

from __future__ import annotations

# The GGUF types scanned by their groups from the open on, with their codes in ``_quants.c``.
BLOCK32_KINDS = {"Q4_1": 5, "Q5_0": 6, "Q5_1": 7, "IQ4_NL": 8}
Q4_0_KIND = 1
# The kinds whose numbers are d q + m: their grouped scan needs a measured spread (``quants_groups32.h``).
MIN_KINDS = (BLOCK32_KINDS["Q4_1"], BLOCK32_KINDS["Q5_1"])
