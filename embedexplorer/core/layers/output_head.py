"""The model's own output head: which one a folder has, and the guess it makes after every layer.

A language model turns its last vector into a guess by the final norm, then a dot product
with every row of its output head (plus a bias, if it has one), then softmax. The head is
either the embedding table itself (tied: GPT-2, BERT's masked-LM decoder) or a table of its
own (Llama 3 8B, Qwen2 7B, Mistral). Applying the same steps to the vector after an earlier
layer gives the model's guess had it stopped there. An encoder saved without its head (the
bundled MiniLM) has no guess at all, and neither has an encoder-decoder model (T5): its head
reads the decoder, and the layers run here are the encoder's, the half that reads the table.

``describe`` reads only config.json and the safetensors headers (no torch): ``info`` uses it.
The rest runs where the model is (the model's process): the parent gets ids and probabilities.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..common.errors import EmbedExplorerError
from ..common.files import read_json

# How the folder's head relates to the embedding table (DECODER: it reads a decoder, which is not run here).
TIED, OWN, MASKED, NONE, DECODER = "tied", "own", "masked", "none", "decoder"
# The heads whose guess after each layer is shown.
GUESSING = (TIED, OWN, MASKED)
_CONFIG_LIMIT = 1 << 20
# Weight names that mark a head in a checkpoint (with or without the base model's prefix).
_MASKED_MARK = "cls.predictions.transform.dense.weight"
_CAUSAL_MARK = ("lm_head.weight", "embed_out.weight")  # embed_out: GPT-NeoX (Pythia)
_ROBERTA_MARK = "lm_head.dense.weight"  # RoBERTa's masked-LM head
# Masked-LM heads named by one architecture alone (ELECTRA's generator has a "predictions.dense" too).
_OWN_MASKED_MARKS = {"albert": "predictions.dense.weight", "distilbert": "vocab_transform.weight"}
# Architectures with a decoder head transformers ties to the input table when the config says so.
_ENCODERS = ("bert", "roberta", "xlm-roberta", "distilbert", "electra", "albert", "mpnet", "deberta", "deberta-v2")


@dataclass(frozen=True)
class HeadFacts:
    """Which output head a folder's model has, in words a reader of the chapter understands."""

    kind: str  # TIED, OWN, MASKED or NONE
    sentence: str

    @property
    def has_guess(self) -> bool:
        return guesses(self.kind)

    @property
    def is_table(self) -> bool:
        """Whether the head's rows are the embedding table's rows (the table is used again at the end)."""
        return self.kind in (TIED, MASKED)


def head_kind(config: dict[str, Any], names: Iterable[str]) -> str:
    """The head a checkpoint with these weight names and this config has (see ``TIED`` ...)."""
    names = list(names)
    architectures = config.get("architectures")
    if isinstance(architectures, list) and any(str(a).endswith("EncoderModel") for a in architectures):
        return NONE  # T5's encoder saved alone (a text encoder of an image model): no head at all
    if config.get("is_encoder_decoder"):
        return DECODER  # T5 and the like: the head reads the decoder, which the layers here do not run
    model_type = str(config.get("model_type", ""))
    encoder = model_type in _ENCODERS
    marks: tuple[str, ...] = (_MASKED_MARK,)
    if encoder:
        marks += (_ROBERTA_MARK, _OWN_MASKED_MARKS.get(model_type, _MASKED_MARK))
    if any(n.endswith(marks) for n in names):
        return MASKED
    tied = bool(config.get("tie_word_embeddings", True))
    if any(n.endswith(_CAUSAL_MARK) for n in names) and not tied:
        return OWN
    if encoder:
        return NONE  # an encoder saved without its masked-LM head (sentence-transformers' MiniLM)
    if tied:
        return TIED
    return NONE  # untied, and the checkpoint has no lm_head: only the base model was saved


def describe(folder: Path | str) -> HeadFacts:
    """What the folder's model has for an output head, from config.json and the weight names alone."""
    from ..formats.safetensors_io import read_all_headers, weight_files

    folder = Path(folder)
    try:
        config = read_json(folder / "config.json", "model config", _CONFIG_LIMIT, EmbedExplorerError)
        names = read_all_headers(weight_files(folder)).keys()
    except (EmbedExplorerError, OSError):
        return HeadFacts(NONE, "output head: unknown (the folder has no config.json and weights to read it from)")
    if not isinstance(config, dict):
        return HeadFacts(NONE, "output head: unknown (config.json is not an object)")
    return HeadFacts(*_sentence(head_kind(config, names)))


def describe_gguf(path: Path | str) -> HeadFacts:
    """What a GGUF file's model has for an output head: a table of its own (``output.weight``, in any part of
    a split model), or, without one, its token table read again, as llama.cpp does."""
    from ..formats.gguf_split import read_parts
    from ..readers.gguf import OUTPUT_HEAD

    try:
        parts = read_parts(Path(path))
    except (EmbedExplorerError, OSError):
        return HeadFacts(NONE, "output head: unknown (the file's header could not be read)")
    return HeadFacts(*_sentence(OWN if any(OUTPUT_HEAD in part.tensors for part in parts) else TIED))


def _sentence(kind: str) -> tuple[str, str]:
    words = {
        TIED: "output head: the embedding table itself (tied): the table is used again at the end",
        OWN: "output head: a table of its own (untied), not the embedding table",
        MASKED: "output head: a masked-LM head whose rows are the embedding table (tied), after a transform",
        NONE: "output head: none in this folder (an encoder saved without one): no guess of the model to show",
        DECODER: (
            "output head: the decoder's (an encoder-decoder model): its layers here are the encoder's, which reads "
            "the table; no guess of the model to show"
        ),
    }
    return kind, words[kind]


