"""The engine: numbers only, never Qt. Every question about a table is answered here."""

from .errors import EmbedExplorerError
from .tables import EmbeddingTable, open_table

__all__ = ["EmbedExplorerError", "EmbeddingTable", "open_table"]
