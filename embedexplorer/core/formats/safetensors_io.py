"""Read safetensors headers and memory-map single tensors, without torch or pickle.

The format is an 8-byte little-endian header length, a JSON header and one flat
byte buffer.  Parsing it ourselves lets us map only the embedding rows out of a
checkpoint of any size, validate offsets (a truncated download is caught before
any row is read) and count every weight without loading one.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

from ..common.errors import CorruptWeightsError, UnsafeCheckpointError
from ..common.files import SHARD_INDEX_LIMIT, open_regular, read_json

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
PICKLE_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json", "model.pt", "model.ckpt")
# Other names torch checkpoints go by (shards, training checkpoints): all are pickles.
PICKLE_PATTERNS = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl", "*.pickle")

# Header lengths above this are not real headers but garbage or a wrong file type.
MAX_HEADER_BYTES = 100 * 1024 * 1024

if TYPE_CHECKING:  # numpy loads when a tensor is mapped: reading headers (``tokens``) needs none
    import numpy as np

# Each stored type as numpy names it, and its bytes.
_NUMPY_DTYPES = {
    "F64": ("float64", 8),
    "F32": ("float32", 4),
    "F16": ("float16", 2),
    "I64": ("int64", 8),
    "I32": ("int32", 4),
    "I16": ("int16", 2),
    "I8": ("int8", 1),
    "U8": ("uint8", 1),
    "BOOL": ("bool", 1),
}
_ITEM_BYTES = {
    "BF16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    **{k: size for k, (_, size) in _NUMPY_DTYPES.items()},
}
FLOAT_DTYPES = {"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"}


@dataclass(frozen=True)
class TensorEntry:
    """Where one tensor lives: its file, dtype, shape and absolute byte range."""

    name: str
    file: Path
    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def read_header(file: Path) -> dict[str, TensorEntry]:
    """Parse one safetensors header and check every byte range lies inside the file."""
    handle, size = open_regular(file, "weights file", CorruptWeightsError)
    try:
        with handle:
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise CorruptWeightsError(f"{file.name} is too short to be a safetensors file.")
            (header_len,) = struct.unpack("<Q", prefix)
            if header_len > MAX_HEADER_BYTES or 8 + header_len > size:
                raise CorruptWeightsError(
                    f"{file.name} has a broken header; the file is truncated or not safetensors."
                )
            raw = handle.read(header_len)
    except OSError as exc:
        raise CorruptWeightsError(f"Cannot read {file}: {exc.strerror or exc}") from exc
    return parse_header(raw, file, 8 + header_len, size)


def parse_header(raw: bytes, file: Path, data_start: int, size: int) -> dict[str, TensorEntry]:
    """Check a safetensors header's JSON (``raw``) against a file of ``size`` bytes.

    Shared by local files and the headers a table-only download reads from the Hub.
    """
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptWeightsError(f"{file.name} has an unreadable header: {exc}") from exc
    except RecursionError as exc:
        raise CorruptWeightsError(f"{file.name} has an unreadable header: it is nested too deeply.") from exc
    if not isinstance(header, dict):
        raise CorruptWeightsError(f"{file.name} has an unreadable header.")
    header.pop("__metadata__", None)

    entries: dict[str, TensorEntry] = {}
    for name, info in header.items():
        try:
            dtype = str(info["dtype"])
            shape = tuple(int(n) for n in info["shape"])
            begin, end = (int(n) for n in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptWeightsError(f"{file.name}: entry {name!r} is malformed.") from exc
        if any(n < 0 for n in shape):
            raise CorruptWeightsError(f"{file.name}: entry {name!r} has a negative size in its shape.")
        entry = TensorEntry(name, file, dtype, shape, data_start + begin, data_start + end)
        expected = entry.numel * _ITEM_BYTES.get(dtype, 0)
        if begin < 0:
            raise CorruptWeightsError(
                f"{file.name}: entry {name!r} starts at a negative offset ({begin:,}), inside the header."
            )
        if end < begin or (dtype in _ITEM_BYTES and end - begin != expected):
            raise CorruptWeightsError(f"{file.name}: entry {name!r} has inconsistent offsets.")
        if entry.end > size:
            raise CorruptWeightsError(
                f"{file.name} is truncated: it ends at byte {size:,} but tensor {name!r} "
                f"needs bytes up to {entry.end:,}. Download the file again."
            )
        entries[name] = entry
    return entries


def weight_files(folder: Path) -> list[Path]:
    """The safetensors files of a model folder, single or sharded; refuse pickles."""
    index = folder / INDEX_FILE
    if index.exists():
        return _shards_of(folder, read_json(index, "shard index", SHARD_INDEX_LIMIT, CorruptWeightsError))
    single = folder / SINGLE_FILE
    if single.is_file():
        return [single]
    others = sorted(folder.glob("*.safetensors"))
    if others:
        return others
    pickles = [name for name in PICKLE_FILES if (folder / name).exists()] or sorted(
        file.name for pattern in PICKLE_PATTERNS for file in folder.glob(pattern)
    )
    if pickles:
        raise UnsafeCheckpointError(
            f"{folder} only has pickled weights ({pickles[0]}). Loading a pickle can run "
            "arbitrary code, so EmbedExplorer refuses it. Convert the checkpoint to "
            "safetensors (model.save_pretrained(folder) with safe_serialization) and open it again."
        )
    raise CorruptWeightsError(f"{folder} has no weights: no *.safetensors file was found.")


def _shards_of(folder: Path, index: object) -> list[Path]:
    """The shard files a parsed index names: each real file once, none outside ``folder``."""
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise CorruptWeightsError(f"{INDEX_FILE} is not a valid shard index: it needs a weight_map of file names.")
    files: list[Path] = []
    seen: set[tuple[int, int]] = set()
    missing: list[str] = []
    for name in sorted(set(weight_map.values())):
        # Shards sit in the model folder: a name that climbs out of it (or is absolute)
        # could make the app read any file on the machine.
        parts = PurePosixPath(name.replace("\\", "/")).parts
        if not parts or PurePosixPath(name).is_absolute() or PureWindowsPath(name).anchor or ".." in parts:
            raise CorruptWeightsError(
                f"{INDEX_FILE} names a shard outside the model folder ({name!r}); it was refused."
            )
        path = folder.joinpath(*parts)
        try:
            info = path.stat()
        except (OSError, ValueError):  # ValueError: a NUL byte, which no file name holds
            missing.append(name)
            continue
        # The same file under many spellings ("a", "./a", "b/../a" is refused above) is read once.
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            files.append(path)
    if missing:
        # Quoted as Python would: a name may hold a line break or other characters that print as nothing.
        raise CorruptWeightsError(f"Shard(s) missing from {folder}: {', '.join(repr(n) for n in missing[:5])}")
    return files


def read_all_headers(files: list[Path]) -> dict[str, TensorEntry]:
    """Merge the headers of every shard into one name -> entry map."""
    entries: dict[str, TensorEntry] = {}
    for file in files:
        entries.update(read_header(file))
    return entries


def map_tensor(entry: TensorEntry) -> np.ndarray:
    """Memory-map a tensor read-only; float32 maps without a copy, others convert once."""
    import numpy as np

    if entry.numel == 0:
        return np.zeros(entry.shape, dtype=np.float32)
    try:
        if entry.dtype == "BF16":
            raw = np.memmap(entry.file, dtype=np.uint16, mode="r", offset=entry.start, shape=entry.shape)
            # bfloat16 is the top half of a float32: shift it back into place.
            return (raw.astype(np.uint32) << 16).view(np.float32)
        if entry.dtype not in _NUMPY_DTYPES:
            raise CorruptWeightsError(
                f"Tensor {entry.name!r} has dtype {entry.dtype}, which is not supported."
            )
        mapped = np.memmap(
            entry.file, dtype=np.dtype(_NUMPY_DTYPES[entry.dtype][0]), mode="r", offset=entry.start, shape=entry.shape
        )
    except (OSError, ValueError) as exc:
        raise CorruptWeightsError(f"Cannot map tensor {entry.name!r} from {entry.file.name}: {exc}") from exc
    return mapped if entry.dtype == "F32" else mapped.astype(np.float32)
