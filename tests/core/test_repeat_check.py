"""The repeat check against transformers' own logits (the oracle): P(token) after the repeat prompt.

The probability the app reports must be ``torch.softmax(model(ids).logits[0, -1], -1)[token]`` with
the model built by transformers directly, for the GPT-2-shaped fixture (head tied to the table) and a
small Llama with a head of its own; the token goes in by id, so an unreachable one is checked too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from embedexplorer import open_table
from embedexplorer.core.health.repeat_check import AFTER, BEFORE, repeat_prompts, unavailable_reason
from embedexplorer.core.layers.loading import load_layer_model

# Ordinary words, a byte token, and GPT-2's <|endoftext|> (which no text produces).
TOKENS = (464, 3139, 220, 188, 50256, 30898, 42089, 1)


def _encode(table):  # type: ignore[no-untyped-def]
    return lambda text: [t.id for t in table.encode(text)]


def _oracle(folder: Path, prompts: list[list[int]], tokens: tuple[int, ...]) -> np.ndarray:
    full = AutoModelForCausalLM.from_pretrained(str(folder), use_safetensors=True).eval()
    found = []
    with torch.inference_mode():
        for ids, token in zip(prompts, tokens, strict=True):
            logits = full(torch.tensor([ids])).logits
            found.append(float(torch.softmax(logits[0, -1], -1)[token]))
    return np.array(found)


@pytest.mark.parametrize("fixture", ["gpt2_folder", "llama_folder"])
def test_the_probability_is_the_models_own(fixture: str, request: pytest.FixtureRequest) -> None:
    folder = request.getfixturevalue(fixture)
    table = open_table(str(folder))
    model = load_layer_model(folder, name=fixture)
    prompts = repeat_prompts(_encode(table), model.prefix, TOKENS)
    # The token sits between the words' own tokens, inserted by id.
    before = len(model.prefix) + len(table.encode(BEFORE))
    assert [p[before] for p in prompts] == list(TOKENS)
    assert all(len(p) == before + 1 + len(table.encode(AFTER)) for p in prompts)
    got = model.repeat_probabilities(prompts, TOKENS, batch=3)
    want = _oracle(folder, prompts, TOKENS)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-9)
    assert len(set(np.round(got, 12))) > 1  # a probability per token, not one number repeated


def test_the_check_is_not_for_a_model_without_a_next_token_head(tmp_path: Path) -> None:
    from embedexplorer.core.sources.resolve import bundled_model_dir

    sentence = unavailable_reason(bundled_model_dir())
    assert sentence is not None and "next-token head" in sentence
    assert unavailable_reason(tmp_path / "absent") is not None
