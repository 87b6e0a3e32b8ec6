"""The model's own guess after every layer, checked against transformers' logits (the oracle).

Two models whose rows differ in length, as trained rows do: GPT-2-shaped with its head tied to
the table, and a small Llama with an output head of its own. At the last layer the guess is
``model(ids).logits``; before it, the same head applied to the layer's vector after the final
norm, computed here with transformers' own modules.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file
from transformers import AutoModelForCausalLM, BertConfig, BertForMaskedLM

from embedexplorer import open_table
from embedexplorer.core.layers import output_head as oh
from embedexplorer.core.layers.layer_model import LayerModel
from embedexplorer.core.layers.loading import load_layer_model
from embedexplorer.core.layers.trace import trace
from embedexplorer.core.sources.resolve import bundled_model_dir

TEXTS = (
    " The river bank was steep and the water ran fast below it",
    " She put her savings in the bank on Monday",
    " The capital of France is Paris, and the capital of Italy is Rome",
)
K = 10


def _places(table, text: str) -> list[int]:  # type: ignore[no-untyped-def]
    return list(range(1, len(table.encode(text)) + 1))


def _oracle(full, ids: list[int]) -> tuple[torch.Tensor, list[torch.Tensor]]:  # type: ignore[no-untyped-def]
    """transformers' own logits for every position, and every layer's hidden states."""
    with torch.inference_mode():
        out = full(torch.tensor([ids]), output_hidden_states=True)
    return out.logits[0], [h[0] for h in out.hidden_states]


def _agreement(table, model: LayerModel, full, final_norm) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Every place of every text: the guess against the logits (must agree), and the cosine-nearest rows
    against the logits (counted: the issue found they agree in few cases once rows differ in length)."""
    counts = {"cases": 0, "guess_top1": 0, "guess_top10": 0, "nearest_top1": 0, "nearest_top10": 0}
    for text in TEXTS:
        ids = [t.id for t in table.encode(text)]
        logits, hidden = _oracle(full, model.model_input(ids)[0])
        for place in _places(table, text):
            answer = trace(table, model, text, place, k=K)
            position = answer.token.position
            want = torch.softmax(logits[position].float(), -1)
            top = torch.topk(want, K)
            last = answer.steps[-1]
            got_ids = [g.id for g in last.guess]
            counts["cases"] += 1
            counts["guess_top1"] += got_ids[0] == int(top.indices[0])
            counts["guess_top10"] += got_ids == top.indices.tolist()
            counts["nearest_top1"] += last.nearest[0].id == int(top.indices[0])
            counts["nearest_top10"] += [n.id for n in last.nearest] == top.indices.tolist()
            assert got_ids == top.indices.tolist(), (text, place)
            np.testing.assert_allclose([g.prob for g in last.guess], top.values.numpy(), atol=1e-5, rtol=0)
            # Earlier layers: the model's own final norm and head on transformers' hidden state.
            for layer in (0, len(hidden) // 2):
                with torch.inference_mode():
                    layer_logits = full.get_output_embeddings()(final_norm(hidden[layer][position]))
                layer_top = torch.topk(torch.softmax(layer_logits.float(), -1), K)
                assert [g.id for g in answer.steps[layer].guess] == layer_top.indices.tolist(), (text, place, layer)
                np.testing.assert_allclose(
                    [g.prob for g in answer.steps[layer].guess], layer_top.values.numpy(), atol=1e-5, rtol=0
                )
    print(f"\nagreement with the model's logits at the last layer: {counts}")
    return counts


@pytest.fixture(scope="module")
def gpt2_varied(gpt2_varied_folder: Path):  # type: ignore[no-untyped-def]
    table = open_table(str(gpt2_varied_folder))
    model = load_layer_model(gpt2_varied_folder, name="gpt2-varied")
    full = AutoModelForCausalLM.from_pretrained(str(gpt2_varied_folder), use_safetensors=True).eval()
    return table, model, full


@pytest.fixture(scope="module")
def llama(llama_folder: Path):  # type: ignore[no-untyped-def]
    table = open_table(str(llama_folder))
    model = load_layer_model(llama_folder, name="llama-untied")
    full = AutoModelForCausalLM.from_pretrained(str(llama_folder), use_safetensors=True).eval()
    return table, model, full


def test_rows_of_the_fixtures_differ_in_length(gpt2_varied, llama) -> None:
    for _table, _, full in (gpt2_varied, llama):
        lengths = full.get_output_embeddings().weight.detach().norm(dim=1).numpy()
        assert lengths.max() / lengths.min() > 5  # as trained rows differ, unlike freshly drawn ones
    assert gpt2_varied[2].config.tie_word_embeddings and not llama[2].config.tie_word_embeddings


def test_gpt2_tied_head_guess_is_the_models_logits(gpt2_varied) -> None:
    table, model, full = gpt2_varied
    assert model.head_kind == oh.TIED
    counts = _agreement(table, model, full, full.transformer.ln_f)
    assert counts["guess_top1"] == counts["guess_top10"] == counts["cases"] >= 30
    # Ranking by cosine is not the model's ranking once rows differ in length (the 9 of 36).
    assert counts["nearest_top10"] < counts["cases"]


def test_llama_own_head_guess_is_the_models_logits(llama) -> None:
    table, model, full = llama
    assert model.head_kind == oh.OWN
    counts = _agreement(table, model, full, full.model.norm)
    assert counts["guess_top1"] == counts["guess_top10"] == counts["cases"] >= 30
    assert counts["nearest_top1"] < counts["cases"]


def test_untied_head_row_cosine_is_the_cosine_of_the_two_rows(llama, llama_folder: Path) -> None:
    table, model, _ = llama
    answer = trace(table, model, TEXTS[0], 3, k=3)
    weights = load_file(str(llama_folder / "model.safetensors"))
    token = answer.token.token.id
    a = weights["model.embed_tokens.weight"][token].astype(np.float64)
    b = weights["lm_head.weight"][token].astype(np.float64)
    assert answer.head_row_cosine == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-9)
    assert answer.head_kind == oh.OWN and "its own output table" in answer.guess_note
    assert oh.describe(llama_folder).kind == oh.OWN and "untied" in oh.describe(llama_folder).sentence


