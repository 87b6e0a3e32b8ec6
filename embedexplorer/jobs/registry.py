"""Every request kind the worker answers, in one list: adding a kind means adding it here."""

from __future__ import annotations

from .base import Kind
from .table_jobs import COSINE, LOAD, MAP, NEIGHBOURS, ROW, TOKENS

KINDS: tuple[Kind[object, object], ...] = (LOAD, TOKENS, ROW, NEIGHBOURS, COSINE, MAP)  # type: ignore[assignment]

