"""Directions as a request kind: the whole vocabulary scored on a direction, with its baseline (long lane)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.directions.direction import DirectionSpec
from ..core.directions.report import DirectionReport, direction_report
from ..core.directions.scores import END_SIZE
from .base import JobContext, Kind, Lane


@dataclass(frozen=True)
class DirectionRequest:
    spec: DirectionSpec
    words: tuple[str, ...] = ()
    k: int = END_SIZE
    baseline: bool = True


def score_direction(ctx: JobContext, request: DirectionRequest) -> DirectionReport:
    # The first question on a table also scores 100 random directions and measures each
    # number's spread (a pass each over the table): progress and Stop between blocks.
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
