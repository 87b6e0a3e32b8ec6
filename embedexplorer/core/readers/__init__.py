"""One reader per model file kind, behind the ``claims``/``open`` protocol of ``base.Reader``.

To add a file kind: write a module with a class that has ``name``, ``claims(path)`` and
``open(path, report, separate_tokenizer) -> OpenedModel``, and add its instance to READERS.
"""

from __future__ import annotations

from .base import OpenedModel, ProgressCallback, Reader
from .gguf import READER as GGUF_READER
from .safetensors import READER as SAFETENSORS_READER

# Asked in this order; the first that claims a path opens it.
READERS: tuple[Reader, ...] = (SAFETENSORS_READER, GGUF_READER)

__all__ = ["READERS", "OpenedModel", "ProgressCallback", "Reader"]
