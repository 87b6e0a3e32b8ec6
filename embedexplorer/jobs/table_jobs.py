"""The table's own questions: open a model, split a text, show a row, neighbours, cosine, the map.

Each job unpacks its request, calls the engine and returns the engine's own result
types (``TableFacts``, ``TokenReport``, ``NeighbourResult``, ``FamilyMap``), with only
what the window needs on top.  Rows cross the thread as numpy copies, never as views
of the memory-mapped file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..core.maps import Families, FamilyMap, family_map, load_families
from ..core.tables import EmbeddingTable, NeighbourResult, TableFacts, open_table
from ..core.texts import Token, TokenReport
from .base import JobContext, Kind, Lane

# How many chips the token pane shows at most; the report's note says how many were left out.
MAX_CHIPS = 512
# Where the family map lives in ``Session.derived``: neighbours place themselves on it.
MAP_KEY = "family_map"


# ----- open a model -----------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadRequest:
    spec: str  # what the user typed: folder, model file, Hub id, "bundled"; "" for the default
    allow_download: bool = False


@dataclass(frozen=True)
class LoadedModel:
    name: str
    facts: TableFacts
    byte_level: bool
    seconds: float


def load_model(ctx: JobContext, request: LoadRequest) -> LoadedModel:
    started = time.perf_counter()
    # The tokenizer runs in a child process: building it in this process would hold the
    # GIL for ~90 ms (GPT-2) and freeze the window for that long.
    table = open_table(
        request.spec or None,
        allow_download=request.allow_download,
        progress=ctx.progress,
        separate_tokenizer=True,
    )
    try:
        ctx.progress(900, 1000, "Normalising the rows")
        _ = table.unit, table.screen, table.tokens, table.baseline_cosine  # pay these once, here
        ctx.check()
    except BaseException:
        table.close()
        raise
    ctx.session.replace_table(table)
    ctx.report(1000, 1000, "Ready")
    return LoadedModel(
        name=table.name,
        facts=table.facts(),
        byte_level=table.vocabulary.byte_level,
        seconds=time.perf_counter() - started,
    )


LOAD = Kind("load", Lane.LONG, load_model, replaces_all=True)


# ----- a text's tokens --------------------------------------------------------------------------
@dataclass(frozen=True)
class TokensRequest:
    text: str


@dataclass(frozen=True)
class TokensAnswer:
    text: str
    report: TokenReport


def split_text(ctx: JobContext, request: TokensRequest) -> TokensAnswer:
    return TokensAnswer(request.text, ctx.session.table.tokenize(request.text, max_shown=MAX_CHIPS))


TOKENS = Kind("tokens", Lane.QUICK, split_text)


# ----- one token's row --------------------------------------------------------------------------
@dataclass(frozen=True)
class RowRequest:
    token_id: int
    place: int  # 0-based place of the token in the text


@dataclass(frozen=True)
class RowAnswer:
    token: Token
    place: int
    row: np.ndarray
    position_row: np.ndarray | None = None
    combined: np.ndarray | None = None
    note: str = ""


def token_row(ctx: JobContext, request: RowRequest) -> RowAnswer:
    table = ctx.session.table
    row = table.row(request.token_id)
    position_row = table.position_row(request.place)
    note = ""
    if table.positions is None:
        note = table.position_note
    elif position_row is None:
        note = (
            f"There is no position row for place {request.place + 1:,}: the table has "
            f"{table.positions.shape[0]:,} rows."
        )
    combined = None if position_row is None else row + position_row
    return RowAnswer(table.token(request.token_id), request.place, row, position_row, combined, note)


ROW = Kind("row", Lane.QUICK, token_row)


# ----- neighbours -------------------------------------------------------------------------------
@dataclass(frozen=True)
class NeighboursRequest:
    query: str | int
    k: int


@dataclass(frozen=True)
class NeighboursAnswer:
    result: NeighbourResult
    baseline: float
    # What a person would type to look each neighbour up (WordPiece's "##" is not typed).
    typed: tuple[str, ...]
    map_query: tuple[float, float] | None = None
    map_neighbours: tuple[tuple[float, float], ...] = field(default_factory=tuple)


def nearest_rows(ctx: JobContext, request: NeighboursRequest) -> NeighboursAnswer:
    table = ctx.session.table
    result = table.neighbours(request.query, request.k)
    typed = tuple(typed_form(table, n.id) for n in result.neighbours)
    on_map = ctx.session.derived.get(MAP_KEY)
    if not isinstance(on_map, FamilyMap) or result.query is None:
        return NeighboursAnswer(result, table.baseline_cosine, typed)
    ids = [result.query.id] + [n.id for n in result.neighbours]
    coords = on_map.projection.apply(table.rows[ids])
    return NeighboursAnswer(
        result,
        table.baseline_cosine,
        typed,
        (float(coords[0, 0]), float(coords[0, 1])),
        tuple((float(x), float(y)) for x, y in coords[1:]),
    )


def typed_form(table: EmbeddingTable, token_id: int) -> str:
    """What a person would type to get this token back (WordPiece's "##" is not typed)."""
    text = table.vocabulary.text_of(token_id).encode("utf-8", "replace").decode("utf-8")
    if not table.vocabulary.byte_level and text.startswith("##") and len(text) > 2:
        return text[2:]
    return text


NEIGHBOURS = Kind("neighbours", Lane.QUICK, nearest_rows)


# ----- the cosine of two words ------------------------------------------------------------------
@dataclass(frozen=True)
class CosineRequest:
    first: str | int
    other: str


@dataclass(frozen=True)
class CosineAnswer:
    a: str
    b: str
    cosine: float
    baseline: float
    note: str = ""


def cosine_of(ctx: JobContext, request: CosineRequest) -> CosineAnswer:
    table = ctx.session.table
    a, b = table.query(request.first), table.query(request.other)
    return CosineAnswer(a.token, b.token, table.cosine(a.id, b.id), table.baseline_cosine, b.note)


COSINE = Kind("cosine", Lane.QUICK, cosine_of)


# ----- the family map ---------------------------------------------------------------------------
@dataclass(frozen=True)
class MapRequest:
    families: str | Families | None  # a file, the families themselves, or None for the chapter's
    multi_token: str = "average"


def draw_family_map(ctx: JobContext, request: MapRequest) -> FamilyMap:
    table = ctx.session.table
    chosen = request.families if isinstance(request.families, dict) else load_families(request.families)
    ctx.check()
    answer = family_map(table, chosen, request.multi_token)
    ctx.session.derived[MAP_KEY] = answer
    return answer


MAP = Kind("map", Lane.LONG, draw_family_map)
