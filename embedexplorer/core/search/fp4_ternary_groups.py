"""NVFP4, TQ1_0, IQ3_XXS and IQ3_S tables copied sixteen rows at a time for their first pass.

NVFP4's numbers are nibbles into the doubled e2m1 values with a float8 scale per 16: the copy keeps its
bytes as stored (four bytes of each of 16 rows to a 64-byte load), so the AVX-512 VNNI scan reads the
stored bytes once.  TQ1_0's are ternary digits packed five to a byte: the copy holds them as 2-bit codes
(1.24 times the stored bytes), which the scan reads with half the instructions of looking the packed
digits up.  IQ3_S's and IQ3_XXS's are signed values of llama.cpp's grids, four to an index: the copy
keeps the grid indices as stored and each number's sign as a bit (1.04 and 1.08 times the stored bytes),
and the scan looks the grid up as it goes.  A bfloat16 copy read 3.6, 9.5, 4.7 and 5.2 times the stored
bytes.  The copy (``quants_fp4_ternary.h``) is made when the table opens, in C
on every core, instead of that bfloat16 copy; a CPU without VNNI keeps the bfloat16 copy.
"""

from __future__ import annotations

# GGUF types scanned through this copy, with ``_quants.c``'s code for each.
FP4_TERNARY_KINDS = {"NVFP4": 14, "TQ1_0": 15, "IQ3_XXS": 16, "IQ3_S": 17}
