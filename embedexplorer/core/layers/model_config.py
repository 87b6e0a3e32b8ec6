"""A model folder's config.json, read through an allow-list before transformers sees it.

transformers acts on some keys of a config by itself: an ``attn_implementation`` naming a
Hub repository makes it fetch and load that code through the ``kernels`` package, an
``auto_map`` names code in the folder, a ``quantization_config`` pulls in other packages.
So the file is read here (bounded, never a FIFO), only the keys the architecture's own
config class declares are kept, the sizes are checked before a model is built from them,
and the attention is set to one of transformers' built-in implementations.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from ..common.errors import UnsupportedModelError
from ..common.files import CONFIG_FILE_LIMIT, read_json

# The most layers a model may declare: several times the deepest in use (126 for
# Llama 3.1 405B); building a model of 100,000 layers, even without memory, takes hours.
MAX_LAYERS = 1024
# Heads, widths and positions: far above any model's, far below what overflows a count.
MAX_SIZE = 1 << 31
# Keys older configs still use, which the config classes turn into today's names.
_LEGACY_KEYS = frozenset(
    {
        "model_type",
        "transformers_version",
        "torch_dtype",
        "rope_scaling",
        "rope_theta",
        "partial_rotary_factor",
        "n_ctx",
    }
)
# Keys that make transformers choose code (attention kernels from the Hub, code in the
# folder, quantisation packages): never passed on, at any depth.
_NEVER = frozenset({"auto_map", "quantization_config", "custom_pipelines", "trust_remote_code", "use_kernels"})
_NEVER_PARTS = ("implementation", "kernel")
# Sizes that must be whole numbers of at least 1 when given.
_LAYER_KEYS = frozenset({"num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers"})
_SIZE_KEYS = _LAYER_KEYS | frozenset(
    {
        "n_head",
        "num_attention_heads",
        "num_key_value_heads",
        "num_heads",
        "encoder_attention_heads",
        "decoder_attention_heads",
        "n_embd",
        "hidden_size",
        "d_model",
        "intermediate_size",
        "n_inner",
        "head_dim",
        "vocab_size",
        "max_position_embeddings",
        "n_positions",
        "n_ctx",
    }
)
# The attention transformers may use: its own, never one fetched from anywhere.
BUILT_IN_ATTENTION = ("sdpa", "eager")


def read_model_config(folder: Path) -> Any:
    """The folder's config as transformers' own config class for its architecture, cleaned and checked.

    Raises UnsupportedModelError naming the file and what is wrong with it.
    """
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    file = folder / "config.json"
    data = read_json(file, "model configuration", CONFIG_FILE_LIMIT, UnsupportedModelError)
    if not isinstance(data, dict):
        raise UnsupportedModelError(f"The model configuration {file} is not a JSON object.")
    model_type = data.get("model_type")
    if not isinstance(model_type, str):  # absent or not text: there is no architecture to name
        raise UnsupportedModelError(
            f"The model configuration {file} gives no model_type as text, so transformers cannot tell which "
            "architecture to build; the whole model is only run for architectures transformers supports itself."
        )
    if model_type not in CONFIG_MAPPING:
        raise UnsupportedModelError(
            f"transformers has no class of its own for '{model_type}' (in {file}). Only architectures "
            "transformers supports itself are run (GPT-2, BERT, Llama, Qwen2, ...); a model's own code never runs."
        )
    config_class = CONFIG_MAPPING[model_type]
    allowed = _declared_keys(config_class)
    kept = {key: _without_code(value) for key, value in data.items() if key in allowed and not _is_code(key)}
    _check_sizes(kept, file)
    try:
        config = config_class.from_dict(kept)
    except (ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError, OverflowError) as exc:
        raise UnsupportedModelError(f"transformers cannot read the model design in {file}: {exc}") from exc
    layers = getattr(config.get_text_config(), "num_hidden_layers", None)
    if isinstance(layers, int) and not 1 <= layers <= MAX_LAYERS:
        raise UnsupportedModelError(_layers_message(file, layers))
    config._attn_implementation = built_in_attention(config)
    return config


def built_in_attention(config: Any) -> str:
    """'sdpa' when the architecture's model class has it, else 'eager': never a kernel from elsewhere."""
    try:
        from transformers.models.auto.modeling_auto import MODEL_MAPPING

        model_class = MODEL_MAPPING[type(config)]
    except (KeyError, ImportError, ValueError):
        return "eager"
    return "sdpa" if getattr(model_class, "_supports_sdpa", False) else "eager"


def _declared_keys(config_class: type) -> frozenset[str]:
    """What the config class takes: its constructor's parameters, the names it maps, and legacy names."""
    names: set[str] = set(_LEGACY_KEYS)
    for klass in config_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            names.update(p for p in inspect.signature(init).parameters if p != "self")
        names.update(getattr(klass, "attribute_map", None) or {})
        names.update(getattr(klass, "sub_configs", None) or {})
    return frozenset(names)


def _is_code(key: str) -> bool:
    lowered = key.lower()
    return lowered in _NEVER or any(part in lowered for part in _NEVER_PARTS)


def _without_code(value: object) -> object:
    """A nested config (text_config, vision_config, ...) without the keys that choose code."""
    if isinstance(value, dict):
        return {k: _without_code(v) for k, v in value.items() if not (isinstance(k, str) and _is_code(k))}
    if isinstance(value, list):
        return [_without_code(v) for v in value]
    return value


def _check_sizes(data: object, file: Path) -> None:
    """Every count of layers, heads and widths, at any depth, is a whole number in its range."""
    if isinstance(data, list):
        for item in data:
            _check_sizes(item, file)
        return
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        if key in _SIZE_KEYS and value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
                raise UnsupportedModelError(
                    f"The model configuration {file} gives {key} = {value!r}; it must be a whole number of at least 1."
                )
            if key in _LAYER_KEYS and value > MAX_LAYERS:
                raise UnsupportedModelError(_layers_message(file, value))
        else:
            _check_sizes(value, file)


def _layers_message(file: Path, layers: int) -> str:
    return (
        f"The model configuration {file} declares {layers:,} layers; EmbedExplorer runs models of 1 to "
        f"{MAX_LAYERS:,} layers (the deepest in use have about 130)."
    )
