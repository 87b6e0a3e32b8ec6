"""The model run forward: one token of a text through every layer, compared with the table.

The table alone is the token before it has seen its sentence. Here the whole model is
loaded on demand, from the same folder as the table, with transformers' own class for
the architecture (never a model's own code, never a pickle), and a text is run through
it once. For one token of that text we report, for the input and after each layer, the
vector's length, its cosine to the token's own table row, its cosine to a second token's
vector (the chapter's two "bank"s) and the table rows nearest to it.

torch and transformers are imported only when a model is loaded: opening a table and
asking the quick questions never pays for them.
"""

from __future__ import annotations

import time

import numpy as np

from ..common.errors import EmbedExplorerError
from ..common.progress import ProgressCallback
from ..search import neighbours as nb
from ..search.scan_threads import own_thread_only
from ..tables.embedding_table import EmbeddingTable, Neighbour
from . import output_head as oh
from .answers import (
    DEFAULT_K,
    Guess,
    LayerGuesses,
    LayerInput,
    LayerRun,
    LayerRunner,
    LayersAnswer,
    LayerStep,
    StopCheck,
    stop_if_asked,
)
from .layer_schedule import SearchSchedule
from .places import place_token


def trace(
    table: EmbeddingTable,
    model: LayerRunner,
    text: str,
    place: int,
    *,
    compare: tuple[str, int] | None = None,
    k: int = DEFAULT_K,
    should_stop: StopCheck | None = None,
    progress: ProgressCallback | None = None,
) -> LayersAnswer:
    """The token at ``place`` of ``text`` through every layer: lengths, cosines and nearest rows.

    ``compare`` is a second text and place: its token's vector is compared with this one
    after every layer (the chapter's "bank" in two sentences). Layers are compared with
    the table as they arrive: a model in a child process sends each layer as soon as it
    is computed, so the table is searched for layer i while the model computes layer i + 1.
    """
    report = progress or (lambda done, total, message: None)
    placed, ids = place_token(table, model, text, place)
    other = None if compare is None else place_token(table, model, compare[0], compare[1])
    runs = [LayerRun(tuple(ids), placed.position, placed.token.id, k)]
    if other is not None:
        runs.append(LayerRun(tuple(other[1]), other[0].position, None))
    report(0, 2, "Running the text through the layers")
    found: list[dict[int, tuple[np.ndarray, np.ndarray]]] = [{} for _ in runs]
    nearest: dict[int, tuple[Neighbour, ...]] = {}
    pending: list[int] = []  # layers that arrived but are not compared with the table yet
    schedule = SearchSchedule(model.layers + 1)
    layer_input: LayerInput | None = None
    guesses: LayerGuesses | None = None
    for index, batch in model.layer_runs(runs, should_stop):
        _check_width(table, batch.compared)
        for layer, vector, compared in zip(batch.layers, batch.vectors, batch.compared, strict=True):
            found[index][layer] = (vector, compared)
        if index != 0:
            continue
        layer_input = batch.input or layer_input
        guesses = batch.guesses or guesses
        pending += batch.layers
        schedule.arrived(len(batch.layers))
        if k and schedule.search_now(len(pending)):
            stop_if_asked(should_stop)
            if not nearest:
                report(1, 2, "Comparing every layer with the table")
            vectors_now = np.stack([found[0][layer][1] for layer in pending])
            _check_model_numbers(pending, vectors_now)
            # While the model still runs it needs the other cores; once it is done the search takes them all.
            running = sum(map(len, found)) < (model.layers + 1) * len(runs)
            began = time.perf_counter()
            with own_thread_only(running):
                results = table.neighbours_of_vectors(vectors_now, k)
            schedule.searched(len(pending), time.perf_counter() - began)
            for layer, result in zip(pending, results, strict=True):
                nearest[layer] = result.neighbours
            pending = []
    vectors, compared_all = _stacked(found[0])
    other_vectors = None if other is None else _stacked(found[1])[0]
    has_guess = oh.guesses(model.head_kind) and k > 0
    if layer_input is None or (k and len(nearest) != vectors.shape[0]):
        raise EmbedExplorerError("The model's answer was incomplete; ask again.")
    if has_guess and (guesses is None or guesses.ids.shape[0] != vectors.shape[0]):
        raise EmbedExplorerError("The model's guesses were incomplete; ask again.")
    row = table.row(placed.token.id)
    stop_if_asked(should_stop)
    steps = []
    for layer in range(vectors.shape[0]):
        steps.append(
            LayerStep(
                layer=layer,
                length=float(np.linalg.norm(vectors[layer].astype(np.float64))),
                cosine_to_row=nb.cosine(compared_all[layer], row),
                cosine_to_compare=None if other_vectors is None else nb.cosine(vectors[layer], other_vectors[layer]),
                nearest=nearest.get(layer, ()),
                guess=() if guesses is None else _guesses_of(table, guesses, layer),
            )
        )
    report(2, 2, "Layers ready")
    return LayersAnswer(
        model=model.name,
        token=placed,
        compare=None if other is None else other[0],
        steps=tuple(steps),
        input=layer_input,
        head_note=model.head_note,
        layers=model.layers,
        k=k,
        head_kind=model.head_kind,
        guess_note=oh.guess_note(model.head_kind),
        head_row_cosine=None if guesses is None else guesses.row_cosine,
    )


def _guesses_of(table: EmbeddingTable, guesses: LayerGuesses, layer: int) -> tuple[Guess, ...]:
    """One layer's guesses with their tokens' readable forms (an id past the table's rows shows as its id)."""
    found = []
    for token_id, prob in zip(guesses.ids[layer].tolist(), guesses.probs[layer].tolist(), strict=True):
        token = table.tokens[token_id] if 0 <= token_id < len(table.tokens) else f"[id {token_id}]"
        found.append(Guess(int(token_id), token, float(prob)))
    return tuple(found)


def _check_width(table: EmbeddingTable, compared: np.ndarray) -> None:
    """Refuse, in one sentence, a model whose layers work in another width than its table's rows (ALBERT:
    128-number rows projected up to 768 before the first layer, and nothing that projects them back)."""
    if compared.ndim != 2 or not len(compared):  # a batch of no layers (all were handed over one by one)
        return
    width = compared.shape[-1]
    if width != table.width:
        raise EmbedExplorerError(
            f"This model's layers work with {width:,} numbers and its embedding table's rows have "
            f"{table.width:,} (it projects each row to the layers' width before the first layer, as ALBERT does), "
            "so its layers cannot be compared with the table's rows."
        )


def _check_model_numbers(layers: list[int], vectors: np.ndarray) -> None:
    """Refuse, naming the layer, a model whose own numbers went NaN or infinite (the user gave no vector)."""
    finite = np.isfinite(vectors).all(axis=1)
    if finite.all():
        return
    layer = layers[int(np.argmin(finite))]
    where = "what enters layer 1" if layer == 0 else f"the output of layer {layer}"
    raise EmbedExplorerError(
        f"The model's own numbers are not finite (NaN or infinity) in {where}: its weights hold such numbers or "
        "overflow there, so its layers cannot be compared with the table. The model file may be damaged."
    )


def _stacked(layers: dict[int, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The vectors and compared vectors of layers 0 .. n in order; every layer must be there."""
    if sorted(layers) != list(range(len(layers))) or not layers:
        raise EmbedExplorerError("The model's answer was incomplete; ask again.")
    return (
        np.stack([layers[i][0] for i in range(len(layers))]),
        np.stack([layers[i][1] for i in range(len(layers))]),
    )
