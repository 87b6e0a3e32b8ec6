"""A model folder's config.json cannot choose code, and its sizes are checked before a model is built.

Hostile round 2, classes 3 (an attn_implementation that makes transformers fetch kernels,
auto_map, quantisation), 4 (a config of 100,000 layers), 7 (n_head = 0, n_layer = -1, a
post-processor adding an id past the table). The hostile keys and values are generated;
the oracle for a load is transformers' own model on the clean folder.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedexplorer.core.common.errors import EmbedExplorerError, UnsupportedModelError
from embedexplorer.core.layers.loading import load_layer_model, read_design
from embedexplorer.core.layers.model_config import BUILT_IN_ATTENTION, MAX_LAYERS, read_model_config

from .helpers import assert_one_line_error, run_cli

SETTINGS = settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
TINY = {"n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 64, "vocab_size": 50257}


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory, gpt2_folder: Path) -> Path:
    """A two-layer GPT-2 with GPT-2's tokenizer, small enough to load many times."""
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    GPT2Model(GPT2Config(**TINY)).save_pretrained(folder, safe_serialization=True)
    shutil.copy(gpt2_folder / "tokenizer.json", folder / "tokenizer.json")
    return folder


def with_config(source: Path, target: Path, change: dict[str, object]) -> Path:
    """``source`` beside ``target`` (weights linked, not copied), its config.json changed by ``change``."""
    target.mkdir(parents=True, exist_ok=True)
    for file in source.iterdir():
        if file.name != "config.json":
            (target / file.name).symlink_to(file)
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config.update(change)
    (target / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return target


kernel_names = st.sampled_from(
    ["kernels-community/flash-attn", "kernels-community/vllm-flash-attn3", "flash_attention_2", "flash_attention_3",
     "someone/evil-kernel", "paged|flash_attention_2", "flex_attention", "sdpa", "eager"]
)
code_keys = st.fixed_dictionaries(
    {},
    optional={
        "attn_implementation": st.one_of(
            kernel_names, st.dictionaries(st.sampled_from(["", "text_config"]), kernel_names)
        ),
        "_attn_implementation": kernel_names,
        "experts_implementation": kernel_names,
        "auto_map": st.just({"AutoModel": "modeling_evil.EvilModel", "AutoConfig": "configuration_evil.EvilConfig"}),
        "quantization_config": st.just({"quant_method": "bitsandbytes", "load_in_4bit": True}),
        "use_kernels": st.just(True),
        "kernel_config": st.just({"kernel_mapping": {"RMSNorm": "kernels-community/liger_kernels:LigerRMSNorm"}}),
        "text_config": st.builds(lambda name: {"attn_implementation": name}, kernel_names),
        "some_unknown_key": st.integers(),
    },
)


@SETTINGS
@given(hostile=code_keys)
def test_no_key_of_a_config_chooses_code(tiny_gpt2: Path, hostile: dict[str, object]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = with_config(tiny_gpt2, Path(tmp) / "model", hostile)
        config = read_model_config(folder)
    assert config._attn_implementation in BUILT_IN_ATTENTION
    for key in ("auto_map", "quantization_config", "use_kernels", "kernel_config", "experts_implementation"):
        assert getattr(config, key, None) in (None, False, {}), key
    assert (config.n_layer, config.n_head, config.n_embd) == (TINY["n_layer"], TINY["n_head"], TINY["n_embd"])


def test_a_hostile_config_loads_transformers_own_model_and_gives_its_numbers(tiny_gpt2: Path, tmp_path: Path) -> None:
    import torch
    from transformers import GPT2Model

    hostile = {
        "attn_implementation": "kernels-community/flash-attn",
        "auto_map": {"AutoModel": "modeling_evil.EvilModel"},
        "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True},
    }
    model = load_layer_model(with_config(tiny_gpt2, tmp_path / "hostile", hostile))
    assert model.model.config._attn_implementation in BUILT_IN_ATTENTION
    ids = [464, 3139, 286, 4881, 318]
    ours = model.hidden_states(ids)
    reference = GPT2Model.from_pretrained(str(tiny_gpt2), attn_implementation="eager").eval()
    with torch.inference_mode():
        theirs = reference(torch.tensor([ids]), output_hidden_states=True).hidden_states
    # Every layer but the last (transformers gives that one after the final norm).
    for layer in range(TINY["n_layer"]):
        np.testing.assert_allclose(ours[layer], theirs[layer][0].numpy(), rtol=1e-5, atol=1e-5)


size_keys = st.sampled_from(["n_layer", "n_head", "n_embd", "n_positions", "vocab_size"])
bad_sizes = st.one_of(
    st.integers(max_value=0),
    st.sampled_from(["12", 1.5, True, [2], {"n": 2}]),
    st.integers(min_value=2**31 + 1, max_value=2**70),
)


@SETTINGS
@given(key=size_keys, value=bad_sizes)
def test_a_size_that_is_not_one_is_a_sentence(tiny_gpt2: Path, key: str, value: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = with_config(tiny_gpt2, Path(tmp) / "model", {key: value})
        with pytest.raises(UnsupportedModelError) as caught:
            read_model_config(folder)
    message = str(caught.value)
    assert "\n" not in message and key in message and "config.json" in message


@SETTINGS
@given(layers=st.integers(MAX_LAYERS + 1, 10**7), key=st.sampled_from(["n_layer", "num_hidden_layers"]))
def test_a_config_of_more_layers_than_any_model_is_refused_before_building(
    tiny_gpt2: Path, layers: int, key: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = with_config(tiny_gpt2, Path(tmp) / "model", {key: layers})
        with pytest.raises(UnsupportedModelError, match=f"declares {layers:,} layers"):
            read_model_config(folder)


@pytest.mark.parametrize("model_type", [None, 5, {"x": 1}, ["gpt2"]])
def test_a_config_naming_no_architecture_says_so(tmp_path: Path, model_type: object) -> None:
    """Without a model_type (or with one that is not text) the sentence named 'None' as an architecture."""
    config = {"n_layer": 2} if model_type is None else {"n_layer": 2, "model_type": model_type}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(UnsupportedModelError) as caught:
        read_model_config(tmp_path)
    message = str(caught.value)
    assert "model_type" in message and str(tmp_path / "config.json") in message
    assert "no class of its own" not in message and "\n" not in message


def test_the_sweeps_configs_on_the_command_line(tiny_gpt2: Path, tmp_path: Path) -> None:
    for name, change, fragment in (
        ("no-heads", {"n_head": 0}, "n_head = 0"),
        ("minus-one", {"n_layer": -1}, "n_layer = -1"),
        ("deep", {"n_layer": 100_000}, "100,000 layers"),
    ):
        folder = with_config(tiny_gpt2, tmp_path / name, change)
        result = run_cli("layers", "The capital", "--place", "1", "--model", str(folder), timeout=300)
        assert_one_line_error(result, fragment)


@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(extra=st.integers(50257, 2**31), where=st.sampled_from(["before", "after"]))
def test_a_post_processor_adding_an_id_past_the_table_is_a_sentence(tiny_gpt2: Path, extra: int, where: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = with_config(tiny_gpt2, Path(tmp) / "model", {})
        (folder / "tokenizer.json").unlink()
        spec = json.loads((tiny_gpt2 / "tokenizer.json").read_text(encoding="utf-8"))
        pieces = [{"Sequence": {"id": "A", "type_id": 0}}]
        special = {"SpecialToken": {"id": "<x>", "type_id": 0}}
        spec["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [special, *pieces] if where == "before" else [*pieces, special],
            "pair": pieces,
            "special_tokens": {"<x>": {"id": "<x>", "ids": [extra], "tokens": ["<x>"]}},
        }
        (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
        with pytest.raises(EmbedExplorerError, match=f"puts token id {extra:,} around every text"):
            read_design(folder)
