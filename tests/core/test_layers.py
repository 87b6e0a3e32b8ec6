"""One token through every layer, checked against transformers called directly in the test."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer
from transformers import BertModel, GPT2Model

from embedexplorer.core.common.errors import Interrupted, PlaceError, QueryError, TextTooLongError
from embedexplorer.core.layers.layer_model import LayerModel
from embedexplorer.core.layers.loading import load_layer_model
from embedexplorer.core.layers.places import find_place
from embedexplorer.core.layers.trace import trace
from embedexplorer.core.sources.resolve import bundled_model_dir

RIVER, ACCOUNT = "the river bank", "my bank account"


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def minilm_model(minilm_table) -> LayerModel:  # type: ignore[no-untyped-def]
    return load_layer_model(minilm_table.folder, name=minilm_table.name)


@pytest.fixture(scope="module")
def gpt2_model(gpt2_table) -> LayerModel:  # type: ignore[no-untyped-def]
    return load_layer_model(gpt2_table.folder, name=gpt2_table.name)


@pytest.fixture(scope="module")
def direct_bert() -> tuple[BertModel, Tokenizer]:
    """MiniLM as transformers loads it, and its tokenizer with [CLS] and [SEP], without EmbedExplorer."""
    folder = bundled_model_dir()
    model = BertModel.from_pretrained(str(folder), use_safetensors=True, local_files_only=True).eval()
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    return model, tokenizer


def _bert_states(direct: tuple[BertModel, Tokenizer], text: str, token: str) -> np.ndarray:
    model, tokenizer = direct
    encoding = tokenizer.encode(text)
    index = encoding.tokens.index(token)
    with torch.inference_mode():
        out = model(torch.tensor([encoding.ids]), output_hidden_states=True)
    return torch.stack([h[0, index] for h in out.hidden_states]).numpy()


# ----- MiniLM: the chapter's two "bank"s ------------------------------------------------------------
def test_bank_is_one_token_with_one_row_in_both_sentences(minilm_table) -> None:
    river = minilm_table.encode(RIVER)
    account = minilm_table.encode(ACCOUNT)
    assert [t.token for t in river] == ["the", "river", "bank"]
    assert [t.token for t in account] == ["my", "bank", "account"]
    assert river[2].id == account[1].id
    rows = minilm_table.row(river[2].id), minilm_table.row(account[1].id)
    assert np.array_equal(*rows)
    assert f"{_cos(*rows):.3f}" == "1.000"


def test_two_banks_drift_apart_exactly_as_transformers_computes(minilm_table, minilm_model, direct_bert) -> None:
    answer = trace(minilm_table, minilm_model, RIVER, 3, compare=(ACCOUNT, 2), k=5)
    assert answer.token.token.token == "bank" and answer.compare is not None
    assert answer.token.position == 3 and answer.compare.position == 2  # [CLS] comes first
    assert answer.layers == 6 and [s.layer for s in answer.steps] == list(range(7))

    river = _bert_states(direct_bert, RIVER, "bank")
    account = _bert_states(direct_bert, ACCOUNT, "bank")
    expected = [_cos(a, b) for a, b in zip(river, account, strict=True)]
    got = [s.cosine_to_compare for s in answer.steps]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # After the last layer the two "bank"s are further apart than when they entered.
    assert answer.steps[-1].cosine_to_compare < answer.steps[0].cosine_to_compare
    assert answer.steps[-1].cosine_to_compare < 1.0 - 0.1

    row = minilm_table.row(2924)
    np.testing.assert_allclose([s.length for s in answer.steps], np.linalg.norm(river, axis=1), rtol=1e-5)
    np.testing.assert_allclose([s.cosine_to_row for s in answer.steps], [_cos(v, row) for v in river], atol=1e-5)
    assert "not" in answer.head_note and "table" in answer.head_note


def test_minilm_input_is_the_models_own_embedding_step(minilm_table, minilm_model, direct_bert) -> None:
    answer = trace(minilm_table, minilm_model, RIVER, 3, k=3)
    parts = dict(answer.input.parts)
    # [CLS] takes position row 1, so "bank" at place 3 gets row 4 (index 3)
    assert set(parts) == {"token row", "position row 4", "token type row 0"}
    np.testing.assert_array_equal(parts["token row"], minilm_table.row(2924))
    np.testing.assert_array_equal(parts["position row 4"], minilm_table.position_row(3))
    model, _ = direct_bert
    with torch.inference_mode():
        normed = model.embeddings.LayerNorm(torch.from_numpy(answer.input.total)).numpy()
    np.testing.assert_allclose(answer.input.enters, normed, atol=1e-5)
    np.testing.assert_allclose(answer.input.enters, _bert_states(direct_bert, RIVER, "bank")[0], atol=1e-6)
    assert "LayerNorm" in answer.input.note
    assert answer.steps[0].cosine_to_compare is None


def test_nearest_rows_are_the_tables_own_search(minilm_table, minilm_model, direct_bert) -> None:
    answer = trace(minilm_table, minilm_model, ACCOUNT, 2, k=6)
    states = _bert_states(direct_bert, ACCOUNT, "bank")
    unit = minilm_table.rows / np.linalg.norm(minilm_table.rows, axis=1, keepdims=True)
    for step, vector in zip(answer.steps, states, strict=True):
        scores = unit @ (vector / np.linalg.norm(vector))
        best = np.argsort(-scores, kind="stable")[:6]
        assert [n.id for n in step.nearest] == best.tolist()
        np.testing.assert_allclose([n.cosine for n in step.nearest], scores[best], atol=1e-5)


# ----- the GPT-2-shaped fixture --------------------------------------------------------------------
@pytest.fixture(scope="module")
def direct_gpt2(gpt2_folder) -> GPT2Model:  # type: ignore[no-untyped-def]
    return GPT2Model.from_pretrained(str(gpt2_folder), use_safetensors=True, local_files_only=True).eval()


def _gpt2_states(model: GPT2Model, ids: list[int], index: int) -> tuple[np.ndarray, np.ndarray]:
    """Raw residual vectors after every block (input first) and the same through ln_f, by hooks of the test's own."""
    captured: list[torch.Tensor] = []

    def keep(module: torch.nn.Module, args: object, out: torch.Tensor | tuple[torch.Tensor, ...]) -> None:
        captured.append(out[0] if isinstance(out, tuple) else out)

    hook = model.h[-1].register_forward_hook(keep)
    try:
        with torch.inference_mode():
            out = model(torch.tensor([ids]), output_hidden_states=True)
    finally:
        hook.remove()
    raw = [h[0, index] for h in out.hidden_states[:-1]] + [captured[0][0, index]]
    with torch.inference_mode():
        normed = [model.ln_f(v) for v in raw]
        # transformers' own last hidden state is the last block's output through ln_f
        np.testing.assert_allclose(normed[-1].numpy(), out.last_hidden_state[0, index].numpy(), atol=1e-5)
    return torch.stack(raw).numpy(), torch.stack(normed).numpy()


