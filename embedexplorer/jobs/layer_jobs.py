"""One token through every layer: load the whole model once (long lane), then run texts through it.

The model runs in a child process (``core.layer_process``): the worker's process never
imports torch or transformers, so the window never waits for them. The child's handle
lives in ``Session.derived`` beside the table it belongs to, so it ends with the table;
``LAYERS_WARM`` starts it early (when the Layers pane is first shown), so that torch is
imported before the first question. A folder that has the table but not the whole model
is not an error here but an answer: the pane says how big the model is and offers a download.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.common.blas import limit_blas
from ..core.common.constants import LAYERS_K
from ..core.common.errors import IncompleteModelError
from .base import JobContext, Kind, Lane, Session

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows
    from ..core.layers.answers import LayersAnswer
    from ..core.layers.layer_process import LayerProcess

# Where the model's process lives in ``Session.derived``.
MODEL_KEY = "layer_model"


@dataclass(frozen=True)
class LayersRequest:
    """A token at ``place`` (from 1) of ``text``, and optionally a second token to compare it with."""

    text: str
    place: int
    compare_text: str | None = None
    compare_place: int | None = None  # None: the first token of compare_text with the same id
    k: int = LAYERS_K


@dataclass(frozen=True)
class ModelMissing:
    """The table is on disk but the whole model is not: what to tell the user and what to offer."""

    message: str
    model_bytes: int | None
    download_id: str | None  # a Hub id the whole model can be downloaded from, when the table came from one


@dataclass(frozen=True)
class LayersReply:
    """Either the answer or why the model cannot run yet (``missing``)."""

    request: LayersRequest
    answer: LayersAnswer | None = None
    missing: ModelMissing | None = None
    load_seconds: float | None = None  # set when this request had to load the model first


def run_layers(ctx: JobContext, request: LayersRequest) -> LayersReply:
    from ..core.layers.questions import check_layers_question, layers_unavailable
    from ..core.layers.trace import trace
    from ..core.sources.resolve import looks_like_hub_id

    table = ctx.session.table
    # Mistakes in the texts are told at once, before any model is loaded.
    _chosen, compare = check_layers_question(
        table, request.text, request.place, request.compare_text, request.compare_place
    )
    unavailable = layers_unavailable(table)
    if unavailable is not None:
        return LayersReply(request, missing=ModelMissing(unavailable, None, None))
    ctx.check()
    process = model_process(ctx.session)
    load_seconds = None
    started = time.perf_counter()
    was_loaded = process.model is not None
    try:
        model = process.load(
            str(table.folder or table.name), name=table.name, progress=ctx.progress, should_stop=ctx.stopped
        )
    except IncompleteModelError as exc:
        hub_id = table.name if looks_like_hub_id(table.name) else None
        return LayersReply(request, missing=ModelMissing(str(exc), exc.model_bytes, hub_id))
    if not was_loaded:
        load_seconds = time.perf_counter() - started
    # The child runs the text forward on one core while this thread compares its layers with the
    # table as they arrive: the search keeps to the other core (``trace`` keeps its passes to this
    # thread until the model is done; BLAS, used without the C scan, gets one thread).
    with limit_blas(1):
        answer = trace(
            table,
            model,
            request.text,
            request.place,
            compare=compare,
            k=request.k,
            should_stop=ctx.stopped,
            progress=ctx.progress,
        )
    return LayersReply(request, answer=answer, load_seconds=load_seconds)


LAYERS = Kind("layers", Lane.LONG, run_layers)


def model_process(session: Session) -> LayerProcess:
    """The open table's model process, started now if it is not running yet."""
    from ..core.layers.layer_process import LayerProcess

    found = session.derived.get(MODEL_KEY)
    if isinstance(found, LayerProcess):
        return found
    table = session.table
    folder = table.folder or table.name
    # The child reads the model's design (weight count, special tokens) as soon as it runs.
    started = LayerProcess(prepare=str(folder))
    # Both lanes may get here at once: the first process stored wins, the other ends at once.
    kept = session.derived.setdefault(MODEL_KEY, started)
    if kept is not started:
        started.close()
    assert isinstance(kept, LayerProcess)
    return kept


@dataclass(frozen=True)
class WarmRequest:
    """Start the model's process ahead of need (it imports torch; the model loads on the first question)."""


@dataclass(frozen=True)
class Warmed:
    started: bool  # False when it was running already, or when this model's layers are not run here
    unavailable: str | None = None  # why this model's layers are not run here (a GGUF file), said before asking


def run_warm(ctx: JobContext, request: WarmRequest) -> Warmed:
    from ..core.layers.layer_process import LayerProcess
    from ..core.layers.questions import layers_unavailable

    table = ctx.session.table  # no table, no model to run: says so as every kind does
    unavailable = layers_unavailable(table)
    if unavailable is not None:  # a GGUF file: no process (torch and all) for layers never run
        return Warmed(False, unavailable)
    running = isinstance(ctx.session.derived.get(MODEL_KEY), LayerProcess)
    if not running:
        model_process(ctx.session)
    return Warmed(not running)


# Quick: starting a process takes milliseconds, and it must not wait behind a map in the long lane.
LAYERS_WARM = Kind("layers_warm", Lane.QUICK, run_warm)
