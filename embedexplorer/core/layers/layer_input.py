"""What enters layer 1, computed from the model's own embedding tensors in numpy, or said what is left out.

GPT-2 adds the token row and the position row, as the chapter says. BERT-style
models (the bundled MiniLM) also add a token-type row, put [CLS] first (so the
first word of a text stands at position-table row 1) and apply a LayerNorm.
Models with rotary positions add nothing: their token row itself enters layer 1.
Dropout is off when a model reads, so it is no step here.

This is the table-side answer; the model's own run forward (``layers``) gives the
same numbers with torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..common.errors import EmbedExplorerError, TokenizerMismatchError
from ..common.files import TOKENIZER_FILE_LIMIT, read_json_member
from ..formats.safetensors_io import TensorEntry, map_tensor, read_all_headers, weight_files
from ..readers.folder_layout import TOKEN_TABLE_NAMES
from ..tables.embedding_table import EmbeddingTable
from ..tables.position_rows import row_name, row_number

# Model types that add nothing but token row and position row (GPT-2's recipe).
ADDED_TYPES = {"gpt2", "gpt_neo", "gpt_bigcode"}
# Model types whose token row enters layer 1 unchanged (positions are marked inside the layers).
TOKEN_ONLY_TYPES = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi", "phi3", "gpt_neox",
    "gptj", "olmo", "olmo2", "stablelm", "starcoder2", "granite", "cohere", "deepseek_v2", "deepseek_v3",
    "mpt", "falcon", "t5", "mt5",
}  # fmt: skip
# Model types that multiply the token row by the square root of the width first.
SCALED_TYPES = ("gemma", "gemma2", "gemma3", "gemma3_text")
# BERT-style models, whose recipe is read from the tensors next to the token table.
BERT_TYPES = {"bert", "roberta", "xlm-roberta", "camembert", "distilbert", "electra", "mpnet"}
# Models whose position ids start after the padding id (RoBERTa's create_position_ids_from_input_ids).
PADDING_OFFSET_TYPES = {"roberta", "xlm-roberta", "camembert", "mpnet", "longformer"}
# Models whose learned position table keeps two rows before the first place.
OFFSET_TWO_TYPES = {"opt", "bart", "mbart"}
# Every model type whose steps are all computed here (BART also normalises and scales: not read here).
KNOWN_TYPES = ADDED_TYPES | TOKEN_ONLY_TYPES | BERT_TYPES | set(SCALED_TYPES) | {"opt"}


@dataclass(frozen=True)
class Recipe:
    """How a model turns a token of a text into what enters its first layer.

    Attributes
    ----------
    model_type:
        ``model_type`` from config.json ("" when it has none).
    leading:
        Special tokens the tokenizer puts before the text ("[CLS]"), in order.
    position_offset:
        Position-table row of the first token the model reads (2 for RoBERTa).
    token_type:
        The token-type row added to every token of a single text, or None.
    token_type_id:
        Which token-type row that is.
    norm_weight, norm_bias, norm_eps:
        The LayerNorm applied to the sum, or None.
    scale:
        Factor on the token row before anything is added (Gemma: square root of the width).
    left_out:
        Steps this model takes that are not computed here, in words.
    known:
        True when every step of this model type is computed here.
    """

    model_type: str
    leading: tuple[str, ...] = ()
    position_offset: int = 0
    token_type: np.ndarray | None = None
    token_type_id: int = 0
    norm_weight: np.ndarray | None = None
    norm_bias: np.ndarray | None = None
    norm_eps: float = 1e-12
    scale: float = 1.0
    left_out: tuple[str, ...] = ()
    known: bool = True

    def position_index(self, place: int) -> int:
        """Position-table row of the token at 0-based ``place`` of the learner's text."""
        return self.position_offset + len(self.leading) + place

    def short(self, has_positions: bool) -> str:
        """The recipe in a few words, for a narrow pane: "layer 1 gets LayerNorm(token + position + type 0)"."""
        parts = ["token" + (f" x {self.scale:.4g}" if self.scale != 1 else "")]
        if has_positions:
            parts.append("position")
        if self.token_type is not None:
            parts.append(f"type {self.token_type_id}")
        text = " + ".join(parts)
        if self.norm_weight is not None:
            text = f"LayerNorm({text})"
        first = f"; {' '.join(self.leading)} first" if self.leading and has_positions else ""
        missing = "; some steps not computed" if self.left_out else ""
        return f"Layer 1 gets {text}{first}{missing}."

    def describe(self, has_positions: bool) -> str:
        """The recipe in one sentence."""
        parts = ["token row" + (f" x {self.scale:.4g}" if self.scale != 1 else "")]
        if has_positions:
            parts.append("position row")
        if self.token_type is not None:
            parts.append(f"token-type row {self.token_type_id}")
        text = " + ".join(parts)
        if self.norm_weight is not None:
            text = f"LayerNorm({text})"
        sentence = f"What enters layer 1: {text}."
        if has_positions and self.position_index(0):
            first = f"{' '.join(self.leading)} comes first, so the" if self.leading else "The"
            # Rows counted from 1, as places are (the chapter's count).
            sentence += f" {first} first word stands at position-table row {self.position_index(0) + 1}."
        if self.left_out:
            sentence += " Not computed here: " + "; ".join(self.left_out) + "."
        return sentence


