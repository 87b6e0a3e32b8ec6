"""EmbedExplorer: look inside a language model's token embedding table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["open_table", "__version__"]

if TYPE_CHECKING:
    from .core.tables import open_table


def __getattr__(name: str) -> Any:
    # Importing the package must stay cheap: the window shows before numpy loads.
    if name == "open_table":
        from .core.tables import open_table

        return open_table
    raise AttributeError(name)
