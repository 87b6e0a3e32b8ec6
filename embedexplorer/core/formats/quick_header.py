"""How a model file stores its weights ("Q4_K_M", "BF16", ...), read from the first bytes only.

For listing hundreds of models in well under a second: a GGUF file's ``general.file_type``
comes before its vocabulary, so reading the first 64 KiB finds it; a small file's header
fits whole, and then the token table's own type is used when the key is absent.  A
safetensors header names each tensor's dtype.  Anything unreadable gives "" (unknown):
a listing never fails on one file.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path

from ..common.errors import CorruptWeightsError
from ..common.files import open_regular
from .gguf_file import MAGIC, _Parser
from .safetensors_io import FLOAT_DTYPES

GGUF_PREFIX_BYTES = 64 * 1024
SAFETENSORS_HEADER_LIMIT = 16 * 1024 * 1024
FILE_TYPE_KEY = "general.file_type"
TOKEN_TABLE = "token_embd.weight"


def gguf_storage(path: Path) -> str:
    """The GGUF file's storage type in llama.cpp's words ("Q4_K_M", "F16"), or "" when not found quickly."""
    prefix = _prefix(path, GGUF_PREFIX_BYTES)
    if prefix[:4] != MAGIC:
        return ""
    parser = _Parser(path, prefix, len(prefix))  # type: ignore[arg-type]
    try:
        parser.pos = 4
        version = int(parser.scalar("<I"))
        tensor_count, key_count = int(parser.scalar("<Q")), int(parser.scalar("<Q"))
        if version not in (2, 3):
            return ""
        for _ in range(key_count):
            key = parser.string()
            value = parser.value(int(parser.scalar("<I")))
            if key == FILE_TYPE_KEY and isinstance(value, int):
                return _file_type_name(value)
        return _token_table_type(parser, tensor_count)
    except CorruptWeightsError:  # the header goes on past the bytes read
        return ""


def _file_type_name(value: int) -> str:
    from gguf.constants import LlamaFileType  # the gguf package (and yaml under it): only for a GGUF file

    try:
        name = LlamaFileType(value).name
    except ValueError:
        return ""
    return name.removeprefix("MOSTLY_").removeprefix("ALL_") if name != "GUESSED" else ""


def _token_table_type(parser: _Parser, tensor_count: int) -> str:
    from gguf.constants import GGMLQuantizationType

    for _ in range(tensor_count):
        name = parser.string()
        dims = int(parser.scalar("<I"))
        if dims > 8:
            return ""
        parser.take(8 * dims)
        type_code = int(parser.scalar("<I"))
        parser.take(8)
        if name == TOKEN_TABLE:
            try:
                return GGMLQuantizationType(type_code).name
            except ValueError:
                return ""
    return ""


def safetensors_storage(path: Path) -> str:
    """The dtype of a safetensors file's embedding table (or of most of its numbers), or ""."""
    prefix = _prefix(path, 8)
    if len(prefix) < 8:
        return ""
    (length,) = struct.unpack("<Q", prefix)
    if length > SAFETENSORS_HEADER_LIMIT:
        return ""
    raw = _prefix(path, 8 + length)[8:]
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(header, dict):
        return ""
    weights: Counter[str] = Counter()
    embeddings: Counter[str] = Counter()  # the largest float table named like an embedding wins
    for name, info in header.items():
        if name == "__metadata__" or not isinstance(info, dict):
            continue
        dtype, shape = info.get("dtype"), info.get("shape")
        if dtype not in FLOAT_DTYPES or not isinstance(shape, list):
            continue  # integer buffers (position ids) say nothing about how the weights are stored
        count = 1
        for size in shape:
            count *= size if isinstance(size, int) else 0
        weights[dtype] += count
        if "embed" in name and len(shape) == 2:
            embeddings[dtype] = max(embeddings[dtype], count)
    chosen = embeddings or weights
    return chosen.most_common(1)[0][0] if chosen else ""


def _prefix(path: Path, count: int) -> bytes:
    try:
        handle, _ = open_regular(path, "model file", CorruptWeightsError)
    except CorruptWeightsError:
        return b""
    try:
        with handle:
            return handle.read(count)
    except OSError:
        return b""