@dataclass(frozen=True)
class LayerInput:
    """One token of a text on its way into layer 1.

    ``place`` counts from 0 in the learner's text (the window shows place + 1, as
    the chapter counts); ``position_index`` is the position table's own row.
    ``enters`` is what enters layer 1, or None when a step could not be computed.
    """

    token_id: int
    place: int
    token_row: np.ndarray
    position_index: int | None
    position_row: np.ndarray | None
    type_row: np.ndarray | None
    total: np.ndarray
    enters: np.ndarray | None
    normalised: bool
    note: str = ""
    steps: tuple[str, ...] = field(default=())

    def place_text(self) -> str:
        """ "place 1, position-table row 1": both counted from 1, as the chapter counts."""
        if self.position_index is None:
            return f"place {self.place + 1:,}"
        return f"place {self.place + 1:,}, position-table row {self.position_index + 1:,}"


def recipe_for(table: EmbeddingTable) -> Recipe:
    """Read from the model's files how it builds its first layer's input; small tensors are mapped, not loaded."""
    config = table.config
    model_type = str(config.get("model_type", "") or "")
    # A GGUF file's recipe is its own: the folder it lies in may hold another model's files.
    folder = None if table.from_gguf else table.folder
    leading, type_id = _leading_specials(folder)
    entries = _entries(folder)
    left_out: list[str] = []
    known = True

    if entries is None:
        left_out.append("the model's other embedding tensors, which this file kind does not let us read")
        known = model_type in ADDED_TYPES | TOKEN_ONLY_TYPES | set(SCALED_TYPES)
        return Recipe(model_type, leading, _offset(model_type, config), left_out=tuple(left_out), known=known)

    prefix = _token_table_prefix(entries)
    token_type = _small(entries, prefix, ("token_type_embeddings.weight",))
    norm_weight = _small(entries, prefix, ("LayerNorm.weight", "LayerNorm.gamma", "layer_norm.weight"))
    norm_bias = _small(entries, prefix, ("LayerNorm.bias", "LayerNorm.beta", "layer_norm.bias"))
    if norm_weight is None:  # BLOOM normalises the token row right after the table
        norm_weight = _small(entries, "", ("word_embeddings_layernorm.weight",))
        norm_bias = _small(entries, "", ("word_embeddings_layernorm.bias",))
    type_row = None
    if token_type is not None and token_type.ndim == 2 and token_type.shape[1] == table.width:
        type_id = min(type_id, token_type.shape[0] - 1)
        type_row = np.array(token_type[type_id], dtype=np.float32)
    if norm_weight is not None and (norm_weight.shape != (table.width,) or norm_bias is None):
        left_out.append("a normalisation of a shape this program does not read")
        norm_weight = norm_bias = None
    eps_value = config.get("layer_norm_eps", config.get("layer_norm_epsilon"))
    eps = float(eps_value) if isinstance(eps_value, (int, float)) and eps_value > 0 else 1e-12

    scale = math.sqrt(table.width) if model_type in SCALED_TYPES else 1.0
    projections = ("embeddings_project.weight", "embedding_hidden_mapping_in.weight", "project_in.weight")
    if any(n.endswith(projections) for n in entries):
        left_out.append("a projection of the rows to the layers' width")
    if config.get("scale_embedding") or config.get("embed_scale"):
        left_out.append("a scaling of the token row set in config.json")
    if model_type not in KNOWN_TYPES:
        known = False
        left_out.append(
            f"any step a {model_type or 'model of unknown type'!r} model takes that is not in its embedding tensors"
        )
    return Recipe(
        model_type=model_type,
        leading=leading,
        position_offset=_offset(model_type, config),
        token_type=type_row,
        token_type_id=type_id,
        norm_weight=None if norm_weight is None else np.array(norm_weight, dtype=np.float32),
        norm_bias=None if norm_bias is None else np.array(norm_bias, dtype=np.float32),
        norm_eps=eps,
        scale=scale,
        left_out=tuple(left_out),
        known=known,
    )


