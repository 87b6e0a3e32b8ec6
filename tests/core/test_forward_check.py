"""The frozen app's forward check: BERT's classes over the bundled MiniLM, offline."""

from __future__ import annotations

import json

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from embedexplorer.core.layers import forward_check
from embedexplorer.core.sources.resolve import bundled_model_dir


def _input_vector(weights: dict[str, np.ndarray], ids: list[int], place: int) -> np.ndarray:
    """What enters layer 1, computed by hand: word + position + token type rows, then LayerNorm."""
    prefix = "embeddings."
    summed = (
        weights[prefix + "word_embeddings.weight"][ids[place]]
        + weights[prefix + "position_embeddings.weight"][place]
        + weights[prefix + "token_type_embeddings.weight"][0]
    ).astype(np.float64)
    normed = (summed - summed.mean()) / np.sqrt(summed.var() + 1e-12)
    return normed * weights[prefix + "LayerNorm.weight"] + weights[prefix + "LayerNorm.bias"]


def test_the_check_runs_minilm_forward_and_its_input_cosine_matches_a_hand_computation(capsys) -> None:
    assert forward_check.main() == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["ok"] and report["layers"] == 6 and report["same_id"]
    folder = bundled_model_dir()
    weights = load_file(str(folder / "model.safetensors"))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    vectors = []
    for sentence in forward_check.SENTENCES:
        encoding = tokenizer.encode(sentence)
        vectors.append(_input_vector(weights, encoding.ids, encoding.tokens.index("bank")))
    a, b = vectors
    expected = float(a @ b / np.sqrt((a @ a) * (b @ b)))
    assert abs(report["cosine_input"] - expected) < 1e-5
    assert report["cosine_last"] < expected
