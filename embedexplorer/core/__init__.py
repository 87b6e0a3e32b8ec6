"""The engine: numbers only, never Qt. Every question about a table is answered here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["EmbedExplorerError", "EmbeddingTable", "open_table"]

if TYPE_CHECKING:
    from .common.errors import EmbedExplorerError
    from .tables.embedding_table import EmbeddingTable
    from .tables.opening import open_table


def __getattr__(name: str) -> Any:
    # Importing a module of the engine must not load the table code and numpy: the tokenizer's
    # child process imports core.text and must start in a few tens of milliseconds.
    if name == "EmbedExplorerError":
        from .common.errors import EmbedExplorerError

        return EmbedExplorerError
    if name == "EmbeddingTable":
        from .tables.embedding_table import EmbeddingTable

        return EmbeddingTable
    if name == "open_table":
        from .tables.opening import open_table

        return open_table
    raise AttributeError(name)
