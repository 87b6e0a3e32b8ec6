"""The paper's check with the model itself: ask it to repeat a token, read the probability it gives it.

Land & Bartolo (2024) confirm a candidate by prompting the model to repeat it and reading
the probability the model gives the token at the place it should come back. A trained
token comes back with a high probability; an under-trained one the model cannot "see"
comes back with next to none. The token goes into the prompt by its id, never as text:
an unreachable token cannot be produced from any text at all.

The prompt is one base-model form (no chat template), the same for every token:

    Please repeat the string: "«TOKEN»"
    Repeated: "«

and the probability is read after the last ``«``: ``softmax(model(ids).logits[0, -1])[TOKEN]``.
Every prompt has the same length (only the token differs), so they run forward in batches
without padding. Only a model with a next-token head can answer; a masked LM or an encoder
saved without a head gets one sentence (``unavailable_reason``).

Nothing here imports torch: the forward pass is ``LayerModel.repeat_probabilities`` (in the
model's process for the window, the same for the command line).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..layers import output_head as oh
from .check_counts import MAX_CANDIDATES

BATCH = 8  # prompts run forward together (same length: no padding)

BEFORE = 'Please repeat the string: "«'
AFTER = '»"\nRepeated: "«'
PROMPT_SHOWN = 'Please repeat the string: "«TOKEN»"\\nRepeated: "«'


@dataclass(frozen=True)
class RepeatCheck:
    """The probability the model gives each checked token where it should repeat it, or why there is none."""

    ids: tuple[int, ...] = ()
    probabilities: tuple[float, ...] = ()
    unavailable: str | None = None  # one sentence when the check could not run
    vocabulary: int = 0  # the head's rows: 1 / vocabulary is what a model that knows nothing gives

    @property
    def by_id(self) -> dict[int, float]:
        return dict(zip(self.ids, self.probabilities, strict=True))

    def summary(self) -> dict[str, object]:
        """What the JSON summary says about the check."""
        if self.unavailable is not None:
            return {"checked": 0, "unavailable": self.unavailable}
        return {
            "checked": len(self.ids),
            "prompt": PROMPT_SHOWN,
            "chance": 1.0 / self.vocabulary if self.vocabulary else None,
        }


def unavailable_reason(folder: Path | str | None, gguf: bool = False) -> str | None:
    """Why the folder's model cannot be asked to repeat a token (None when it can, as far as the
    files tell without loading it): the check needs a next-token head."""
    if gguf:
        return (
            "The check with the model runs the whole model from a folder of safetensors weights; "
            "a GGUF file's layers are not run here, only its table is read."
        )
    if folder is None or not Path(folder).is_dir():
        return "The check with the model needs a model folder with its whole weights; this table has none."
    kind = oh.describe(folder).kind
    if kind == oh.MASKED:
        return (
            "The check with the model needs a next-token head; this model is a masked language model, "
            "which fills in blanks instead of continuing a text."
        )
    if kind == oh.DECODER:
        return (
            "The check with the model needs a next-token head after the layers it runs; this is an "
            "encoder-decoder model, whose guesses come from its decoder, which is not run here."
        )
    if kind == oh.NONE:
        return (
            "The check with the model needs a next-token head; this folder's model has none "
            "(an encoder, or a model saved without its head)."
        )
    return None


def repeat_prompts(
    encode: Callable[[str], Sequence[int]], prefix: Sequence[int], token_ids: Sequence[int]
) -> list[list[int]]:
    """One prompt per token, the token inserted by id between the model's own tokens for the words."""
    before = [*prefix, *encode(BEFORE)]
    after = list(encode(AFTER))
    return [[*before, int(token), *after] for token in token_ids]


def candidates(order: np.ndarray, count: int) -> list[int]:
    """The ``count`` most suspicious ids (bounded by ``MAX_CANDIDATES``)."""
    return [int(i) for i in order[: max(0, min(int(count), MAX_CANDIDATES))]]
