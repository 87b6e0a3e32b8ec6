"""Request kinds: what the window can ask the worker, each a plain function (no Qt here)."""

from .base import JobContext, Kind, Lane, Session

__all__ = ["JobContext", "Kind", "Lane", "Session"]
