"""Loading the whole model: transformers' own class (never a model's own code, never a pickle), its size checked.

A folder that holds the embedding table but not the rest of the model is told with the whole
model's size, for a Download offer; torch and transformers are imported only here, on demand.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..common.errors import EmbedExplorerError, IncompleteModelError, UnsupportedModelError
from ..common.files import TOKENIZER_FILE_LIMIT, read_json_member
from ..common.progress import ProgressCallback
from ..formats.safetensors_io import FLOAT_DTYPES, PICKLE_PATTERNS, read_all_headers, weight_files
from ..readers.folder_layout import BUFFER_NAMES, _named
from . import output_head as oh
from .answers import StopCheck, stop_if_asked
from .layer_model import BLOCK_PATHS, LayerModel, default_threads, submodule
from .model_config import built_in_attention, read_model_config

# A checkpoint holding less than this share of the model's weights lacks some of them.
# (1 % of slack: a checkpoint may leave out a pooler the layers never use.)
_COMPLETE_SHARE = 0.99
# Above this many weights a bfloat16 or float16 checkpoint stays in bfloat16: float32 would double its memory.
_FLOAT32_UP_TO = 1 << 30
# Where the final norm is in the base models transformers builds (OPT keeps it in its decoder).
_FINAL_NORMS = ("ln_f", "norm", "final_layernorm", "final_layer_norm", "decoder.final_layer_norm")
# OPT-350m's projection back to the table's width, applied after the final norm.
_PROJECT_OUT = "decoder.project_out"
_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1}


def load_layer_model(
    folder: Path | str,
    *,
    name: str | None = None,
    progress: ProgressCallback | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
    design: ModelDesign | None = None,
) -> LayerModel:
    """Load the whole model in ``folder`` with transformers' own class for its architecture.

    Weights come from safetensors only (a folder with only pickled weights is refused),
    no code from the folder runs, and a folder that holds the embedding table but not
    the rest of the model raises ``IncompleteModelError`` with the whole model's size.
    ``design`` is ``read_design(folder)`` done ahead of need; it is used only while the
    folder's config and tokenizer files are the ones it read.
    """
    report = progress or (lambda done, total, message: None)
    folder = Path(folder)
    report(0, 4, "Reading the model's design")
    files = weight_files(folder)  # refuses pickle-only folders, reports missing shards
    stop_if_asked(should_stop)
    import torch

    torch.set_num_threads(threads or default_threads())
    config = _config(folder)
    if design is None or design.folder != folder or design.stamp != _stamp(folder):
        design = read_design(folder, config)
    expected = design.expected
    entries = read_all_headers(files)
    dtypes = {e.dtype for e in entries.values() if e.dtype in FLOAT_DTYPES}
    stored = "F32" if not dtypes or "F32" in dtypes else sorted(dtypes)[0]
    have = sum(e.numel for n, e in entries.items() if e.dtype in FLOAT_DTYPES and not _named(n, BUFFER_NAMES))
    model_bytes = expected * _BYTES.get(stored, 4)
    if have < _COMPLETE_SHARE * expected:
        message = _incomplete_message(folder, have, expected, model_bytes, stored)
        raise IncompleteModelError(message, model_bytes, expected)
    stop_if_asked(should_stop)

    dtype = torch.float32 if stored == "F32" or expected <= _FLOAT32_UP_TO else torch.bfloat16
    loaded_bytes = expected * (4 if dtype == torch.float32 else 2)
    report(1, 4, f"Loading the whole model: {expected:,} weights ({_size(loaded_bytes)})")
    kind = oh.head_kind(_head_config(config), entries)
    with _quiet_transformers():
        try:
            full, info = (_encoder_class(config) or oh.head_class(kind)).from_pretrained(
                str(folder),
                config=config,
                use_safetensors=True,
                local_files_only=True,
                trust_remote_code=False,
                attn_implementation=built_in_attention(config),
                dtype=dtype,
                output_loading_info=True,
            )
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            raise UnsupportedModelError(f"transformers cannot load the model in {folder}: {_first_line(exc)}") from exc
    model, output = oh.split(full, kind, config, _final_norm_of)
    prefix_of_base = "" if model is full else f"{full.base_model_prefix}."
    missing = sorted(
        k.removeprefix(prefix_of_base)
        for k in info.get("missing_keys", ())
        if k.startswith(prefix_of_base) and "pooler." not in k
    )
    if missing:
        raise IncompleteModelError(
            _incomplete_message(folder, have, expected, model_bytes, stored, missing), model_bytes, expected
        )
    if any(not k.startswith(prefix_of_base) for k in info.get("missing_keys", ())):
        kind, output = oh.NONE, None  # the head's own weights are not in the folder: no guess, never a random one
    model = _runs(model, config)
    stop_if_asked(should_stop)
    model.eval()
    full.eval()
    # The last hidden state is the last block's own output, as for every other layer;
    # the final norm is applied where the table is compared, and said so.
    model.config.tie_last_hidden_states = False
    report(2, 4, "Reading the tokenizer's special tokens")
    prefix, suffix = design.prefix, design.suffix
    final_norm, head_is_table, head_note = _head(model, config)
    kept = model if output is None else full
    weights = sum(p.numel() for p in kept.parameters())
    memory = sum(p.numel() * p.element_size() for p in kept.parameters())
    report(4, 4, "Model ready")
    return LayerModel(
        name=name or str(folder),
        folder=str(folder),
        model=model,
        prefix=prefix,
        suffix=suffix,
        layers=int(getattr(config, "num_hidden_layers", 0) or _count_layers(model)),
        max_positions=_max_positions(config),
        head_is_table=head_is_table,
        head_note=head_note,
        head_kind=kind if output is not None or not oh.guesses(kind) else oh.NONE,  # a head that was not found: none
        weights=int(weights),
        memory_bytes=int(memory),
        dtype=str(dtype).removeprefix("torch."),
        _final_norm=final_norm if head_is_table else None,
        _output=output,
    )


def _head_config(config: Any) -> dict[str, Any]:
    """What ``output_head.head_kind`` reads of a config, from transformers' config object."""
    return {
        "is_encoder_decoder": bool(getattr(config, "is_encoder_decoder", False)),
        "architectures": [str(a) for a in getattr(config, "architectures", None) or ()],
        "tie_word_embeddings": bool(getattr(config, "tie_word_embeddings", True)),
        "model_type": str(getattr(config, "model_type", "")),
    }


