"""Encoder-decoder models (T5, BART) through the layers: their encoder runs, the half that reads the table.

T5 saved whole, T5's encoder saved alone (as image models ship their text encoder: its config says
is_encoder_decoder false) and BART saved whole. The oracle is transformers' own encoder on the same
weights: every hidden state it gives equals ours, and its last one (after the encoder's final norm)
is that norm applied to our last (the last block's own output, as for every other model here).
The command line tells the layers of each, where it once printed transformers' ValueError.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from embedexplorer.core.layers import output_head as oh
from embedexplorer.core.layers.loading import load_layer_model

from .test_sources import run_cli

TEXT = "the river bank"
IDS = [1169, 7850, 3331]  # GPT-2's tokenizer, which the tiny models below borrow


def _t5_whole(folder: Path) -> None:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(5)
    config = T5Config(vocab_size=50257, d_model=64, d_ff=128, num_layers=3, num_decoder_layers=2, num_heads=4, d_kv=16)
    T5ForConditionalGeneration(config).save_pretrained(folder)


def _bart_whole(folder: Path) -> None:
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    torch.manual_seed(6)
    config = BartConfig(
        vocab_size=50257, d_model=64, encoder_layers=3, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=128,
    )  # fmt: skip
    BartForConditionalGeneration(config).save_pretrained(folder)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, gpt2_folder: Path) -> dict[str, Path]:
    from transformers import T5EncoderModel

    root = tmp_path_factory.mktemp("encoder-decoder")
    made = {"t5": root / "t5", "bart": root / "bart", "t5-encoder": root / "t5-encoder"}
    _t5_whole(made["t5"])
    _bart_whole(made["bart"])
    T5EncoderModel.from_pretrained(made["t5"]).save_pretrained(made["t5-encoder"])
    for folder in made.values():
        shutil.copy(gpt2_folder / "tokenizer.json", folder / "tokenizer.json")
    return made


def _oracle(folder: Path, name: str) -> tuple[list[np.ndarray], np.ndarray, object]:
    """transformers' encoder on the folder's weights: its hidden states, its last hidden state, its final norm."""
    import torch
    import transformers

    whole = transformers.T5EncoderModel if name.startswith("t5") else transformers.BartModel
    model = whole.from_pretrained(folder).eval()
    encoder = model.get_encoder()
    with torch.inference_mode():
        out = encoder(torch.tensor([IDS]), output_hidden_states=True)
    states = [h[0].double().numpy() for h in out.hidden_states]
    norm = getattr(encoder, "final_layer_norm", None) or getattr(encoder, "layer_norm", None)
    return states, out.last_hidden_state[0].double().numpy(), norm


@pytest.mark.parametrize("name", ["t5", "t5-encoder", "bart"])
def test_the_encoders_layers_are_transformers_own(folders: dict[str, Path], name: str) -> None:
    import torch

    model = load_layer_model(folders[name])
    ours = model.hidden_states(IDS).astype(np.float64)
    states, last, norm = _oracle(folders[name], name)
    assert ours.shape[0] == len(states) == 4  # the input and the encoder's three layers, not the decoder's two
    assert model.layers == 3
    for layer in range(3):
        np.testing.assert_allclose(ours[layer], states[layer], rtol=0, atol=1e-5)
    if norm is not None:  # T5: the encoder's final norm, applied to our last vector, gives its last hidden state
        with torch.inference_mode():
            normed = norm(torch.from_numpy(ours[-1]).float()).double().numpy()
        np.testing.assert_allclose(normed, last, rtol=0, atol=1e-5)
    else:  # BART's encoder ends with its last layer's own norm: the last state is the last block's output
        np.testing.assert_allclose(ours[-1], last, rtol=0, atol=1e-5)


@pytest.mark.parametrize(("name", "kind"), [("t5", oh.DECODER), ("t5-encoder", oh.NONE), ("bart", oh.DECODER)])
def test_the_head_is_named_for_what_the_folder_holds(folders: dict[str, Path], name: str, kind: str) -> None:
    assert oh.describe(folders[name]).kind == kind
    assert load_layer_model(folders[name]).head_kind == kind


@pytest.mark.parametrize("name", ["t5", "t5-encoder", "bart"])
def test_the_command_line_tells_the_encoders_layers(folders: dict[str, Path], name: str) -> None:
    folder = folders[name]
    found = run_cli("layers", TEXT, "--place", "3", "--json", "--model", str(folder))
    assert found.returncode == 0, found.stderr
    layers = json.loads(found.stdout)
    states, _last, _norm = _oracle(folder, name)
    assert [row["layer"] for row in layers] == [0, 1, 2, 3]
    # The token's vector at each layer, as transformers computes it (the last before the final norm, as above).
    ours = load_layer_model(folder).hidden_states(IDS)[:, 2, :].astype(np.float64)
    assert [row["length"] for row in layers] == pytest.approx(np.linalg.norm(ours, axis=1).tolist(), rel=1e-5)
    assert layers[1]["length"] == pytest.approx(float(np.linalg.norm(states[1][2])), rel=1e-5)
    assert all(row["guess"] == [] for row in layers)
    said = run_cli("layers", TEXT, "--place", "3", "--model", str(folder))
    assert said.returncode == 0, said.stderr
    expected = "no output head (an encoder saved without one)" if name == "t5-encoder" else "guesses from its decoder"
    assert expected in said.stdout
