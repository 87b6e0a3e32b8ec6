"""Models whose blocks, final norm or head sit where GPT-2's and Llama's do not, through the layers.

OPT keeps its blocks and final norm in its decoder (``decoder.layers``, ``decoder.final_layer_norm``),
and OPT-350m projects back to the table's width after it (``decoder.project_out``, and no final
norm at all: its blocks normalise after themselves); GPT-NeoX (Pythia) calls its head ``embed_out``;
DistilBERT keeps its blocks in ``transformer.layer``; ALBERT shares one block among its layers, where
no hook finds it, and may work in a wider space than its table's rows. The oracles are transformers'
own: ``model(ids).logits`` for the guess, ``hidden_states`` for every layer. Each of these once failed:
OPT and DistilBERT said "The model's answer was incomplete" on the command line, OPT's guess skipped
its final norm, GPT-NeoX, DistilBERT's and ALBERT's masked-LM heads showed no guess, and ALBERT's
projection was a sentence about vector shapes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedexplorer import open_table
from embedexplorer.core.layers import output_head as oh
from embedexplorer.core.layers.loading import load_layer_model
from embedexplorer.core.layers.trace import trace

from .test_sources import run_cli

TEXT = "the river bank"
PLACE = 3
POSITION = 2  # GPT-2's tokenizer, borrowed by every model here, adds no token before the text


def _opt(**extra: Any) -> Callable[[], Any]:
    def make() -> Any:
        from transformers import OPTConfig, OPTForCausalLM

        sizes = dict(hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4, word_embed_proj_dim=64)
        return OPTForCausalLM(OPTConfig(vocab_size=50257, **{**sizes, **extra}))

    return make


def _gpt_neox() -> Any:
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    config = GPTNeoXConfig(vocab_size=50257, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, tie_word_embeddings=False)  # fmt: skip
    return GPTNeoXForCausalLM(config)


def _distilbert() -> Any:
    from transformers import DistilBertConfig, DistilBertModel

    return DistilBertModel(DistilBertConfig(vocab_size=50257, dim=64, hidden_dim=128, n_layers=2, n_heads=4))


def _distilbert_mlm() -> Any:
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    return DistilBertForMaskedLM(DistilBertConfig(vocab_size=50257, dim=64, hidden_dim=128, n_layers=2, n_heads=4))


def _albert(embedding_size: int, masked: bool = False) -> Callable[[], Any]:
    def make() -> Any:
        from transformers import AlbertConfig, AlbertForMaskedLM, AlbertModel

        config = AlbertConfig(vocab_size=50257, embedding_size=embedding_size, hidden_size=64, num_hidden_layers=3,
                              num_attention_heads=4, intermediate_size=128)  # fmt: skip
        return (AlbertForMaskedLM if masked else AlbertModel)(config)

    return make


MAKERS: dict[str, Callable[[], Any]] = {
    "opt": _opt(),
    "opt-projected": _opt(word_embed_proj_dim=32),
    "opt-350m-style": _opt(word_embed_proj_dim=32, do_layer_norm_before=False),
    "gpt-neox": _gpt_neox,
    "distilbert": _distilbert,
    "albert": _albert(64),
    "albert-projected": _albert(32),
    "distilbert-mlm": _distilbert_mlm,
    "albert-mlm": _albert(64, masked=True),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, gpt2_folder: Path) -> dict[str, Path]:
    import torch

    root = tmp_path_factory.mktemp("layouts")
    made = {}
    for seed, (name, make) in enumerate(MAKERS.items()):
        torch.manual_seed(seed)
        made[name] = root / name
        make().save_pretrained(made[name])
        shutil.copy(gpt2_folder / "tokenizer.json", made[name] / "tokenizer.json")
    return made


def _ids(folder: Path) -> list[int]:
    return [t.id for t in open_table(str(folder)).encode(TEXT)]


def _assert_last_guess_is_the_logits(folder: Path, model: Any, auto_class: Any) -> None:
    """The guess after the last layer: the top 5 of transformers' own logits for the place, ``auto_class``
    loading the model with its head."""
    import torch

    last = trace(open_table(str(folder)), model, TEXT, PLACE, k=5).steps[-1]
    full = auto_class.from_pretrained(folder).eval()
    with torch.inference_mode():
        want = torch.softmax(full(torch.tensor([_ids(folder)])).logits[0, POSITION].double(), -1)
    top = torch.topk(want, 5)
    assert [g.id for g in last.guess] == top.indices.tolist()
    assert [g.prob for g in last.guess] == pytest.approx(top.values.tolist(), rel=1e-4)


@pytest.mark.parametrize("name", ["opt", "opt-projected", "opt-350m-style", "gpt-neox"])
def test_the_guess_after_the_last_layer_is_the_models_logits(folders: dict[str, Path], name: str) -> None:
    from transformers import AutoModelForCausalLM

    model = load_layer_model(folders[name])
    assert model.head_kind in (oh.TIED, oh.OWN)
    _assert_last_guess_is_the_logits(folders[name], model, AutoModelForCausalLM)


@pytest.mark.parametrize("name", ["distilbert-mlm", "albert-mlm"])
def test_a_masked_lm_head_of_its_own_layout_guesses_as_the_model_does(folders: dict[str, Path], name: str) -> None:
    from transformers import AutoModelForMaskedLM

    model = load_layer_model(folders[name])
    assert oh.describe(folders[name]).kind == model.head_kind == oh.MASKED
    _assert_last_guess_is_the_logits(folders[name], model, AutoModelForMaskedLM)


@pytest.mark.parametrize("name", ["opt-projected", "distilbert", "albert"])
def test_the_command_line_gives_every_layer_as_transformers_computes_it(folders: dict[str, Path], name: str) -> None:
    import torch
    from transformers import AutoModel

    folder = folders[name]
    found = run_cli("layers", TEXT, "--place", str(PLACE), "--json", "--model", str(folder))
    assert found.returncode == 0, found.stderr
    layers = json.loads(found.stdout)
    base = AutoModel.from_pretrained(folder).eval()
    with torch.inference_mode():
        states = base(torch.tensor([_ids(folder)]), output_hidden_states=True).hidden_states
    assert [row["layer"] for row in layers] == list(range(len(states)))
    # OPT's last hidden state is after its final norm; ours is the last block's own output, as for every model.
    compared = states if name != "opt-projected" else states[:-1]
    want = [float(np.linalg.norm(s[0, POSITION].double().numpy())) for s in compared]
    assert [row["length"] for row in layers[: len(compared)]] == pytest.approx(want, rel=1e-5)
    assert all(len(row["nearest"]) > 0 for row in layers)


def test_a_model_working_wider_than_its_table_says_so_in_one_sentence(folders: dict[str, Path]) -> None:
    found = run_cli("layers", TEXT, "--place", str(PLACE), "--model", str(folders["albert-projected"]))
    assert found.returncode != 0
    assert "Traceback" not in found.stderr
    said = found.stderr.strip().splitlines()[-1]  # after any note about the table's rows
    assert said.startswith("embedexplorer: This model's layers work with 64 numbers")
    assert "rows have 32" in said