def guesses(kind: str) -> bool:
    """Whether a model with this head shows its guess after each layer."""
    return kind in GUESSING


def guess_note(kind: str) -> str:
    """What the guess column answers, for the pane and the command line."""
    if kind == MASKED:
        return (
            "Guess: the model's masked-LM head after each layer (its transform, every row of the embedding "
            "table plus a bias, softmax): what it would fill in at this place."
        )
    if kind in (TIED, OWN):
        table = "the embedding table itself" if kind == TIED else "its own output table"
        return (
            f"Guess: the model's next-token guess had it stopped after each layer (final norm, dot product "
            f"with every row of {table}, length and all, softmax); after the last layer, its real guess."
        )
    if kind == DECODER:
        return (
            "No guess: an encoder-decoder model guesses from its decoder, which is not run here; these are its "
            "encoder's layers, with their nearest rows."
        )
    return "No guess: this folder has no output head (an encoder saved without one); only the nearest rows."


def percent(prob: float) -> str:
    """A probability as people read it: 12.3% or, below 1%, two significant digits (0.012%)."""
    return f"{prob:.1%}" if prob >= 0.01 else f"{prob * 100:.2g}%"


NEAREST_NOTE = (
    "Nearest rows: the table rows pointing the same way as the vector (cosine, length ignored): "
    "which input rows it resembles, not what the model would say."
)


# ----- where the model runs (torch) -----------------------------------------------------------
class OutputHead:
    """The loaded model's head: final norm (if any), the head module, and the model's own logit steps."""

    def __init__(self, kind: str, norm: Any, module: Any, config: Any, input_rows: Any) -> None:
        self.kind = kind
        self.norm = norm
        self.module = module
        self.input_rows = input_rows
        # A few architectures change the logits after the head; the model's guess does the same.
        self.softcap = getattr(config, "final_logit_softcapping", None)
        self.scale = getattr(config, "logit_scale", None) or 1.0  # Cohere
        self.divide = getattr(config, "logits_scaling", None) or 1.0  # Granite

    def rows(self) -> Any:
        """The head's rows (vocabulary x width): the embedding table itself when tied."""
        found = getattr(self.module, "predictions", self.module)  # BERT's cls.predictions, RoBERTa's lm_head
        decoder = getattr(found, "decoder", None)
        if decoder is None and hasattr(found, "__getitem__"):
            decoder = found[-1]  # DistilBERT's head, put together in ``split``
        return (decoder if decoder is not None else self.module).weight

    def logits(self, vectors: Any) -> Any:
        """The logits for vectors straight out of the layers (a tensor, n x width)."""
        import torch

        with torch.inference_mode():
            weight = self.rows()
            hidden = vectors.to(weight.dtype)
            if self.norm is not None:
                hidden = self.norm(hidden)
            logits = self.module(hidden) * self.scale / self.divide
            if self.softcap:
                logits = torch.tanh(logits / self.softcap) * self.softcap
            return logits.float()

    def top(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most likely tokens after each vector: ids (n x k) and probabilities (n x k, float32).

        One matrix product for all the layers reads the head's rows once, not once per layer.
        """
        import torch

        with torch.inference_mode():
            probabilities = torch.softmax(self.logits(torch.from_numpy(np.ascontiguousarray(vectors))), dim=-1)
            found = torch.topk(probabilities, min(k, probabilities.shape[-1]), dim=-1)
            return found.indices.numpy().astype(np.int64), found.values.numpy().astype(np.float32)

    def row_cosine(self, token_id: int) -> float | None:
        """Cosine between the token's input row and its output row; None when they are the same rows."""
        if self.kind != OWN:
            return None
        import torch

        with torch.inference_mode():
            rows = self.rows()
            if token_id >= rows.shape[0] or token_id >= self.input_rows.shape[0]:
                return None
            a = self.input_rows[token_id].double()
            b = rows[token_id].double()
            return float(a @ b / (a.norm() * b.norm()).clamp_min(1e-300))


def head_class(kind: str) -> Any:
    """The transformers auto class that builds the model with this head (AutoModel without one)."""
    import transformers

    if kind == MASKED:
        return transformers.AutoModelForMaskedLM
    if kind in (TIED, OWN):
        return transformers.AutoModelForCausalLM
    return transformers.AutoModel


def split(full: Any, kind: str, config: Any, final_norm_of: Any) -> tuple[Any, OutputHead | None]:
    """The base model (whose layers run) and the head, from a model built by ``head_class(kind)``."""
    if not guesses(kind):
        return full, None
    base = full.base_model
    if kind == MASKED:
        module = getattr(full, "cls", None) or getattr(full, "lm_head", None) or getattr(full, "predictions", None)
        if module is None and getattr(full, "vocab_projector", None) is not None:
            import torch

            # DistilBERT's head is four modules of the model, applied in this order by its forward.
            steps = ("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector")
            module = torch.nn.Sequential(*(getattr(full, step) for step in steps))
        if module is None:
            return base, None
        return base, OutputHead(kind, None, module, config, base.get_input_embeddings().weight)
    module = full.get_output_embeddings()
    if module is None:
        return base, None
    return base, OutputHead(kind, final_norm_of(base), module, config, base.get_input_embeddings().weight)
