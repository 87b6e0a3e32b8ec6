"""What a map marks for the selected token: its star, and a ring at each of its nearest rows the map holds, named.

One rule for both front doors: the window's map pane draws these marks (and its exports carry
them), and ``embedexplorer map --select`` draws the same ones into its pictures and page.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..common.errors import QueryError
from ..tables.answers import NeighbourResult, Query
from ..tables.embedding_table import EmbeddingTable
from .family_map import FamilyMap
from .web_page import Selected
from .word_maps import WordMap

Place = tuple[float, float]


@dataclass(frozen=True)
class Ring:
    """One of the selected token's nearest rows, ringed where the map places it."""

    token_id: int
    token: str  # its readable form, which the ring's label and tip show
    at: Place


@dataclass(frozen=True)
class SelectionMarks:
    """The star and rings of the selected token on one map.

    ``at`` is None when the map cannot place the token (a t-SNE or UMAP map holds only its own rows):
    then nothing is marked and ``missing`` says why in one sentence.
    """

    token_id: int
    token: str
    at: Place | None
    rings: tuple[Ring, ...] = ()
    missing: str = ""

    @property
    def places(self) -> list[Place]:
        return [ring.at for ring in self.rings]

    @property
    def names(self) -> list[str]:
        return [ring.token for ring in self.rings]

    def selected(self) -> Selected | None:
        """The marks as a web page draws them; None when there is no star."""
        if self.at is None:
            return None
        return Selected(self.token, self.at, tuple((ring.at, ring.token) for ring in self.rings))


def mark_selection(table: EmbeddingTable, result: NeighbourResult, on_map: FamilyMap | WordMap) -> SelectionMarks:
    """The star of ``result``'s query and the rings of its neighbours that ``on_map`` places, in their order.

    A family map and a PCA map place any row; t-SNE and UMAP only the rows they were made from, so
    a neighbour off such a map gets no ring, and a query off it no star (and no rings).
    """
    query = result.query
    if query is None:
        raise QueryError("Only a token's neighbours can be marked on the map, not a vector's.")
    ids = [query.id] + [n.id for n in result.neighbours]
    places = _places(table, on_map, ids)
    if places[0] is None:
        return SelectionMarks(query.id, query.token, None, (), _not_on_map(query, on_map))
    rings = tuple(
        Ring(n.id, n.token, place) for n, place in zip(result.neighbours, places[1:], strict=True) if place is not None
    )
    return SelectionMarks(query.id, query.token, places[0], rings)


def _places(table: EmbeddingTable, on_map: FamilyMap | WordMap, ids: list[int]) -> list[Place | None]:
    if isinstance(on_map, FamilyMap):
        coords = on_map.projection.apply(table.rows_at(ids))
        return [(float(x), float(y)) for x, y in coords]
    return on_map.locate(table, ids)


def _not_on_map(query: Query, on_map: FamilyMap | WordMap) -> str:
    name = on_map.layout.name if isinstance(on_map, WordMap) else "PCA"
    return (
        f"{query.token} (id {query.id:,}) is not on this {name} map, which places only the rows it was made from: "
        "select one of them, or draw a PCA map, to see its star."
    )


def selected_token(table: EmbeddingTable, text: str) -> Query:
    """The token the Text box selects for ``text``: its first, as the tokenizer reads exactly these characters.

    On GPT-2 "Paris" is the token that starts a text and " Paris" the word inside a sentence, as
    typed into the Text box; a word of several tokens selects its first (the first chip), and the
    note says so. A word the vocabulary has no token for is refused: its unknown token would stand
    for every character the vocabulary lacks, not for the word.
    """
    query = table.query(text)  # "There is no token in an empty text; type a word." for no token
    unknown = table.vocabulary.unknown_id
    if unknown is not None and query.id == unknown:
        raise QueryError(
            f"The vocabulary has no token for {text.strip()!r}: the tokenizer reads it as {query.token}, the one row "
            "of every character it lacks, so there is no token of its own to select."
        )
    if len(query.pieces) > 1:
        shown = " ".join(piece.token for piece in query.pieces)
        note = f"{text!r} is {len(query.pieces)} tokens ({shown}); the first, {query.token}, is the one selected."
        return Query(query.id, query.token, query.pieces, note)
    return Query(query.id, query.token, query.pieces)
