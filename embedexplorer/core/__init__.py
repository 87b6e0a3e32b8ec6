"""The engine: numbers only, never Qt. Every question about a table is answered here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["EmbedExplorerError", "EmbeddingTable", "open_table"]

if TYPE_CHECKING:
    from .common.errors import EmbedExplorerError
    from .tables.embedding_table import EmbeddingTable, open_table


def __getattr__(name: str) -> Any:
    # Importing a module of the engine must not load the table code and numpy: the tokenizer's
    # child process imports core.text and must start in a few tens of milliseconds.
    if name == "EmbedExplorerError":
        from .common.errors import EmbedExplorerError

        return EmbedExplorerError
    if name in ("EmbeddingTable", "open_table"):
        from .tables import embedding_table

        return getattr(embedding_table, name)
    raise AttributeError(name)
