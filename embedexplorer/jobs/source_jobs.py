"""The models on this computer, listed off the GUI thread (File > Local models, the Model box's completions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import JobContext, Kind, Lane

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows
    from ..core.sources.local_model import LocalModel


@dataclass(frozen=True)
class LocalModelsRequest:
    recent: tuple[str, ...] = ()  # the window's recent models, listed after the ones found in the usual places


@dataclass(frozen=True)
class LocalModelsAnswer:
    models: tuple[LocalModel, ...]


def list_local_models(ctx: JobContext, request: LocalModelsRequest) -> LocalModelsAnswer:
    from ..core.sources.discovery import local_models

    ctx.check()
    return LocalModelsAnswer(tuple(local_models(request.recent)))


# The quick lane: listing reads names and first bytes only (500 models in well under a second),
# and must not wait behind a model that takes a minute to open.
LOCAL_MODELS = Kind("local_models", Lane.QUICK, list_local_models)
