"""One reader per model file kind, behind the ``claims``/``open`` protocol of ``base.Reader``.

To add a file kind: write a module with a class that has ``name``, ``label``, ``patterns``,
``claims(path)`` and ``open(path, report, separate_tokenizer) -> OpenedModel``, and add its
instance to ``readers()``. The file dialog, the drop target and the command line's help are made
from this list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .base import OpenedModel, ProgressCallback, Reader


def readers() -> tuple[Reader, ...]:
    """Every reader, in the order they are asked (imported here: they load numpy, which reading
    a folder's headers for ``tokens`` does without)."""
    from .gguf import READER as GGUF_READER
    from .safetensors import READER as SAFETENSORS_READER

    return (SAFETENSORS_READER, GGUF_READER)


def each_reader() -> Iterator[Reader]:
    """``readers()`` one by one, each imported when it is reached: a folder is the first's, and
    opening one never loads the GGUF reader."""
    from .safetensors import READER as SAFETENSORS_READER

    yield SAFETENSORS_READER
    from .gguf import READER as GGUF_READER

    yield GGUF_READER


def __getattr__(name: str) -> Any:
    if name == "READERS":
        return readers()
    raise AttributeError(name)


def file_patterns() -> tuple[str, ...]:
    """Every file name pattern a reader opens, in the readers' order."""
    return tuple(dict.fromkeys(pattern for reader in readers() for pattern in reader.patterns))


def file_dialog_filter() -> str:
    """A file dialog's filter: all model files first, then one line per reader, then all files."""
    lines = [f"Model files ({' '.join(file_patterns())})"]
    lines += [f"{reader.label} ({' '.join(reader.patterns)})" for reader in readers()]
    return ";;".join([*lines, "All files (*)"])


def kinds_text() -> str:
    """The readers for a help text: "model folder (...), .gguf file (...)"."""
    return ", ".join(reader.label for reader in readers())


__all__ = [
    "READERS", "OpenedModel", "ProgressCallback", "Reader",
    "each_reader", "file_dialog_filter", "file_patterns", "kinds_text", "readers",
]  # fmt: skip
