"""A note about a word of several tokens names the word that was read: the text its pieces spell.

Asked on the command line on the GPT-2-shaped table: `neighbours '"🙂"'` said "'\"🙂\"' is 2 tokens"
(the quotes only say "read as typed"), and `neighbours '  river bank'` said "'river bank' is 3 tokens
(_ _river _bank)": the spaces were read, and then left out of the word the note named.
"""

from __future__ import annotations

import ast

import pytest

from embedexplorer.core.common.errors import QueryError
from embedexplorer.core.tables.spelling import word_or_first_token, word_token
from tests.gpt2_fixture import build_gpt2_tokenizer


def _named(note: str) -> str:
    """The word a note names first (a Python literal in quotes, as the note writes it)."""
    end = note.index(" is ")
    return ast.literal_eval(note[:end])


@pytest.mark.parametrize(
    "typed", ['"🙂"', "  river bank", "  river bank  ", '" Paris is"', "unbelievability", "river bank", "river bank  "]
)
def test_the_note_names_what_its_pieces_spell(gpt2_table, typed: str) -> None:  # type: ignore[no-untyped-def]
    hf = build_gpt2_tokenizer()
    answer = word_or_first_token(gpt2_table, typed)
    assert answer.note is not None and len(answer.pieces) > 1
    ids = [piece.id for piece in answer.pieces]
    # GPT-2's own tokenizer spells the pieces back: that text is the word the note names, but for the
    # space the app puts before a word typed without one (the word as it reads inside a sentence).
    spelt = hf.decode(ids)
    assert hf.encode(spelt) == ids
    added = not typed.startswith((" ", '"'))
    assert _named(answer.note) == (spelt.removeprefix(" ") if added else spelt), answer.note
    with pytest.raises(QueryError) as refused:  # one token needed: the refusal names the same word
        word_token(gpt2_table, typed)
    assert _named(str(refused.value)) == _named(answer.note)
