"""Two texts side by side: "bank" in "the river bank" and "my bank account"."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embedexplorer.core.common.errors import QueryError
from embedexplorer.core.exercises.two_texts import compare, find_word
from embedexplorer.core.layers.layer_input import recipe_for
from tests.gpt2_fixture import gpt2_bpe_files

RIVER, ACCOUNT, START = "the river bank", "my bank account", "bank account"


def test_same_token_same_row_different_position(gpt2_table) -> None:
    recipe = recipe_for(gpt2_table)
    place_a, place_b = find_word(gpt2_table, RIVER, "bank"), find_word(gpt2_table, ACCOUNT, "bank")
    assert (place_a, place_b) == (2, 1)
    result = compare(gpt2_table, recipe, RIVER, place_a, ACCOUNT, place_b)
    encoder = json.loads(gpt2_bpe_files()[0].read_text(encoding="utf-8"))
    assert result.same_id and result.first.token.id == encoder["Ġbank"] == 3331
    assert result.row_cosine == 1.0
    assert result.verdict().startswith("Same token id 3,331 (_bank): the same table row, cosine 1.000.")
    a, b = result.first.input, result.second.input
    np.testing.assert_array_equal(a.token_row, b.token_row)
    assert (a.position_index, b.position_index) == (2, 1)
    # The two sums differ by exactly the difference of the two position rows.
    np.testing.assert_allclose(a.enters - b.enters, gpt2_table.positions[2] - gpt2_table.positions[1], atol=1e-6)
    expected = float(a.enters @ b.enters / np.linalg.norm(a.enters) / np.linalg.norm(b.enters))
    assert result.sum_cosine == pytest.approx(expected, abs=1e-6)


def test_gpt2_spells_bank_at_the_start_as_another_token(gpt2_table) -> None:
    result = compare(gpt2_table, recipe_for(gpt2_table), RIVER, 2, START, 0)
    encoder = json.loads(gpt2_bpe_files()[0].read_text(encoding="utf-8"))
    assert (result.first.token.id, result.second.token.id) == (encoder["Ġbank"], encoder["bank"]) == (3331, 17796)
    assert not result.same_id
    unit = gpt2_table.unit
    assert result.row_cosine == pytest.approx(float(unit[3331] @ unit[17796]), abs=1e-6)
    verdict = result.verdict()
    assert "' bank' (id 3,331) is the word inside a sentence" in verdict
    assert "'bank' (id 17,796) has no space, as at the start of a text" in verdict


def test_minilm_bank_is_one_token_and_its_sum_is_normalised(minilm_table) -> None:
    recipe = recipe_for(minilm_table)
    result = compare(minilm_table, recipe, RIVER, 2, START, 0)
    assert result.same_id and result.row_cosine == 1.0
    assert (result.first.input.position_index, result.second.input.position_index) == (3, 1)  # [CLS] first
    assert result.first.input.normalised and result.second.input.normalised


def test_bad_places_and_empty_texts_are_one_message(minilm_table) -> None:
    recipe = recipe_for(minilm_table)
    with pytest.raises(QueryError, match="has 3 token"):
        compare(minilm_table, recipe, RIVER, 3, START, 0)
    with pytest.raises(QueryError, match="type a text in each box"):
        compare(minilm_table, recipe, RIVER, 0, "   ", 0)
    assert find_word(minilm_table, RIVER, "money") is None
    assert find_word(minilm_table, RIVER, " ") is None


def test_a_table_without_position_rows_does_not_call_two_places_the_same(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A GGUF of a rotary model has no position table: " bank" at place 3 and at place 2 get the same row and the
    same sum, and the verdict says why (no position rows), not that the two stand at the same place."""
    from gguf.constants import GGMLQuantizationType as Q

    from embedexplorer import open_table

    from ..gguf_fixture import gpt2_vocabulary, write_gguf

    tokens, merges = gpt2_vocabulary()
    rows = np.random.default_rng(4).standard_normal((len(tokens), 16)).astype(np.float16)
    table = open_table(str(write_gguf(tmp_path / "rotary.gguf", rows, Q.F16, tokens=tokens, merges=merges)))
    assert table.positions is None
    result = compare(table, recipe_for(table), RIVER, 2, ACCOUNT, 1)
    assert result.same_id and not result.has_positions
    assert result.first.input.enters is not None
    np.testing.assert_array_equal(result.first.input.enters, result.second.input.enters)
    verdict = result.verdict()
    assert verdict.startswith("Same token id 3,331 (_bank): the same table row, cosine 1.000.")
    assert "no position rows" in verdict and "same place" not in verdict
