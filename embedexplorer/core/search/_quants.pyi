"""Types of the C module built from _quants.c: every array argument is a C-contiguous buffer."""

INSTRUCTIONS: str
QUERY_ROUNDING: float
GROUP_ROWS: int
GROUP_BLOCK_BYTES: int

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
def grouped_scan() -> bool: ...
def q4_k_spreads(rows: object, width: int, out: object, progress: object, /) -> None: ...
def use_build(name: str, /) -> str: ...
def dequantise(rows: object, kind: int, out: object, /) -> None: ...

# The IQ1/IQ2 grid types (kinds 18-22): rows sixteen at a time (quants_iq.h).
def iq_groups(rows: object, kind: int, width: int, out: object, progress: object, /) -> None: ...
def iq_group_bytes(kind: int, /) -> int: ...
def iq_scores(
    groups: object, rows: object, kind: int, query: object, scale: object, out: object, progress: object, /
) -> None: ...
