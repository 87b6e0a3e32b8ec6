"""The table's own questions: open a model, split a text, show a row, neighbours, cosine, the map.

Each job unpacks its request, calls the engine and returns the engine's own result
types (``TableFacts``, ``TokenReport``, ``NeighbourResult``, ``FamilyMap``), with only
what the window needs on top.  Rows cross the thread as numpy copies, never as views
of the memory-mapped file.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .base import JobContext, Kind, Lane, Session

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows; the maps and the
    # layers only when a job needs them (a one-shot neighbours does not)
    from ..core.layers.layer_input import Recipe
    from ..core.maps.family_map import Families, FamilyMap
    from ..core.maps.selection_marks import SelectionMarks
    from ..core.maps.word_maps import WordMap
    from ..core.tables.embedding_table import EmbeddingTable, NeighbourResult, TableFacts
    from ..core.text.texts import Token, TokenReport

# How many chips the token pane shows at most; the report's note says how many were left out.
MAX_CHIPS = 512
# Where the recipe of what enters layer 1 lives in ``Session.derived``.
RECIPE_KEY = "layer_recipe"


# ----- open a model -----------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadRequest:
    spec: str  # what the user typed: folder, model file, Hub id, "bundled"; "" for the default
    allow_download: bool = False
    whole_model: bool = False  # download every weight (for the layers), not only the embedding table


@dataclass(frozen=True)
class LoadedModel:
    name: str
    facts: TableFacts
    byte_level: bool
    seconds: float


def load_model(ctx: JobContext, request: LoadRequest) -> LoadedModel:
    from ..core.tables.opening import open_table

    started = time.perf_counter()
    # The tokenizer runs in a child process: building it in this process would hold the
    # GIL for ~90 ms (GPT-2) and freeze the window for that long.
    table = open_table(
        request.spec or None,
        allow_download=request.allow_download,
        progress=ctx.progress,
        separate_tokenizer=True,
        whole_model=request.whole_model,
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
    """A token's row and, computed from the model's own tensors, what enters its first layer.

    ``combined`` is what enters layer 1 (for BERT-style models after the token-type row
    and the LayerNorm), None when it cannot be computed; ``position_index`` is the
    position table's own row for ``place`` ([CLS] first moves it by one); ``recipe`` says
    in one sentence how the model builds the sum and what is left out.
    """

    token: Token
    place: int
    row: np.ndarray
    position_row: np.ndarray | None = None
    combined: np.ndarray | None = None
    note: str = ""
    position_index: int | None = None
    type_row: np.ndarray | None = None
    normalised: bool = False
    recipe: str = ""
    recipe_short: str = ""

    def place_text(self) -> str:
        """ "place 1, position-table row 1": both counted from 1, as the chapter counts."""
        from ..core.tables.position_rows import place_and_row

        return place_and_row(self.place, self.position_index)


def layer_recipe(session: Session, table: EmbeddingTable) -> Recipe:
    """How the open model builds what enters layer 1, read from its files once."""
    from ..core.layers.layer_input import Recipe, recipe_for

    found = session.derived.get(RECIPE_KEY)
    if not isinstance(found, Recipe):
        found = recipe_for(table)
        session.derived[RECIPE_KEY] = found
    return found


def token_row(ctx: JobContext, request: RowRequest) -> RowAnswer:
    from ..core.layers.layer_input import layer_input

    table = ctx.session.table
    recipe = layer_recipe(ctx.session, table)
    sums = layer_input(table, recipe, request.token_id, request.place)
    return RowAnswer(
        token=table.token(request.token_id),
        place=request.place,
        row=sums.token_row,
        position_row=sums.position_row,
        combined=sums.enters,
        note=sums.note,
        position_index=sums.position_index,
        type_row=sums.type_row,
        normalised=sums.normalised,
        recipe=recipe.describe(table.positions is not None),
        recipe_short=recipe.short(table.positions is not None),
    )


ROW = Kind("row", Lane.QUICK, token_row)


# ----- neighbours -------------------------------------------------------------------------------
@dataclass(frozen=True)
class NeighboursRequest:
    """The ``k`` nearest rows of ``query``; placed on ``on_map`` too when the asker shows that map."""

    query: str | int
    k: int
    on_map: FamilyMap | WordMap | None = field(default=None, compare=False)
    # The baseline reads 20,000 sampled rows: an asker that shows none (the command line) skips it.
    with_baseline: bool = True


@dataclass(frozen=True)
class NeighboursAnswer:
    result: NeighbourResult
    baseline: float  # NaN when the request asked for none
    # What a person would type to look each neighbour up (WordPiece's "##" is not typed).
    typed: tuple[str, ...]
    # The star and rings on the asker's map (``core/maps/selection_marks.py``); None when it showed none.
    marks: SelectionMarks | None = None


def nearest_rows(ctx: JobContext, request: NeighboursRequest) -> NeighboursAnswer:
    table = ctx.session.table
    result = table.neighbours(request.query, request.k)
    typed = tuple(typed_form(table, n.id) for n in result.neighbours)
    on_map = request.on_map
    baseline = table.baseline_cosine if request.with_baseline else math.nan
    if result.query is None or on_map is None:
        return NeighboursAnswer(result, baseline, typed)
    from ..core.maps.selection_marks import mark_selection

    return NeighboursAnswer(result, baseline, typed, mark_selection(table, result, on_map))


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
    # The baseline reads 20,000 sampled rows: an answer that does not show it (--json) skips it.
    with_baseline: bool = True


@dataclass(frozen=True)
class CosineAnswer:
    a: str
    b: str
    cosine: float
    baseline: float  # NaN when the request asked for none
    note: str = ""  # how a typed word became its token, when that took more than one token
    a_id: int = -1
    b_id: int = -1
    b_tokens: int = 1  # how many tokens the typed word is (its first answers)

    @property
    def line(self) -> str:
        """The answer as one plain line, the number first, naming both tokens used (``spelling.token_used``)."""
        from ..core.text.texts import fixed

        first = f"{self.a} (id {self.a_id:,})" if self.a_id >= 0 else self.a
        which = f", first of {self.b_tokens} tokens" if self.b_tokens > 1 else ""
        second = f"{self.b} (id {self.b_id:,}{which})" if self.b_id >= 0 else self.b
        note = f" {self.note}" if self.note else ""
        return (
            f"{self.cosine:.3f} = cosine({first}, {second}); unrelated tokens: {fixed(self.baseline, 3)}.{note}"
        )


def cosine_of(ctx: JobContext, request: CosineRequest) -> CosineAnswer:
    """The cosine of the selected token's row and a typed word's, the word read by the window's one rule."""
    from ..core.tables.spelling import word_or_first_token

    table = ctx.session.table
    read = word_or_first_token
    a = table.query(request.first) if isinstance(request.first, int) else read(table, request.first)
    b = read(table, request.other)
    # A typed first word (the command line's) says how it was read too; a selected token needs no note.
    note = " ".join(q.note for q in (a, b) if q.note) if isinstance(request.first, str) else b.note
    return CosineAnswer(
        a.token, b.token, table.cosine(a.id, b.id), table.baseline_cosine if request.with_baseline else math.nan,
        note, a.id, b.id, len(b.pieces),
    )  # fmt: skip


COSINE = Kind("cosine", Lane.QUICK, cosine_of)


# ----- the family map ---------------------------------------------------------------------------
@dataclass(frozen=True)
class MapRequest:
    families: str | Families | None  # a file, the families themselves, or None for the chapter's
    multi_token: str = "average"


def draw_family_map(ctx: JobContext, request: MapRequest) -> FamilyMap:
    from ..core.maps.family_map import family_map, load_families
    from ..core.maps.map_origin import with_provenance

    table = ctx.session.table
    chosen = request.families if isinstance(request.families, dict) else load_families(request.families)
    ctx.check()
    answer = family_map(table, chosen, request.multi_token)
    # Where the map came from, for its exports: the table file is hashed once, then cached.
    answer = with_provenance(answer, table, request.multi_token, ctx.check, ctx.progress)
    return answer


MAP = Kind("map", Lane.LONG, draw_family_map)
