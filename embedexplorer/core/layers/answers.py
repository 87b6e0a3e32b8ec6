"""What a trace answers: each layer's figures, the model's guesses, the token followed, and what runs forward."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..common.constants import LAYERS_K
from ..common.errors import Interrupted
from ..tables.embedding_table import Neighbour
from ..text.texts import Token
from . import output_head as oh

StopCheck = Callable[[], bool]
# Called with a layer's number (0 for the input) and every position's vector after it, as soon as it is computed.
LayerCallback = Callable[[int, Any], None]

DEFAULT_K = LAYERS_K


# ----- answers ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class LayerStep:
    """One token after one layer (layer 0 is what enters layer 1).

    Attributes
    ----------
    layer:
        0 for the input, then 1 .. n.
    length:
        Length of the token's vector after this layer (the numbers the next layer receives).
    cosine_to_row:
        Cosine of the vector compared with the table (see ``LayersAnswer.head_note``) and the token's own row.
    cosine_to_compare:
        Cosine between this token's vector and the compared token's vector after the same layer, or None.
    nearest:
        The table rows nearest to the vector compared with the table, best first (cosine: which rows
        it points like).
    guess:
        The model's own guess after this layer, most likely first: its output head applied to the
        vector (final norm, dot product with every head row, bias, softmax). Empty without a head.
    """

    layer: int
    length: float
    cosine_to_row: float
    cosine_to_compare: float | None
    nearest: tuple[Neighbour, ...]
    guess: tuple[Guess, ...] = ()


@dataclass(frozen=True)
class Guess:
    """One token the model's output head ranks high, with its probability."""

    id: int
    token: str
    prob: float


@dataclass(frozen=True)
class PlacedToken:
    """A token at a place of a text: places count from 1, as the chapter counts them."""

    text: str
    place: int
    token: Token
    position: int  # the model's input position (BERT's [CLS] takes position 0)
    count: int  # tokens in the text, special tokens not counted


@dataclass(frozen=True)
class LayerInput:
    """What really enters layer 1 for one token, from the model's own embedding step.

    ``parts`` are the rows the model adds (token, position, token type), ``total`` their
    sum, and ``enters`` what the first layer receives: the same as ``total`` for GPT-2,
    the sum after LayerNorm for BERT, the token row scaled or alone for others.
    """

    parts: tuple[tuple[str, np.ndarray], ...]
    total: np.ndarray
    enters: np.ndarray
    note: str


@dataclass(frozen=True)
class LayersAnswer:
    """One token of a text through every layer of the model, and how it compares with the table."""

    model: str
    token: PlacedToken
    compare: PlacedToken | None
    steps: tuple[LayerStep, ...]
    input: LayerInput
    head_note: str
    layers: int
    k: int
    head_kind: str = oh.NONE  # see ``output_head``: tied, own, masked, none or decoder
    guess_note: str = ""
    # Cosine between the token's input row and its row in an untied output head (None: tied or no head).
    head_row_cosine: float | None = None

    def as_rows(self) -> list[dict[str, object]]:
        """The per-layer rows as plain data (the CLI's JSON)."""
        return [
            {
                "layer": s.layer,
                "length": s.length,
                "cosine_to_row": s.cosine_to_row,
                "cosine_to_compare": s.cosine_to_compare,
                "nearest": [{"token": n.token, "id": n.id, "cosine": n.cosine} for n in s.nearest],
                "guess": [{"id": g.id, "token": g.token, "prob": g.prob} for g in s.guess],
            }
            for s in self.steps
        ]


class LayerRun(NamedTuple):
    """One text to run forward: the ids the model reads, the position to follow, the token
    whose input parts are wanted (None for a compared text, which needs only its vectors),
    and how many of the model's guesses to give after each layer (0: none)."""

    ids: tuple[int, ...]
    position: int
    token_id: int | None
    k: int = 0


@dataclass(frozen=True)
class LayerGuesses:
    """The model's guesses after the input and every layer of one run, from its own output head."""

    ids: np.ndarray  # (layers + 1, k) token ids, most likely first
    probs: np.ndarray  # (layers + 1, k) float32
    row_cosine: float | None  # the token's input row vs its output row (untied heads only)


@dataclass(frozen=True)
class LayerBatch:
    """Some layers of one run, as they become known: the vector at the run's position after each
    layer, the same vectors as the table is compared with them, and (once) what enters layer 1."""

    layers: tuple[int, ...]
    vectors: np.ndarray  # (len(layers), width), float32
    compared: np.ndarray  # (len(layers), width), float32
    input: LayerInput | None = None
    guesses: LayerGuesses | None = None  # sent once, after the last layer


class LayerRunner(Protocol):
    """What ``trace`` needs of a model: ``LayerModel`` in this process, or one in a child process."""

    name: str
    layers: int
    max_positions: int | None
    head_note: str
    head_kind: str

    def model_input(self, text_ids: list[int]) -> tuple[list[int], list[int]]: ...

    def layer_runs(self, runs: Sequence[LayerRun], should_stop: StopCheck | None) -> Iterator[tuple[int, LayerBatch]]:
        """Batches of layers, each tagged with its run's index, in the order the runs were given."""
        ...


def stop_if_asked(should_stop: StopCheck | None) -> None:
    if should_stop is not None and should_stop():
        raise Interrupted("Stopped: a newer question replaced this one.")