def test_tied_head_has_no_second_row(gpt2_varied, gpt2_varied_folder: Path) -> None:
    table, model, _ = gpt2_varied
    answer = trace(table, model, TEXTS[0], 3, k=3)
    assert answer.head_row_cosine is None and len(answer.steps[0].guess) == 3
    facts = oh.describe(gpt2_varied_folder)
    assert facts.kind == oh.TIED and facts.is_table and "the embedding table itself" in facts.sentence


def test_minilm_without_a_head_says_so_and_guesses_nothing(minilm_table, tmp_path: Path) -> None:
    model = load_layer_model(minilm_table.folder, name="MiniLM")
    answer = trace(minilm_table, model, "the river bank", 3, k=5)
    assert model.head_kind == oh.NONE and all(s.guess == () for s in answer.steps)
    assert all(len(s.nearest) == 5 for s in answer.steps)
    assert answer.guess_note.startswith("No guess: this folder has no output head")
    assert oh.describe(bundled_model_dir()).kind == oh.NONE
    assert all(r["guess"] == [] for r in answer.as_rows())


def test_a_masked_lm_head_guesses_as_bert_for_masked_lm(tmp_path: Path) -> None:
    """A small BERT saved with its masked-LM head (``cls.predictions.*``) and MiniLM's tokenizer."""
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    full = BertForMaskedLM(config).eval()
    full.save_pretrained(tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        source = bundled_model_dir() / name
        if source.is_file():
            (tmp_path / name).write_bytes(source.read_bytes())
    assert any(k.startswith("cls.predictions.") for k in load_file(str(tmp_path / "model.safetensors")))
    table = open_table(str(tmp_path))
    model = load_layer_model(tmp_path)
    assert model.head_kind == oh.MASKED and oh.describe(tmp_path).kind == oh.MASKED
    text = "the river [MASK] was steep"
    ids = [t.id for t in table.encode(text)]
    logits, _ = _oracle(full, model.model_input(ids)[0])
    for place in _places(table, text):
        answer = trace(table, model, text, place, k=K)
        top = torch.topk(torch.softmax(logits[answer.token.position], -1), K)
        assert [g.id for g in answer.steps[-1].guess] == top.indices.tolist()
        np.testing.assert_allclose([g.prob for g in answer.steps[-1].guess], top.values.numpy(), atol=1e-5)
    assert "masked-LM head" in answer.guess_note


def test_an_untied_model_saved_without_its_head_guesses_nothing(tmp_path: Path) -> None:
    from tests.llama_fixture import build_llama_folder

    folder = build_llama_folder(tmp_path / "base-only", head=False)
    model = load_layer_model(folder)
    assert model.head_kind == oh.NONE and oh.describe(folder).kind == oh.NONE
    answer = trace(open_table(str(folder)), model, TEXTS[0], 2, k=3)
    assert all(s.guess == () for s in answer.steps)
