"""Directions as a request kind: the whole vocabulary scored on a direction, with its baseline (long lane)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.common.constants import END_SIZE
from .base import JobContext, Kind, Lane

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows
    from ..core.directions.direction import DirectionSpec
    from ..core.directions.report import DirectionReport


@dataclass(frozen=True)
class DirectionRequest:
    spec: DirectionSpec
    words: tuple[str, ...] = ()
    k: int = END_SIZE
    baseline: bool = True


def score_direction(ctx: JobContext, request: DirectionRequest) -> DirectionReport:
    # The first question on a table also scores 100 random directions and measures each
    # number's spread (a pass each over the table): progress and Stop between blocks.
    from ..core.directions.report import direction_report

    return direction_report(
        ctx.session.table,
        request.spec,
        request.words,
        request.k,
        baseline=request.baseline,
        progress=ctx.progress,
        check=ctx.check,
    )


DIRECTION = Kind("direction", Lane.LONG, score_direction)
