"""Honest sums: what enters layer 1, from the tables in numpy, equals the model's own first hidden state."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from embedexplorer import open_table
from embedexplorer.core.layers.layer_input import layer_input, recipe_for


def torch_first_hidden_states(folder: Path, text: str) -> np.ndarray:
    """hidden_states[0] of the model itself, with the tokenizer's own special tokens."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(str(folder)).eval()
    encoded = AutoTokenizer.from_pretrained(str(folder))(text, return_tensors="pt")
    with torch.no_grad():
        return model(**encoded, output_hidden_states=True).hidden_states[0][0].numpy()


def test_minilm_adds_token_type_puts_cls_first_and_normalises(minilm_table) -> None:
    recipe = recipe_for(minilm_table)
    assert recipe.leading == ("[CLS]",) and recipe.token_type is not None and recipe.norm_weight is not None
    assert recipe.known and not recipe.left_out
    text = "the river bank"
    expected = torch_first_hidden_states(minilm_table.folder, text)
    for place, token in enumerate(minilm_table.encode(text)):
        sums = layer_input(minilm_table, recipe, token.id, place)
        assert sums.position_index == place + 1  # [CLS] stands at row 0
        assert sums.normalised
        np.testing.assert_allclose(sums.enters, expected[place + 1], atol=2e-6)
    first = layer_input(minilm_table, recipe, minilm_table.query("the").id, 0)
    # Rows counted from 1, as places are: [CLS] takes row 1, so place 1 reads row 2.
    assert first.place_text() == "place 1, position-table row 2"
    assert first.steps == (f"token row {first.token_id:,}", "position row 2", "token-type row 0")
    description = recipe.describe(has_positions=True)
    assert "LayerNorm(token row + position row + token-type row 0)" in description
    assert "first word stands at position-table row 2" in description


def test_gpt2_adds_token_row_and_position_row_only(gpt2_table, gpt2_folder) -> None:
    recipe = recipe_for(gpt2_table)
    assert recipe.leading == () and recipe.token_type is None and recipe.norm_weight is None and recipe.known
    assert recipe.describe(has_positions=True) == "What enters layer 1: token row + position row."
    text = "The capital of France is"
    expected = torch_first_hidden_states(gpt2_folder, text)
    for place, token in enumerate(gpt2_table.encode(text)):
        sums = layer_input(gpt2_table, recipe, token.id, place)
        assert sums.position_index == place
        np.testing.assert_array_equal(sums.enters, sums.token_row + gpt2_table.positions[place])
        np.testing.assert_allclose(sums.enters, expected[place], atol=1e-6)
    # Places and position-table rows both count from 1: GPT-2's place 4 reads row 4.
    assert layer_input(gpt2_table, recipe, 4881, 3).place_text() == "place 4, position-table row 4"


def test_a_place_past_the_position_table_says_so(minilm_table, gpt2_table) -> None:
    beyond = layer_input(minilm_table, recipe_for(minilm_table), 2000, 511)  # [CLS] first: needs row 513 of 512
    assert beyond.enters is None and beyond.position_row is None
    assert "no position row for place 512" in beyond.note and "position-table row 513;" in beyond.note
    last = layer_input(gpt2_table, recipe_for(gpt2_table), 464, 1023)
    assert last.enters is not None and last.position_index == 1023


def _tiny_model(folder: Path, config) -> Path:  # type: ignore[no-untyped-def]
    """A tiny model of ``config`` with GPT-2's tokenizer, saved as safetensors."""
    import torch
    from transformers import AutoModel

    from tests.gpt2_fixture import build_gpt2_tokenizer

    torch.manual_seed(0)
    AutoModel.from_config(config).save_pretrained(folder)
    build_gpt2_tokenizer().save_pretrained(folder)
    return folder


