"""One reader per model file kind, behind the ``claims``/``open`` protocol of ``base.Reader``.

To add a file kind: write a module with a class that has ``name``, ``label``, ``patterns``,
``claims(path)`` and ``open(path, report, separate_tokenizer) -> OpenedModel``, and add its
instance to READERS. The file dialog, the drop target and the command line's help are made
from this list.
"""

from __future__ import annotations

from .base import OpenedModel, ProgressCallback, Reader
from .gguf import READER as GGUF_READER
from .safetensors import READER as SAFETENSORS_READER

# Asked in this order; the first that claims a path opens it.
READERS: tuple[Reader, ...] = (SAFETENSORS_READER, GGUF_READER)



def file_patterns() -> tuple[str, ...]:
    """Every file name pattern a reader opens, in the readers' order."""
    return tuple(dict.fromkeys(pattern for reader in READERS for pattern in reader.patterns))


def file_dialog_filter() -> str:
    """A file dialog's filter: all model files first, then one line per reader, then all files."""
    lines = [f"Model files ({' '.join(file_patterns())})"]
    lines += [f"{reader.label} ({' '.join(reader.patterns)})" for reader in READERS]
    return ";;".join([*lines, "All files (*)"])


def kinds_text() -> str:
    """The readers for a help text: "model folder (...), .gguf file (...)"."""
    return ", ".join(reader.label for reader in READERS)


__all__ = ["READERS", "OpenedModel", "ProgressCallback", "Reader", "file_dialog_filter", "file_patterns", "kinds_text"]
