"""IQ4_XS, TQ2_0 and MXFP4 tables copied sixteen rows at a time for their first pass (``quants_lookup.h``).

Their numbers are codes into small tables of values (IQ4_NL's 16 values, MXFP4's e2m1 values) or
2-bit codes (TQ2_0): the copy keeps the codes as stored, four bytes of each of 16 rows to a 64-byte
load, so the AVX-512 VNNI scan reads about the stored bytes once (a bfloat16 copy was 4-8 times as
many).  It is made when the table opens, in C on every core, instead of that bfloat16 copy.
"""

from __future__ import annotations

# GGUF types scanned through this copy, with ``_quants.c``'s code for each.
LOOKUP_KINDS = {"IQ4_XS": 11, "TQ2_0": 12, "MXFP4": 13}