@pytest.mark.parametrize("kind", ["llama", "gemma"])
def test_rotary_models_send_the_token_row_itself(tmp_path, kind: str) -> None:
    from transformers import GemmaConfig, LlamaConfig

    shape = dict(vocab_size=50_257, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                 num_attention_heads=2, num_key_value_heads=2, head_dim=8)  # fmt: skip
    config = LlamaConfig(**shape) if kind == "llama" else GemmaConfig(**shape)
    folder = _tiny_model(tmp_path / kind, config)
    table = open_table(str(folder))
    try:
        recipe = recipe_for(table)
        assert table.positions is None and recipe.known and not recipe.left_out
        expected = torch_first_hidden_states(folder, "The capital of France")
        for place, token in enumerate(table.encode("The capital of France")):
            sums = layer_input(table, recipe, token.id, place)
            assert sums.position_index is None and sums.position_row is None
            assert "rotat" in sums.note
            np.testing.assert_allclose(sums.enters, expected[place], rtol=1e-5, atol=1e-6)
        assert recipe.scale == (math.sqrt(16) if kind == "gemma" else 1.0)
    finally:
        table.close()


def test_an_unknown_model_type_says_what_may_be_left_out(tmp_path, gpt2_folder) -> None:
    folder = tmp_path / "mystery"
    folder.mkdir()
    for file in gpt2_folder.iterdir():
        (folder / file.name).symlink_to(file)
    (folder / "config.json").unlink()
    config = json.loads((gpt2_folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "mystery"}))
    table = open_table(str(folder))
    try:
        recipe = recipe_for(table)
        assert not recipe.known
        assert any("'mystery'" in step for step in recipe.left_out)
        sums = layer_input(table, recipe, 464, 0)
        assert "Not computed here" in sums.note and "'mystery'" in sums.note
    finally:
        table.close()


def test_a_table_without_positions_says_so_in_sentences(tmp_path: Path) -> None:
    """A GGUF table has no position table: the row's note says so as a sentence of its own (capital first, full
    stop), after the recipe's sentence, as the window shows them one after the other."""
    from gguf.constants import GGMLQuantizationType as Q

    from embedexplorer.core.layers.layer_input import layer_input

    from ..gguf_fixture import write_gguf

    rows = np.random.default_rng(3).standard_normal((40, 64)).astype(np.float32)
    table = open_table(str(write_gguf(tmp_path / "plain.gguf", rows, Q.F32, architecture="gptx")))
    recipe = recipe_for(table)
    sums = layer_input(table, recipe, 5, 0)
    assert table.positions is None
    assert sums.note.startswith("No position table in the weights: the model marks positions another way.")
    for sentence in filter(None, sums.note.split(". ")):
        assert sentence[0].isupper(), sums.note


def test_a_gguf_file_in_another_models_folder_keeps_its_own_recipe(tmp_path: Path, minilm_table) -> None:  # type: ignore[no-untyped-def]
    """A GGUF written into a Hugging Face model's folder (convert_hf_to_gguf.py's habit) is read alone: the
    folder's tokenizer.json ([CLS] first) and safetensors (position and token-type rows) are that model's,
    not the file's, so they are not added to what enters layer 1."""
    import shutil

    from gguf.constants import GGMLQuantizationType as Q

    from ..gguf_fixture import write_gguf

    folder = tmp_path / "minilm"
    shutil.copytree(minilm_table.folder, folder)
    assert recipe_for(open_table(str(folder))).leading == ("[CLS]",)  # the folder's own model
    rows = np.random.default_rng(8).standard_normal((300, 64)).astype(np.float32)
    table = open_table(str(write_gguf(folder / "other.gguf", rows, Q.F32, architecture="gptx")))
    recipe = recipe_for(table)
    assert recipe.leading == () and recipe.token_type is None and recipe.norm_weight is None
    sums = layer_input(table, recipe, 7, 0)
    np.testing.assert_array_equal(sums.enters, rows[7])
    assert "Not computed here" in sums.note
