"""Types of the C module built from _every.c: every array argument is a C-contiguous buffer."""

INSTRUCTIONS: str

def screen_tile(
    tile: object, rows: int, cols: int, scale: object, q_row0: int, col_id0: int, q_col0: int, row_id0: int,
    k: int, cap: int, window: float, targets: bool, heap: object, filled: object, bar: object,
    cand_ids: object, cand_scores: object, cand_count: object, self_ids: object, t_low: object, t_high: object,
    t_exact: object, above: object, overflow: object, table: object, width: int, inverse: object, /,
) -> None: ...
def pair_scores(rows: object, width: int, inverse: object, first: object, second: object, out: object, /) -> None: ...
def row_squares(rows: object, width: int, out: object, /) -> None: ...