def test_gpt2_input_is_token_row_plus_position_row(gpt2_table, gpt2_model) -> None:
    answer = trace(gpt2_table, gpt2_model, "The capital of France is", 4, k=3)
    assert answer.token.token.token == "_France" and answer.token.position == 3
    expected = gpt2_table.row(4881) + gpt2_table.position_row(3)
    np.testing.assert_allclose(answer.input.enters, expected, atol=1e-6)
    np.testing.assert_allclose(answer.input.total, expected, atol=1e-6)
    assert answer.input.note.startswith("token row + position row")
    assert answer.steps[0].length == pytest.approx(float(np.linalg.norm(expected)), rel=1e-6)


def test_gpt2_twelve_layers_match_a_direct_transformers_call(gpt2_table, gpt2_model, direct_gpt2) -> None:
    river, account = " the river bank", " my bank account"
    answer = trace(gpt2_table, gpt2_model, river, 3, compare=(account, 2), k=4)
    assert answer.layers == 12 and len(answer.steps) == 13
    river_ids = [t.id for t in gpt2_table.encode(river)]
    account_ids = [t.id for t in gpt2_table.encode(account)]
    assert river_ids[2] == account_ids[1] == 3331
    raw, normed = _gpt2_states(direct_gpt2, river_ids, 2)
    other_raw, _ = _gpt2_states(direct_gpt2, account_ids, 1)
    row = gpt2_table.row(3331)

    np.testing.assert_allclose([s.length for s in answer.steps], np.linalg.norm(raw, axis=1), rtol=1e-5)
    np.testing.assert_allclose([s.cosine_to_row for s in answer.steps], [_cos(v, row) for v in normed], atol=1e-5)
    expected = [_cos(a, b) for a, b in zip(raw, other_raw, strict=True)]
    np.testing.assert_allclose([s.cosine_to_compare for s in answer.steps], expected, atol=1e-5)
    # The nearest rows after the last layer: ln_f's output against every row by cosine (not the model's ranking).
    unit = gpt2_table.rows / np.linalg.norm(gpt2_table.rows, axis=1, keepdims=True)
    scores = unit @ (normed[-1] / np.linalg.norm(normed[-1]))
    assert [n.id for n in answer.steps[-1].nearest] == np.argsort(-scores, kind="stable")[:4].tolist()
    assert "not the model's guess" in answer.head_note and "ln_f" in answer.head_note
    assert "next-token guess" in answer.guess_note


