"""A layers question checked before the whole model loads: the same checks for the window and the command line."""

from __future__ import annotations

from ..common.errors import QueryError
from ..tables.embedding_table import EmbeddingTable
from ..text.texts import Token
from .places import check_place, find_place


def check_layers_question(
    table: EmbeddingTable,
    text: str,
    place: int,
    compare_text: str | None = None,
    compare_place: int | None = None,
    how_to_choose: str = "choose the place of the token to compare with",
) -> tuple[Token, tuple[str, int] | None]:
    """The token at ``place`` (from 1) of ``text`` and the (text, place) to compare it with, or a QueryError.

    Without ``compare_place`` the compared token is the first of ``compare_text`` with the same
    id; ``how_to_choose`` says how the asker picks another place (a field, or a flag).
    """
    if compare_place is not None and compare_text is None:
        raise QueryError("A place to compare with needs a second text.")
    chosen = check_place(table, text, place)[place - 1]
    if compare_text is None:
        return chosen, None
    other = compare_place or find_place(table, compare_text, chosen.id)
    if other is None:
        raise QueryError(f"{chosen.token} is not a token of {compare_text!r}: {how_to_choose}.")
    check_place(table, compare_text, other)
    return chosen, (compare_text, other)


def layers_unavailable(table: EmbeddingTable) -> str | None:
    """Why the whole model behind ``table`` cannot be run through its layers here, known from how it was read
    (None when the model may run: its folder is looked at when it loads)."""
    if table.from_gguf:
        return (
            "Through the layers runs the whole model from a folder of safetensors weights; a GGUF file's "
            "layers are not run here, only its table is read."
        )
    return None