def layer_input(table: EmbeddingTable, recipe: Recipe, token_id: int, place: int) -> LayerInput:
    """What enters layer 1 for token ``token_id`` standing at 0-based ``place`` of a text."""
    token_row = table.row(token_id)
    scaled = token_row * np.float32(recipe.scale) if recipe.scale != 1 else token_row
    steps = [f"token row {token_id:,}" + (f" x {recipe.scale:.4g}" if recipe.scale != 1 else "")]
    notes: list[str] = []
    position_index: int | None = None
    position_row = None
    if table.positions is not None:
        position_index = recipe.position_index(place)
        position_row = table.position_row(position_index)
        if position_row is None:
            notes.append(
                f"There is no position row for place {place + 1:,} (it would be position-table row "
                f"{row_number(position_index):,}; the table has {table.positions.shape[0]:,} rows)."
            )
        else:
            steps.append(row_name(position_index))
    elif table.position_note:  # a phrase ("no position table: ..."), here a sentence of its own
        notes.append(table.position_note[0].upper() + table.position_note[1:] + ".")
    total = scaled.astype(np.float32)
    if position_row is not None:
        total = total + position_row
    if recipe.token_type is not None:
        total = total + recipe.token_type
        steps.append(f"token-type row {recipe.token_type_id}")
    enters: np.ndarray | None = total
    normalised = False
    if table.positions is not None and position_row is None:
        enters = None
    elif recipe.norm_weight is not None and recipe.norm_bias is not None:
        enters = layer_norm(total, recipe.norm_weight, recipe.norm_bias, recipe.norm_eps)
        normalised = True
    if recipe.left_out:
        notes.append("Not computed here: " + "; ".join(recipe.left_out) + ".")
    return LayerInput(
        token_id=token_id,
        place=place,
        token_row=token_row,
        position_index=position_index,
        position_row=position_row,
        type_row=recipe.token_type,
        total=total,
        enters=enters,
        normalised=normalised,
        note=" ".join(notes),
        steps=tuple(steps),
    )


def layer_norm(row: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm as torch computes it: centre, divide by the root of the biased variance plus eps, scale, shift."""
    x = np.asarray(row, dtype=np.float64)
    centred = x - x.mean()
    normalised = centred / np.sqrt((centred**2).mean() + eps)
    return (normalised * weight + bias).astype(np.float32)


def _offset(model_type: str, config: dict[str, object]) -> int:
    if model_type in PADDING_OFFSET_TYPES:
        pad = config.get("pad_token_id", 1)
        return (pad if isinstance(pad, int) else 1) + 1
    return 2 if model_type in OFFSET_TWO_TYPES else 0


def _entries(folder: Path | None) -> dict[str, TensorEntry] | None:
    if folder is None:
        return None
    try:
        return read_all_headers(weight_files(folder))
    except EmbedExplorerError:
        return None


def _token_table_prefix(entries: dict[str, TensorEntry]) -> str:
    """The name before the token table's own name: "embeddings." for "embeddings.word_embeddings.weight"."""
    for suffix in TOKEN_TABLE_NAMES:
        names = [n for n in entries if n == suffix or n.endswith("." + suffix)]
        if names:
            name = min(names, key=len)
            own = suffix.rsplit(".", 2)[-2] + ".weight"  # "word_embeddings.weight"
            return name[: -len(own)]
    return ""


def _small(entries: dict[str, TensorEntry], prefix: str, names: tuple[str, ...]) -> np.ndarray | None:
    for name in names:
        entry = entries.get(prefix + name)
        if entry is not None and entry.numel <= 1 << 22:
            return map_tensor(entry)
    return None


def _leading_specials(folder: Path | None) -> tuple[tuple[str, ...], int]:
    """Special tokens the tokenizer puts before a single text, and the token-type id of the text."""
    if folder is None or not (folder / "tokenizer.json").is_file():
        return (), 0
    try:
        processor = read_json_member(
            folder / "tokenizer.json", "post_processor", "tokenizer file", TOKENIZER_FILE_LIMIT, TokenizerMismatchError
        )
    except TokenizerMismatchError:
        return (), 0
    return _template_lead(processor)


def _template_lead(processor: object) -> tuple[tuple[str, ...], int]:
    if not isinstance(processor, dict):
        return (), 0
    kind = processor.get("type")
    if kind == "Sequence":
        for inner in processor.get("processors") or []:
            found = _template_lead(inner)
            if found[0]:
                return found
        return (), 0
    if kind in ("BertProcessing", "RobertaProcessing"):
        cls = processor.get("cls")
        return ((str(cls[0]),) if isinstance(cls, list) and cls else ()), 0
    if kind == "TemplateProcessing":
        leading: list[str] = []
        for item in processor.get("single") or []:
            if not isinstance(item, dict):
                continue
            if "Sequence" in item:
                type_id = item["Sequence"].get("type_id", 0)
                return tuple(leading), int(type_id) if isinstance(type_id, int) else 0
            special = item.get("SpecialToken")
            if isinstance(special, dict):
                leading.append(str(special.get("id", "")))
    return (), 0
