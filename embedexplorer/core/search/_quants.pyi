"""Types of the C module built from _quants.c: every array argument is a C-contiguous buffer."""

from collections.abc import Sequence

INSTRUCTIONS: str
QUERY_ROUNDING: float
GROUP_ROWS: int
GROUP_BLOCK_BYTES: int
Q6K_GROUP_BLOCK_BYTES: int
Q5_K_GROUP_BLOCK_BYTES: int

def quant_scores(
    rows: object,
    kind: int,
    query: object,
    scale: object,
    out: object,
    progress: object,
    integer: bool = ...,
    groups: object | None = ...,
    /,
) -> None: ...
def q4_k_groups(rows: object, width: int, out: object, progress: object, /) -> None: ...
def q6_k_groups(rows: object, width: int, out: object, progress: object, /) -> None: ...
def q5_k_groups(rows: object, width: int, out: object, spreads: object, progress: object, /) -> None: ...
def block32_spreads(rows: object, kind: int, width: int, out: object, progress: object, /) -> None: ...
def grouped_scan() -> bool: ...

# The copy sixteen rows at a time of the kinds 1 and 5-22 (quants_group_copy.h).
def copy_groups(rows: object, kind: int, width: int, out: object, progress: object, /) -> None: ...
def groups_size(kind: int, count: int, width: int, /) -> int: ...
def fp4t_use_vbmi(on: bool, /) -> bool: ...
def q4_k_spreads(rows: object, width: int, out: object, progress: object, /) -> None: ...
def use_build(name: str, /) -> str: ...
def dequantise(rows: object, kind: int, out: object, /) -> None: ...
def dot_rows(
    rows: object, kind: int, ids: object, query: object, out: object, lengths: object = ..., scale: object = ..., /
) -> None: ...
def stored_top_k(
    scores: object,
    k: int,
    window: float,
    rows: object,
    kind: int,
    query: object,
    lengths: object,
    scale: object,
    ids_out: object,
    values_out: object,
    /,
) -> int: ...
def q2_k_spreads(rows: object, width: int, out: object, progress: object, /) -> None: ...
def low_bit_scores(
    rows: object,
    kind: int,
    query: object,
    scale: object,
    out: object,
    progress: object,
    integer: bool = ...,
    groups: object | None = ...,
    coarse: bool = ...,
    /,
) -> float | None: ...

def iq_scores(
    groups: object,
    rows: object,
    kind: int,
    query: object,
    scale: object,
    out: object,
    progress: object,
    coarse: bool = ...,
    /,
) -> float | None: ...
def helper_pool() -> tuple[int, int]: ...
def bytes_search(
    groups: object,
    rows: object,
    kind: int,
    query: object,
    query64: object,
    scale: object,
    lengths: object,
    relative: float,
    length: float,
    exclude: Sequence[int],
    ids_out: object,
    cosines_out: object,
    helpers: int,
    /,
) -> int: ...
