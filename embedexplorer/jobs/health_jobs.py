"""Vocabulary health of the open table: a long job with progress, stopped by a newer request or Stop."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.health.report import HealthReport
from ..core.health.vocabulary_health import vocabulary_health
from .base import JobContext, Kind, Lane


@dataclass(frozen=True)
class HealthRequest:
    output_head: bool = True  # also read the model's own output head, where it has one
    provenance: bool = True  # hash the table file for the exports' provenance (once per file)


def health(ctx: JobContext, request: HealthRequest) -> HealthReport:
    table = ctx.session.table
    return vocabulary_health(table, ctx.progress, output_head=request.output_head, provenance=request.provenance)


HEALTH = Kind("health", Lane.LONG, health)
