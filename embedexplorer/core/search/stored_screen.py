"""The first pass of a search over a table kept as stored, and the bound of its scores.

``StoredScreen`` holds what one pass over every row reads: 16-bit rows as stored, or a GGUF
table's blocks as stored (``_quants.c``) and, for most quantised types, a copy of them sixteen
rows at a time (``quants_groups*.h``, ``quants_lookup.h``, ``quants_fp4_ternary.h``,
``quants_iq.h``), and each row's reciprocal length.  Its scores are cosines times the query's
length within ``error_bound``; ``stored_search`` chooses and builds a table's screen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property, partial
from typing import Any

import numpy as np

from ..common import cache
from . import scan_threads
from .block32_groups import BLOCK32_KINDS, MIN_KINDS, Q4_0_KIND
from .fp4_ternary_groups import FP4_TERNARY_KINDS
from .group_copy import copy_in_groups
from .iq_groups import GRID_CODES, GRID_KINDS
from .lookup_groups import LOOKUP_KINDS
from .neighbours import accumulation_error
from .q6_k_groups import q6_k_groups
from .scan_threads import helpers_for, shared_pass
from .stored_rows import StoredRows

try:
    from . import _scan
except ImportError:  # built without a C compiler
    _scan = None  # type: ignore[assignment]
try:
    from . import _quants
except ImportError:  # built without a C compiler: quantised rows get bfloat16 roundings (or none)
    _quants = None  # type: ignore[assignment]

BF16_KIND = 0
# GGUF types whose blocks the quantised scan reads in place, with its code for each.
QUANT_KINDS = {"Q8_0": 0, "Q4_0": 1, "Q4_K": 2, "Q6_K": 3}
# GGUF types scanned through a copy of their rows sixteen at a time, made at open where the CPU has
# AVX-512 VNNI (``low_bit_groups``), else through a bfloat16 copy.
LOW_BIT_KINDS = {"Q2_K": 9, "Q3_K": 10}
# The types ``_quants.dequantise`` reads (the exact pass's rows): those, and Q5_K, whose first pass is its
# copy sixteen rows at a time made at open (AVX-512 VNNI, ``grouped_q5_k``), else its bfloat16 copy's scan
# (faster than a float scan of its blocks: 2.42 ms against 3.23 ms, GPT-2-shaped).
# Q4_1, Q5_0, Q5_1 and IQ4_NL are scanned by a copy of their rows sixteen at a time, made at open where the
# CPU has AVX-512 VNNI (``block32_groups``), else by their bfloat16 copy's scan; IQ4_XS, TQ2_0 and MXFP4 too
# (``lookup_groups``), Q2_K and Q3_K (``low_bit_groups``), NVFP4, TQ1_0 and the IQ3s (``fp4_ternary_groups``),
# and the 1-2-bit grid types (``iq_groups``).
DEQUANTISED_KINDS = {
    **QUANT_KINDS,
    "Q5_K": 4,
    **BLOCK32_KINDS,
    **LOOKUP_KINDS,
    **LOW_BIT_KINDS,
    **FP4_TERNARY_KINDS,
    **GRID_KINDS,
}
# Of those, the kinds an AVX-512 build scans against the query as 16-bit integers (Q4_K, Q4_1 and Q5_1 when
# their spread allows).
_INTEGER_KINDS = (
    QUANT_KINDS["Q8_0"],
    QUANT_KINDS["Q4_0"],
    QUANT_KINDS["Q6_K"],
    BLOCK32_KINDS["Q5_0"],
    BLOCK32_KINDS["IQ4_NL"],
    *LOOKUP_KINDS.values(),
    *FP4_TERNARY_KINDS.values(),
)
_Q4_K = QUANT_KINDS["Q4_K"]
# The 32-number kinds read as stored at a first query and by their copy sixteen rows at a time from the second.
_LATER_32 = (Q4_0_KIND, QUANT_KINDS["Q8_0"])
Q5_K_KIND = DEQUANTISED_KINDS["Q5_K"]
_Q6_K = QUANT_KINDS["Q6_K"]
# Kinds whose numbers are a scaled code plus a min, rounded once by gguf: scanned as integers with a spread.
SPREAD_KINDS = (_Q4_K, Q5_K_KIND, *MIN_KINDS)
# Kinds whose copy sixteen rows at a time is only ever made at open (never from a later query).
_FP4_TERNARY_CODES = frozenset(FP4_TERNARY_KINDS.values())
# Kinds whose copy a table's own search scans against the query in signed bytes, with that query's measured
# rounding (``bounded_scores``, ``whole_search``): the 1-3-bit kinds, Q2_K, Q3_K and IQ4_XS, whose scans are mostly
# byte products.  The IQ3s, TQ1_0, TQ2_0 and IQ4_XS are read by ``quant_scores`` (``quants_fp4_ternary.h``,
# ``quants_lookup.h``), the grid kinds by ``iq_scores``.
_QUANT_SCORES_IN_BYTES = frozenset(
    (
        *(FP4_TERNARY_KINDS[name] for name in ("TQ1_0", "IQ3_XXS", "IQ3_S")),
        LOOKUP_KINDS["TQ2_0"],
        LOOKUP_KINDS["IQ4_XS"],
    )
)
_LOW_BIT_CODES = frozenset(LOW_BIT_KINDS.values())  # Q2_K, Q3_K: read by ``low_bit_scores`` (``quants_groups_q2q3.h``)
BYTES_QUERY_KINDS = frozenset((*GRID_CODES, *_QUANT_SCORES_IN_BYTES, *_LOW_BIT_CODES))
# Q4_K and Q6_K blocks read as stored (a table above ``_GROUPS_MAX_BYTES``, never copied) against the query in bytes
# too (``quants_vnni.h``): their scans were held by their products there (Qwen2-7B-sized Q6_K, one core, 29-36 ms
# against 24-28 ms in bytes).
_AS_STORED_IN_BYTES = frozenset((QUANT_KINDS["Q4_K"], QUANT_KINDS["Q6_K"]))
# A Q4_K table whose rows' spread exceeds this is scanned in float32 instead: its integer scan's bound
# would let too many rows through to the exact pass.
_MAX_SPREAD = 64.0
# Q4_0's groups pay at every size: Qwen2-7B-sized (306 MB), two threads, 24-25 ms by groups against 36-38 ms
# as stored and 25 ms for one plain read (medians of 9, interleaved, load 3.0-3.4).
# Above this many stored bytes a Q4_K table keeps the scan of its blocks as stored: it is read from memory,
# not the cache, and that scan is bound by memory's bandwidth already (Qwen2-7B-sized, 307 MB, two threads:
# 16.5 ms as stored, 16.8 ms by groups, at load 0.8), so a grouped copy would take as much again for nothing.
# A Qwen2-7B-sized Q6_K table (447 MB) is scanned faster by groups (two threads 17.6 ms against 24.4 ms, at
# load 1.4: bench_q6_k_groups --qwen), but its copy takes 451 MB more memory and 345 ms at the second query,
# to save 7 ms a query on a table that meets goal 2 as stored: it keeps its blocks as stored too.
_GROUPS_MAX_BYTES = 128 << 20
# Q4_K's and Q5_K's dequantised numbers are rounded once by gguf (d s q - m n): 2^-24 of each, with room.
_Q4_K_ROUNDING = 2.0**-23
# Rounding to the nearest bfloat16 moves a number by at most 2^-8 of itself.
BF16_ROUNDING = 2.0**-8
# Float32 rounding of the query, the reciprocal length and their product: 2^-24 each, with room.
_SCALE_ROUNDING = 4 * 2.0**-24
# The scan of bfloat16 rows against the query in bfloat16 (``bf16_query_dot.h``) flushes subnormal products and sums
# to 0: less than 2^-36 of |query| |row| on rows whose lengths are within these bounds, 2^-35 with room (a table
# with a row that does not point nowhere outside them keeps the float32 scan).
_BF16_QUERY_LENGTHS = (2.0**-64, 2.0**64)
_BF16_QUERY_FLUSH = 2.0**-35


class StoredScreen:
    """16-bit rows and one reciprocal length per row: a cosine for every row in one pass.

    Parameters
    ----------
    bits:
        ``(rows, width)`` uint16: bfloat16 (``kind`` 0) or float16 (``kind`` 1) numbers;
        or, with ``quantised``, the rows' GGUF blocks as stored (uint8, ``kind`` from ``QUANT_KINDS``).
    lengths:
        Each row's length in float64, from the stored (not the rounded) numbers.
    rounding:
        How far a number of ``bits`` may be from the stored one, relative to it: 0 when
        ``bits`` are the stored numbers, 2^-8 when they are bfloat16 roundings.
    """

    def __init__(
        self,
        bits: np.ndarray,
        kind: int,
        lengths: np.ndarray,
        rounding: float,
        notes: tuple[str, ...] = (),
        quantised_width: int | None = None,
        spread: float | None = None,
        groups: np.ndarray | None = None,
    ) -> None:
        if _scan is None or (quantised_width is not None and _quants is None):
            raise RuntimeError("the scan of stored rows was not built (no C compiler at install time)")
        self.bits, self.kind, self.rounding = bits, kind, rounding
        self.quantised = quantised_width is not None
        self._scan: Callable[..., object] = _quants.quant_scores if self.quantised else _scan.half_scores
        self._quants = _quants
        self._scan_module = _scan
        # How far the scan's copy of the query may be from it, relative to |query| (Q8_0, Q4_0 and
        # Q6_K are scanned against it as 16-bit integers: ``_quants.c``).
        # A Q4_K or Q5_K table is scanned so only with its ``spread``: the largest ratio over its rows of
        # sqrt(sum (|d s| q + |m n|)^2) to the row's length (``quantised_spread``).
        spread_kind = self.quantised and kind in SPREAD_KINDS
        integer_kind = kind in _INTEGER_KINDS or (kind in GRID_CODES and groups is not None)
        self.integer = self.quantised and (integer_kind or (spread_kind and spread is not None))
        self.query_rounding = float(_quants.QUERY_ROUNDING) if self.integer else 0.0
        self.spread = spread if self.integer and spread_kind and spread is not None else 1.0
        self.value_rounding = _Q4_K_ROUNDING if self.integer and spread_kind else 0.0
        self.notes = notes
        # The mapped file of the first pass's rows (a cache entry, or the model file): checked before each pass.
        self.cache_file = cache.mapped_state(bits)
        self.shape = (int(bits.shape[0]), int(bits.shape[1] if quantised_width is None else quantised_width))
        self.lengths = lengths
        usable = np.isfinite(lengths) & (lengths > 0)
        with np.errstate(divide="ignore", over="ignore"):
            scale = np.where(usable, 1.0 / np.where(usable, lengths, 1.0), 0.0).astype(np.float32)
        # A length too small for its reciprocal to be a float32 points nowhere too.
        scale[~np.isfinite(scale)] = 0.0
        self.scale = scale
        # What dot_rows divides by: the lengths as one contiguous float64 array (a cache entry may be a map).
        self._lengths64 = np.ascontiguousarray(lengths, dtype=np.float64)
        # A Q4_K, Q6_K or Q4_0 table's rows sixteen at a time (``q4_k_groups``, ``q6_k_groups``,
        # ``block32_groups``), made when a second query comes; Q4_1's, Q5_0's, Q5_1's, IQ4_NL's, IQ4_XS's,
        # TQ2_0's, MXFP4's, NVFP4's, TQ1_0's, the IQ3s' and Q5_K's at open (``groups``).
        self.groups: np.ndarray | None = groups
        self.groups_at_open = groups is not None
        # Rows that point nowhere (scale 0) score 0 in every scan: only the others' lengths matter.
        self._bf16_query = (
            not self.quantised and kind == BF16_KIND and _lengths_within(lengths[scale != 0], _BF16_QUERY_LENGTHS)
        )
        self._scans = 0
        self._groups_lock = threading.Lock()

    @property
    def bf16_bits(self) -> bool:
        """True when ``bits`` are bfloat16 numbers, one per number of the table (what ``scores_many`` reads)."""
        return not self.quantised and self.kind == BF16_KIND

    @property
    def _bytes_kind(self) -> bool:
        """True for a copy ``bounded_scores`` and ``whole_search`` scan against the query in bytes, where the build
        can (else, in C, in float32); or for Q4_K or Q6_K blocks read as stored (a table too large for their copy)."""
        if self.kind in _AS_STORED_IN_BYTES:  # without VNNI the 16-bit scan (vpmaddwd) beats the float one
            large = self.bits.nbytes > _GROUPS_MAX_BYTES
            return self.quantised and self.integer and large and bool(self._quants.grouped_scan())
        return self.kind in BYTES_QUERY_KINDS and self.groups is not None and self.integer

    @property
    def query_in_bytes(self) -> bool:
        """True when a table's own search scans this copy against the query in single bytes (``bounded_scores``)."""
        return self._bytes_kind and bool(self._quants.grouped_scan())

    @property
    def query_in_bf16(self) -> bool:
        """True when a table's own search scans its bfloat16 rows against the query in bfloat16."""
        return self._bf16_query and bool(self._scan_module.BF16_QUERY)

    @property
    def nbytes(self) -> int:
        return int(self.bits.nbytes + self.scale.nbytes + self.lengths.nbytes + self.groups_bytes)

    @property
    def groups_bytes(self) -> int:
        """Bytes of the copy of a table's rows sixteen at a time (0 until a second query makes it, if ever)."""
        return 0 if self.groups is None else int(self.groups.nbytes)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Every row's cosine with ``query`` times its length, each within ``error_bound(|query|)``."""
        if self.cache_file is not None:
            self.cache_file.check()  # cut short by another program: a message, not SIGBUS
        return self.scores_after_check(query)

    def scores_after_check(self, query: np.ndarray) -> np.ndarray:
        """``scores`` for a caller that has just checked the mapped file itself (a table's own search)."""
        query = np.ascontiguousarray(query, dtype=np.float32)
        out = np.empty(self.shape[0], dtype=np.float32)
        # quant_scores's last arguments follow the counters.
        extra = (self.integer, self._groups_for_scan()) if self.quantised and self.kind not in GRID_CODES else ()

        def scan(progress: np.ndarray) -> None:
            if self.quantised and self.kind in GRID_CODES:  # by the groups, or by the blocks in float32
                self._quants.iq_scores(self.groups, self.bits, self.kind, query, self.scale, out, progress)
            else:
                self._scan(self.bits, self.kind, query, self.scale, out, progress, *extra)

        shared_pass(self.shape[0] * self.shape[1], scan)
        return out

    def bounded_scores(self, query: np.ndarray, query_length: float, check: bool = True) -> tuple[np.ndarray, float]:
        """Every row's cosine with ``query`` times its length, and how far any of them may be from the exact one.

        An IQ1, IQ2, IQ3, IQ4_XS, Q2_K, Q3_K, TQ1_0 or TQ2_0 table's copy is scanned against the query held in signed
        bytes, not 16-bit integers: one product instruction for four numbers instead of two, which a query's time is
        mostly made of.  Its rounding is a hundred times the 16-bit one's, so the margin uses the rounding this very
        query had (``iq_scores``, ``quant_scores`` and ``low_bit_scores`` measure |x - x~|) instead of a bound for
        every query: a few more candidates for the exact pass, which picks the same answer.  bfloat16 rows as stored
        are scanned against the query in bfloat16 the same way (``_bf16_query_scores``) where the CPU has
        AVX512_BF16.  Every other table: ``scores`` and ``error_bound``.  ``check``: False for a caller that has just
        checked the mapped file itself.
        """
        if self._bf16_query and query_length > 0:
            found = self._bf16_query_scores(query, query_length, check)
            if found is not None:
                return found
        if not self._bytes_kind:
            scores = self.scores(query) if check else self.scores_after_check(query)
            return scores, self.error_bound(query_length)
        quants, groups, rows, kind = self._quants, self.groups, self.bits, self.kind

        def coarse(query32: np.ndarray, out: np.ndarray, progress: np.ndarray) -> float:  # the query in bytes
            if kind in _LOW_BIT_CODES:
                return float(quants.low_bit_scores(rows, kind, query32, self.scale, out, progress, True, groups, True))
            if kind in _AS_STORED_IN_BYTES:
                return float(quants.quant_scores(rows, kind, query32, self.scale, out, progress, True, None, True))
            if kind in _QUANT_SCORES_IN_BYTES:
                return float(quants.quant_scores(rows, kind, query32, self.scale, out, progress, True, groups, True))
            return float(quants.iq_scores(groups, rows, kind, query32, self.scale, out, progress, True))

        out, rounding = self._measured_pass(query, check, coarse)
        # |x - x~| over |x|, rounded up: the query's share of the bound, in place of QUERY_ROUNDING.
        relative = rounding / query_length * (1 + 2.0**-40) if query_length > 0 else 0.0
        return out, self._bound(query_length, relative)

    def _measured_pass(
        self, query: np.ndarray, check: bool, scan: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    ) -> tuple[np.ndarray, float]:
        """Every row's score by ``scan(query32, out, progress)``, shared by the pass's threads, and the |x - x~|
        the scan measured for its copy of the query (every thread's is the same)."""
        if check and self.cache_file is not None:
            self.cache_file.check()
        query32 = np.ascontiguousarray(query, dtype=np.float32)
        out = np.empty(self.shape[0], dtype=np.float32)
        rounding = [0.0]

        def run(progress: np.ndarray) -> None:
            rounding[0] = scan(query32, out, progress)

        shared_pass(self.shape[0] * self.shape[1], run)
        return out, rounding[0]

    def _bf16_query_scores(
        self, query: np.ndarray, query_length: float, check: bool
    ) -> tuple[np.ndarray, float] | None:
        """``bounded_scores`` of bfloat16 rows against the query rounded to bfloat16 (``bf16_query_dot.h``): one
        product instruction for 32 numbers where the float32 scan takes two and a widening, which on a core that
        halves 512-bit instructions is what a query's time is made of.  The margin uses this query's measured
        rounding, as the byte scans do.  None where the CPU or the query does not allow it."""
        bits, scale, module = self.bits, self.scale, self._scan_module

        def in_bf16(query32: np.ndarray, out: np.ndarray, progress: np.ndarray) -> float:
            return float(module.bf16_query_scores(bits, query32, scale, out, progress))

        out, rounding = self._measured_pass(query, check, in_bf16)
        if rounding < 0:
            return None
        relative = rounding / query_length * (1 + 2.0**-40) + _BF16_QUERY_FLUSH
        return out, self._bound(query_length, relative)

    def whole_search(
        self,
        rows: StoredRows,
        query: np.ndarray,
        query64: np.ndarray,
        length: float,
        k: int,
        excluded: list[int],
        check: bool = True,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """A table's k best rows for ``query`` and their cosines in one C call (``bytes_search``), where it is read
        against the query in bytes (``_bytes_kind``): ``bounded_scores``'s scan and margin, then ``best_of``'s pick,
        exact pass and order, with the same answer as ``neighbours.search_bounded`` gives from those two.  None where
        that call does not apply (another kind, no helper threads in C, rows read another way, a NaN score): the
        caller searches step by step.
        ``query``: C-contiguous float32; ``query64``: the query as the exact pass takes it, C-contiguous float64;
        ``length``: its length, above 0."""
        blocks = self._blocks_of(rows)
        # Without the C helpers (Windows) a pass's helpers are Python threads, each calling the whole function.
        if not (self._bytes_kind and scan_threads.C_HELPERS) or blocks is None:
            return None
        if check and self.cache_file is not None:
            self.cache_file.check()
        ids, cosines = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.float32)
        copy = self.groups if self.groups is not None else b""  # Q4_K and Q6_K as stored: none
        found = self._quants.bytes_search(
            copy, blocks, self.kind, query, query64, self.scale, self._lengths64, self._relative_part, length,
            excluded, ids, cosines, helpers_for(self.shape[0] * self.shape[1]),
        )  # fmt: skip
        return None if found < 0 else (ids[:found], cosines[:found])

    def _groups_for_scan(self) -> np.ndarray | None:
        """The Q4_K, Q6_K, Q4_0 or Q8_0 rows in groups of sixteen, made at the second query where the CPU scans
        them (AVX-512 VNNI; ``quants_groups.h``, ``quants_groups_q6k.h``, ``quants_groups32.h``): about half the
        instructions a number (Q8_0's a sixth), so a table in the cache is scanned at the cache's bandwidth.  Not
        at the first: a one-shot answer makes no copy.  Not for a Q4_K or Q6_K table too large for the cache
        (``_GROUPS_MAX_BYTES``).  The other 32-number kinds, IQ4_XS, TQ2_0, MXFP4, NVFP4, TQ1_0 and the IQ3s
        have theirs from the open (the last four or none: scored in float64)."""
        if self.kind in _FP4_TERNARY_CODES:
            return self.groups
        # grouped_scan is false without VNNI, or when a test chose another build.
        later = (self.kind in (_Q4_K, _Q6_K) and self.bits.nbytes <= _GROUPS_MAX_BYTES) or self.kind in _LATER_32
        wanted = self.integer and (later or self.groups_at_open) and self._quants.grouped_scan()
        with self._groups_lock:
            self._scans += 1
            if wanted and self.groups is None and self._scans > 1 and self.kind == _Q4_K:
                self.groups = q4_k_groups(self.bits, self.shape[1], self._quants)
            elif wanted and self.groups is None and self._scans > 1 and self.kind == _Q6_K:
                self.groups = q6_k_groups(self.bits, self.shape[1], self._quants)
            elif wanted and self.groups is None and self._scans > 1:
                self.groups = copy_in_groups(self.bits, self.kind, self.shape[1], self._quants)
        return self.groups if wanted else None

    def error_bound(self, query_length: float) -> float:
        """How far a score may be from the exact cosine times ``query_length``.

        The rounded numbers are off by at most ``rounding`` of themselves (0 for rows
        read as stored, quantised ones too: ``_quants.c`` says why) and the
        float32 sum by ``accumulation_error`` of the sum of the products' sizes; both
        are at most that fraction of |row| x |query| (Cauchy-Schwarz), and the scale
        divides by |row|.  The float32 query and reciprocal length add 2^-24 each.  A scan
        against the query held as integers adds ``query_rounding`` (``_quants.c`` says why).
        """
        return self._bound(query_length, self.query_rounding)

    def _bound(self, query_length: float, query_rounding: float) -> float:
        """``error_bound`` for a scan whose copy of the query was off by ``query_rounding`` of |query|."""
        return query_length * (query_rounding + (1 + query_rounding) * self._relative())

    @cached_property
    def _relative_part(self) -> float:
        """``_relative()``, computed at the first search (the numbers it reads are fixed by then)."""
        return self._relative()

    def _relative(self) -> float:
        """The bound's part that scales with |query| besides the query's rounding: the numbers', the sum's, the
        reciprocal length's (``bytes_search`` takes it to make the same margin in C)."""
        summing = accumulation_error(self.shape[1]) * (1 + self.rounding) * self.spread
        return 1.01 * (self.rounding + summing + self.value_rounding) + _SCALE_ROUNDING

    def exact_scores(self, rows: StoredRows, ids: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosines times |query| of rows ``ids``, in float64 from the stored numbers (0 for rows pointing nowhere)."""
        query64 = np.ascontiguousarray(query, dtype=np.float64)
        blocks = self._blocks_of(rows)
        if blocks is not None:  # in C, from each row's blocks, over their lengths: no copies of the rows
            chosen = np.ascontiguousarray(ids, dtype=np.int64)
            cosines = np.empty(chosen.shape[0], dtype=np.float64)
            self._quants.dot_rows(blocks, self.kind, chosen, query64, cosines, self._lengths64, self.scale)
            return cosines
        out = np.zeros(ids.shape[0], dtype=np.float64)
        for start in range(0, ids.shape[0], 1024):  # a float64 copy of 1,024 rows at a time
            chosen = ids[start : start + 1024]
            dots = np.einsum("ij,j->i", np.asarray(rows[chosen], dtype=np.float64), query64)
            out[start : start + 1024] = self._cosines(chosen, dots)
        return out

    def best_of(
        self, rows: StoredRows, scores: np.ndarray, k: int, window: float, query64: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The k best rows among those whose ``scores`` are at or above the k-th best less ``window``, by their
        exact cosines times |query| (``exact_scores``'s), best first, ties by id: picked, scored and ordered in one
        C call (``quants_top.h``), as ``neighbours.search`` does it in four.  None where that call cannot run (rows
        read another way, a score that is NaN): the caller does it step by step."""
        blocks = self._blocks_of(rows)
        if blocks is None or scores.dtype != np.float32 or not scores.flags.c_contiguous:
            return None
        ids, values = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.float64)
        query = np.ascontiguousarray(query64, dtype=np.float64)
        found = self._quants.stored_top_k(
            scores, k, window, blocks, self.kind, query, self._lengths64, self.scale, ids, values
        )
        return None if found < 0 else (ids[:found], values[:found])

    def _cosines(self, ids: np.ndarray, dots: np.ndarray) -> np.ndarray:
        """Rows ``ids``' dot products over their lengths; 0 for rows pointing nowhere (scale 0)."""
        live = self.scale[ids] != 0
        return np.where(live, dots / np.where(live, self.lengths[ids], 1.0), 0.0)

    def _blocks_of(self, rows: StoredRows) -> np.ndarray | None:
        """``rows``'s quantised blocks as ``dot_rows`` reads them (the very bytes ``rows`` dequantises), or None."""
        raw = rows.raw
        if not self.quantised or raw.dtype != np.uint8 or raw.ndim != 2 or not raw.flags.c_contiguous:
            return None
        return raw if raw.shape[0] == self.shape[0] else None

    def unit_rows(self, rows: StoredRows, ids: np.ndarray | list[int] | int) -> np.ndarray:
        """Rows ``ids`` scaled to length 1, in float64 (rows pointing nowhere are zero)."""
        index = np.atleast_1d(np.asarray(ids, dtype=np.intp))
        picked = np.asarray(rows[index], dtype=np.float64)
        live = self.scale[index] != 0
        unit = np.zeros_like(picked)
        unit[live] = picked[live] / self.lengths[index][live, None]
        return unit if np.ndim(ids) else unit[0]


