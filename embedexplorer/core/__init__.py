"""The engine: numbers only, never Qt. Every question about a table is answered here."""

from .common.errors import EmbedExplorerError
from .tables.embedding_table import EmbeddingTable
from .tables.opening import open_table

__all__ = ["EmbedExplorerError", "EmbeddingTable", "open_table"]