def test_the_last_text_is_remembered(gpt2_table, gpt2_model) -> None:
    first = trace(gpt2_table, gpt2_model, "The capital of France is", 2, k=2)
    calls: list[bool] = []

    def asked() -> bool:
        calls.append(True)
        return False

    again = trace(gpt2_table, gpt2_model, "The capital of France is", 5, k=2, should_stop=asked)
    assert again.token.token.token == "_is" and first.token.token.token == "_capital"
    assert calls  # checked between layers even when nothing runs forward


# ----- what a person can get wrong -----------------------------------------------------------------
def test_a_text_longer_than_the_position_table(gpt2_table, gpt2_model, minilm_table, minilm_model) -> None:
    with pytest.raises(TextTooLongError, match="positions for only 1,024"):
        trace(gpt2_table, gpt2_model, " a" * 1025, 1)
    assert len(gpt2_table.encode(" a" * 1024)) == 1024
    # 511 tokens, but [CLS] and [SEP] make 513 for a 512-position table
    with pytest.raises(TextTooLongError, match="513 with the model's 2 special"):
        trace(minilm_table, minilm_model, "a " * 511, 1)


@pytest.mark.parametrize("place", [0, 4, 99])
def test_a_place_outside_the_text(minilm_table, minilm_model, place: int) -> None:
    with pytest.raises(PlaceError, match="places 1 to 3"):
        trace(minilm_table, minilm_model, RIVER, place)


def test_an_empty_text(minilm_table, minilm_model) -> None:
    with pytest.raises(QueryError, match="no token"):
        trace(minilm_table, minilm_model, "   ", 1)


def test_a_newer_question_stops_the_run(gpt2_table, gpt2_model) -> None:
    with pytest.raises(Interrupted):
        trace(gpt2_table, gpt2_model, "A text nobody asked about before", 1, should_stop=lambda: True)


def test_find_place(minilm_table) -> None:
    assert find_place(minilm_table, ACCOUNT, 2924) == 2
    assert find_place(minilm_table, "no such word here", 2924) is None


def test_a_long_forward_pass_stops_between_layers(gpt2_table, gpt2_model) -> None:
    checks: list[int] = []
    ran: list[int] = []

    def stop_after_four_checks() -> bool:
        checks.append(1)
        return len(checks) > 4  # the pass checks once before it starts and once before each layer

    counting = [block.register_forward_hook(lambda *_: ran.append(1)) for block in gpt2_model.model.h]
    text = " one more text that was never run" * 20
    try:
        with pytest.raises(Interrupted):
            trace(gpt2_table, gpt2_model, text, 2, should_stop=stop_after_four_checks)
    finally:
        for handle in counting:
            handle.remove()
    # Stopped within a layer of the fourth check (trace checks too, between its searches), not after all twelve.
    assert 2 <= len(ran) <= 4, len(ran)
    # and the model is left as it was: no hook stays behind
    answer = trace(gpt2_table, gpt2_model, " one more text that was never run" * 20, 2, k=1)
    assert len(answer.steps) == 13
    assert all(not block._forward_pre_hooks for block in gpt2_model.model.h)


def test_special_tokens_come_from_the_tokenizers_own_template(gpt2_folder, tmp_path) -> None:
    import json

    from embedexplorer.core.layers.loading import special_tokens

    direct = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    direct.no_padding()
    encoding = direct.encode("the river bank")
    assert special_tokens(bundled_model_dir()) == ((encoding.ids[0],), (encoding.ids[-1],)) == ((101,), (102,))
    assert special_tokens(gpt2_folder) == ((), ())
    roberta = {"post_processor": {"type": "Sequence", "processors": [
        {"type": "ByteLevel"}, {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]}
    ]}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(roberta))
    assert special_tokens(tmp_path) == ((0,), (2,))