def _final_steps(model: Any) -> tuple[str, Any] | None:
    """What the model does to its last layer's output before its head, in words, and the module that
    does it: the final norm, then (OPT-350m) the projection back to the table's width; None for neither."""
    norm_path = next((p for p in _FINAL_NORMS if submodule(model, (p,)) is not None), None)
    norm = None if norm_path is None else submodule(model, (norm_path,))
    projection = submodule(model, (_PROJECT_OUT,))
    steps = [
        (f"{words} ({path})", module)
        for words, path, module in (
            ("the final norm", norm_path, norm),
            ("the projection to the table's width", _PROJECT_OUT, projection),
        )
        if module is not None
    ]
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    import torch

    return " and ".join(w for w, _ in steps), torch.nn.Sequential(*(module for _, module in steps))


def _final_norm_of(model: Any) -> Any:
    found = _final_steps(model)
    return None if found is None else found[1]


@dataclass(frozen=True)
class ModelDesign:
    """What a load reads besides the weights, which can be read ahead of need (the window's
    model process does it as soon as it starts): how many weights the model has, counted on
    a model built without memory, and the special tokens around a text."""

    folder: Path
    stamp: tuple[tuple[int, int], ...]  # size and modification time of config.json and tokenizer.json
    expected: int
    prefix: tuple[int, ...]
    suffix: tuple[int, ...]


