"""Vocabulary health of the open table: a long job with progress, stopped by a newer request or Stop.

The repeat check (``HEALTH_VERIFY``) asks the whole model about the top candidates in the model's
process the Layers pane uses (``layer_jobs.model_process``): one model loaded once for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.common.errors import IncompleteModelError
from .base import JobContext, Kind, Lane
from .layer_jobs import model_process

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows
    from ..core.health.repeat_check import RepeatCheck
    from ..core.health.report import HealthReport


@dataclass(frozen=True)
class HealthRequest:
    output_head: bool = True  # also read the model's own output head, where it has one
    provenance: bool = True  # hash the table file for the exports' provenance (once per file)


def health(ctx: JobContext, request: HealthRequest) -> HealthReport:
    from ..core.health.vocabulary_health import vocabulary_health

    table = ctx.session.table
    return vocabulary_health(table, ctx.progress, output_head=request.output_head, provenance=request.provenance)


HEALTH = Kind("health", Lane.LONG, health)


@dataclass(frozen=True)
class VerifyRequest:
    """Ask the model to repeat each of these tokens (the most suspicious first); at most ``MAX_CANDIDATES``."""

    token_ids: tuple[int, ...]


@dataclass(frozen=True)
class CheckPossibleRequest:
    """May the open table's model be asked to repeat tokens, as far as its files tell without loading it?"""


@dataclass(frozen=True)
class CheckPossible:
    unavailable: str | None  # why not, in one sentence (a GGUF file, a masked model, no folder); None: it may


def check_possible(ctx: JobContext, request: CheckPossibleRequest) -> CheckPossible:
    """What the Check button says before it is pressed: the same sentence a check would end with."""
    from ..core.health.repeat_check import unavailable_reason

    table = ctx.session.table
    return CheckPossible(unavailable_reason(table.folder, gguf=table.from_gguf))


# Quick: a config file read, while the vocabulary check runs in the long lane.
HEALTH_CHECK_POSSIBLE = Kind("health_check_possible", Lane.QUICK, check_possible)


def verify(ctx: JobContext, request: VerifyRequest) -> RepeatCheck:
    """The repeat check, or one sentence saying why the model cannot be asked (never an error for that)."""
    from ..core.health.check_counts import MAX_CANDIDATES
    from ..core.health.repeat_check import BATCH, RepeatCheck, repeat_prompts
    from ..core.layers import output_head as oh

    table = ctx.session.table
    reason = check_possible(ctx, CheckPossibleRequest()).unavailable
    if reason is not None:
        return RepeatCheck(unavailable=reason)
    rows = int(table.rows.shape[0])
    ids = tuple(int(i) for i in request.token_ids if 0 <= int(i) < rows)[:MAX_CANDIDATES]
    process = model_process(ctx.session)
    try:
        model = process.load(str(table.folder), name=table.name, progress=ctx.progress, should_stop=ctx.stopped)
    except IncompleteModelError as exc:
        return RepeatCheck(unavailable=f"The check with the model needs the whole model, and {exc}")
    if model.head_kind not in (oh.TIED, oh.OWN):
        return RepeatCheck(unavailable="The check with the model needs a next-token head; this model has none.")
    if not ids:
        return RepeatCheck(vocabulary=rows)
    prompts = repeat_prompts(lambda text: [t.id for t in table.encode(text)], model.prefix, ids)
    ctx.progress(0, len(ids), "Asking the model to repeat each token")
    found = model.repeat_probabilities(prompts, ids, BATCH, ctx.stopped, ctx.progress)
    return RepeatCheck(ids, tuple(float(p) for p in found), vocabulary=rows)


HEALTH_VERIFY = Kind("health_verify", Lane.LONG, verify)
