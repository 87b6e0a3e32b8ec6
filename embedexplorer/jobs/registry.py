"""Every request kind the worker answers, in one list: adding a kind means adding it here."""

from __future__ import annotations

from .base import Kind
from .compare_jobs import COMPARE
from .direction_jobs import DIRECTION
from .exercise_jobs import ANALOGY, COMPLETE, FAMILY_DISTANCES, GUESS, PAIR_TOKENS, SUGGEST, TWO_TEXTS
from .health_jobs import HEALTH, HEALTH_CHECK_POSSIBLE, HEALTH_VERIFY
from .layer_jobs import LAYERS, LAYERS_WARM
from .map_jobs import WORD_MAP
from .source_jobs import LOCAL_MODELS
from .table_jobs import COSINE, LOAD, MAP, NEIGHBOURS, ROW, TOKENS

KINDS: tuple[Kind[object, object], ...] = (  # type: ignore[assignment]
    LOAD, TOKENS, ROW, NEIGHBOURS, COSINE, MAP, WORD_MAP, LAYERS, LAYERS_WARM,
    GUESS, COMPLETE, SUGGEST, FAMILY_DISTANCES, ANALOGY, PAIR_TOKENS, TWO_TEXTS, DIRECTION, LOCAL_MODELS,
    COMPARE, HEALTH, HEALTH_VERIFY, HEALTH_CHECK_POSSIBLE,
)  # fmt: skip

