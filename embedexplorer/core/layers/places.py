"""Which token of a text a layers question follows: checked against the table first, then the model."""

from __future__ import annotations

from ..common.errors import PlaceError, QueryError, TextTooLongError
from ..tables.embedding_table import EmbeddingTable
from ..text.texts import Token
from .answers import LayerRunner, PlacedToken


def check_place(table: EmbeddingTable, text: str, place: int) -> list[Token]:
    """The text's tokens, once ``place`` is known to be one of them and the text not too long.

    Needs only the table, so a mistake is reported before the whole model is loaded;
    ``place_token`` checks again with the model's special tokens counted.
    """
    tokens = table.encode(text)
    if not tokens:
        shown = "an empty text" if not text.strip() else repr(text)
        raise QueryError(f"There is no token in {shown}; type a word.")
    limit = _max_positions_in(table.config)
    if limit is not None and len(tokens) > limit:
        raise TextTooLongError(
            f"The text is {len(tokens):,} tokens, but the model has positions for only {limit:,}: "
            f"there is no row for position {limit + 1:,}. Shorten the text."
        )
    if not 1 <= place <= len(tokens):
        raise PlaceError(
            f"Place {place} is outside the text: {text!r} has {len(tokens)} token(s), places 1 to {len(tokens)}."
        )
    return tokens


def _max_positions_in(config: dict[str, object]) -> int | None:
    for key in ("n_positions", "max_position_embeddings"):
        value = config.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def place_token(table: EmbeddingTable, model: LayerRunner, text: str, place: int) -> tuple[PlacedToken, list[int]]:
    """The token at ``place`` (from 1) of ``text`` and the ids the model reads for the text."""
    tokens = check_place(table, text, place)
    ids, places = model.model_input([t.id for t in tokens])
    limit = model.max_positions
    if limit is not None and len(ids) > limit:
        extra = len(ids) - len(places)
        with_specials = f" ({len(ids):,} with the model's {extra} special token(s))" if extra else ""
        raise TextTooLongError(
            f"The text is {len(tokens):,} tokens{with_specials}, but the model has positions for only "
            f"{limit:,}: there is no row for position {limit + 1:,}. Shorten the text."
        )
    position = places[place - 1]
    return PlacedToken(text, place, tokens[place - 1], position, len(tokens)), ids


def find_place(table: EmbeddingTable, text: str, token_id: int) -> int | None:
    """The first place (from 1) of ``token_id`` in ``text``, or None."""
    for place, token in enumerate(table.encode(text), start=1):
        if token.id == token_id:
            return place
    return None
