"""EmbedExplorer: look inside a language model's token embedding table."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# OpenBLAS keeps its threads spinning on the cores for about a tenth of a second after
# every call. On two cores that starves whatever runs next: the window's thread, and
# the bfloat16 scan, which took 7.4 ms right after a float32 pass instead of 4.0 ms (and
# so lost the timing that picks it). Its threads sleep at once with this; BLAS calls
# themselves measured no slower. OpenBLAS reads it when numpy loads, so it is set here,
# before anything imports numpy; a value the user set stays.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

__version__ = "0.2.0"  # the one place the version is written (CHANGELOG.md says what each brought)
__all__ = ["open_table", "__version__"]

if TYPE_CHECKING:
    from .core.tables.opening import open_table


def __getattr__(name: str) -> Any:
    # Importing the package must stay cheap: the window shows before numpy loads.
    if name == "open_table":
        from .core.tables.opening import open_table

        return open_table
    raise AttributeError(name)