def _lengths_within(lengths: np.ndarray, bounds: tuple[float, float]) -> bool:
    """True when every length is within ``bounds`` (none NaN)."""
    lengths = np.asarray(lengths, dtype=np.float64)
    return bool(np.all((lengths >= bounds[0]) & (lengths <= bounds[1])))


def q4_k_groups(blocks: np.ndarray, width: int, quants: Any = _quants) -> np.ndarray:
    """Q4_K rows copied sixteen at a time for the grouped scan (``quants_groups.h``: 2368 bytes per 2304
    stored, the last group padded with zero rows), in one pass in C shared by a few threads."""
    groups = -(-blocks.shape[0] // quants.GROUP_ROWS)
    out = np.empty(groups * (width // 256) * quants.GROUP_BLOCK_BYTES, dtype=np.uint8)
    shared_pass(blocks.shape[0] * width, partial(quants.q4_k_groups, blocks, width, out))
    return out


def quantised_spread(blocks: np.ndarray, width: int, lengths: np.ndarray, kind: int = _Q4_K) -> float | None:
    """A Q4_K, Q4_1, Q5_1 or Q2_K table's spread (see ``StoredScreen``), from one pass in C over its blocks at
    each open (not cached: nothing on disk can loosen the bound); None when too large for the integer scan."""
    spreads = np.empty(blocks.shape[0], dtype=np.float64)
    if kind == _Q4_K:
        measure = partial(_quants.q4_k_spreads, blocks, width, spreads)
    elif kind == LOW_BIT_KINDS["Q2_K"]:
        measure = partial(_quants.q2_k_spreads, blocks, width, spreads)
    else:
        measure = partial(_quants.block32_spreads, blocks, kind, width, spreads)
    shared_pass(blocks.shape[0] * width, measure)
    return table_spread(spreads, lengths)


def table_spread(spreads: np.ndarray, lengths: np.ndarray) -> float | None:
    """The largest ratio of a row's root spread (sum of (|d s| q + |m n|)^2 over its numbers) to its
    length, over the rows that point somewhere; None when too large for the integer scan."""
    live = np.isfinite(lengths) & (lengths > 0) & np.isfinite(spreads)
    if not live.any():
        return None
    # float32 sums of squares inside each sub-block: 1e-3 on top covers their rounding many times over.
    spread = float(np.max(np.sqrt(spreads[live]) / lengths[live])) * 1.001
    return max(spread, 1.0) if np.isfinite(spread) and spread <= _MAX_SPREAD else None
