"""Types of the C module built from _quants.c: every array argument is a C-contiguous buffer."""

INSTRUCTIONS: str
QUERY_ROUNDING: float

def quant_scores(rows: object, kind: int, query: object, scale: object, out: object, progress: object, /) -> None: ...
def use_build(name: str, /) -> str: ...