def read_design(folder: Path | str, config: Any = None) -> ModelDesign:
    """The design of the model in ``folder``; raises as ``load_layer_model`` would for a design it cannot run."""
    folder = Path(folder)
    stamp = _stamp(folder)
    config = config if config is not None else _config(folder)
    expected, _shell = _expected_weights(config)
    prefix, suffix = special_tokens(folder)
    rows = getattr(config.get_text_config(), "vocab_size", None)
    if isinstance(rows, int):
        outside = [i for i in prefix + suffix if not 0 <= i < rows]
        if outside:
            # The model would index its table past the end.
            raise EmbedExplorerError(
                f"The tokenizer in {folder} puts token id {outside[0]:,} around every text, but the model's "
                f"table has {rows:,} rows (0 to {rows - 1:,}): the tokenizer belongs to another model."
            )
    return ModelDesign(folder, stamp, expected, prefix, suffix)


def _stamp(folder: Path) -> tuple[tuple[int, int], ...]:
    stamps = []
    for name in ("config.json", "tokenizer.json"):
        try:
            found = (folder / name).stat()
            stamps.append((found.st_size, found.st_mtime_ns))
        except OSError:
            stamps.append((-1, -1))
    return tuple(stamps)


def special_tokens(folder: Path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids a tokenizer puts before and after a single text, read from tokenizer.json's post-processor.

    Reading the JSON is enough: building the tokenizer itself would hold Python's lock for
    tens of milliseconds in the window's process (see ``tokenizer_process``).
    """
    file = folder / "tokenizer.json"
    if not file.is_file():
        return _special_tokens_from_transformers(folder)
    processor = read_json_member(file, "post_processor", "tokenizer file", TOKENIZER_FILE_LIMIT, EmbedExplorerError)
    try:
        return _template(processor)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as exc:
        raise EmbedExplorerError(
            f"The tokenizer file {file} has a post-processor that cannot be read ({exc!r})."
        ) from exc


def _template(processor: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if not isinstance(processor, dict):
        return (), ()
    kind = processor.get("type")
    if kind == "Sequence":
        prefix: tuple[int, ...] = ()
        suffix: tuple[int, ...] = ()
        for inner in processor.get("processors") or []:
            inner_prefix, inner_suffix = _template(inner)
            prefix, suffix = prefix + inner_prefix, suffix + inner_suffix
        return prefix, suffix
    if kind in ("BertProcessing", "RobertaProcessing"):
        return (int(processor["cls"][1]),), (int(processor["sep"][1]),)
    if kind == "TemplateProcessing":
        specials = processor.get("special_tokens") or {}
        before: list[int] = []
        after: list[int] = []
        seen_text = False
        for piece in processor.get("single") or []:
            if "Sequence" in piece:
                seen_text = True
            elif "SpecialToken" in piece:
                ids = [int(i) for i in specials[piece["SpecialToken"]["id"]]["ids"]]
                (after if seen_text else before).extend(ids)
        return tuple(before), tuple(after)
    return (), ()  # ByteLevel and the like add no tokens


def _special_tokens_from_transformers(folder: Path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Folders without tokenizer.json: ask the fast tokenizer transformers builds (never custom code)."""
    from ..text.tokenizer_library import load_tokenizer

    tokenizer = load_tokenizer(folder)
    marker = tokenizer.encode("a", add_special_tokens=True)
    mask = list(marker.special_tokens_mask)
    first = mask.index(0) if 0 in mask else len(mask)
    last = len(mask) - mask[::-1].index(0) if 0 in mask else len(mask)
    return tuple(marker.ids[:first]), tuple(marker.ids[last:])


def model_size(folder: Path | str) -> tuple[int, int] | None:
    """The whole model's weights and bytes, from its config alone; None when it cannot be told."""
    try:
        config = _config(Path(folder))
        expected, _ = _expected_weights(config)
    except EmbedExplorerError:
        return None
    return expected, expected * 4


def _config(folder: Path) -> Any:
    """config.json through the allow-list of ``model_config`` (no key there can choose code to run)."""
    with _quiet_transformers():
        return read_model_config(folder)


def _encoder_class(config: Any) -> Any:
    """For an encoder-decoder architecture (T5), transformers' class for its encoder alone where it has
    one (T5EncoderModel): it loads a text encoder saved without its decoder (whose config then says
    is_encoder_decoder false), and never builds a decoder that is not run. None for other models, and
    where there is no such class (BART: the whole model is loaded)."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        found = MODEL_MAPPING[type(config)]
    except KeyError:
        return None
    # A few configs map to more than one class; the first names the architecture.
    whole = next((c for c in found if c is not None), None) if isinstance(found, tuple) else found
    if whole is None:
        return None
    return getattr(transformers, whole.__name__.removesuffix("Model") + "EncoderModel", None)


def _encoder_decoder(config: Any) -> bool:
    """T5 and the like, saved whole or as their encoder alone."""
    return bool(getattr(config, "is_encoder_decoder", False)) or _encoder_class(config) is not None


def _runs(model: Any, config: Any) -> Any:
    """The part of the model whose layers run: an encoder-decoder model's encoder (which reads the
    table; its decoder reads what the encoder wrote), else the model itself."""
    if _encoder_decoder(config) and callable(getattr(model, "get_encoder", None)):
        return model.get_encoder()
    return model


def _expected_weights(config: Any) -> tuple[int, Any]:
    """How many learned weights the part of the model that runs has (an encoder-decoder model's
    encoder), counted on a model built without memory."""
    import torch

    with _quiet_transformers(), torch.device("meta"):
        from transformers import AutoModel

        try:
            shell = AutoModel.from_config(
                config, trust_remote_code=False, attn_implementation=built_in_attention(config)
            )
        except (ValueError, KeyError, TypeError, RuntimeError) as exc:
            raise UnsupportedModelError(
                f"transformers has no model class of its own for '{config.model_type}': {_first_line(exc)}"
            ) from exc
    return int(sum(p.numel() for p in _runs(shell, config).parameters())), shell


def _incomplete_message(
    folder: Path, have: int, expected: int, model_bytes: int, dtype: str, missing: list[str] | None = None
) -> str:
    pickles = sorted({f.name for pattern in PICKLE_PATTERNS for f in folder.glob(pattern)})
    what = (
        f"{len(missing)} of the model's weights are missing ({missing[0]}, ...)"
        if missing
        else f"it holds {have:,} of the {expected:,} weights the whole model needs"
    )
    text = (
        f"{folder} has the embedding table but not the whole model: {what}. Running a text through the "
        f"layers needs the whole model, {_size(model_bytes)} as {dtype}: download it (File > Download model, "
        "or the CLI's --download=full) or open a folder that has all its weights."
    )
    if pickles:
        text += f" The rest is only in pickled files ({pickles[0]}), which EmbedExplorer refuses to load."
    return text


def _head(model: Any, config: Any) -> tuple[Any, bool, str]:
    """The final norm the nearest rows are compared after (tied heads only), and what they mean."""
    found = _final_steps(model)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    if found is not None and tied and not _encoder_decoder(config):
        steps, final_norm = found
        return (
            final_norm,
            True,
            (
                f"Nearest rows: the vector after {steps} against every table row by cosine, "
                "length ignored: rows it points like, not the model's guess."
            ),
        )
    return (
        None,
        False,
        (
            "Nearest rows: the vector against the table's input rows by cosine, length ignored: rows it "
            "points like, not the model's guess."
        ),
    )


def _max_positions(config: Any) -> int | None:
    for key in ("n_positions", "max_position_embeddings"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _count_layers(model: Any) -> int:
    found = submodule(model, BLOCK_PATHS)
    return len(found) if found is not None and hasattr(found, "__len__") else 0


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No progress bars or load reports on stderr: progress and errors are ours to tell.

    No Hub kernels either: transformers 5.2x swaps layers for compiled kernels fetched from the
    Hub by default where the ``kernels`` package is installed. That is code from elsewhere (never
    run here, as no model's own code is), and the layers must be the model's own.
    """
    no_hub_kernels()
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    level = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def no_hub_kernels() -> None:
    """Tell transformers not to replace layers with kernels from the Hub (read when a model loads)."""
    os.environ["USE_HUB_KERNELS"] = "0"


def _size(n_bytes: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:,.1f} {unit}"
    return f"{n_bytes} bytes"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__
