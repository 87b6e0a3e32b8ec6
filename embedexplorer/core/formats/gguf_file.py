"""Read a GGUF file's metadata and tensor list, with every array read in bulk.

``gguf.GGUFReader`` makes a numpy view per string, which took over a minute for a
152,000-token vocabulary with its merges on a shared machine; here a string array
is one pass over its bytes and a number array one ``np.frombuffer``.  Every length
and offset is checked against the file's size, so a truncated or foreign file is
reported in one sentence instead of being read past its end.
"""

from __future__ import annotations

import enum
import math
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..common.errors import CorruptWeightsError
from ..common.files import open_regular

if TYPE_CHECKING:  # the gguf package takes a third of a second to import: only a GGUF file needs it
    from gguf.constants import GGMLQuantizationType


class GGUFValueType(enum.IntEnum):
    """The value types of GGUF metadata, numbered as the GGUF specification (and the gguf package) number them."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


MAGIC = b"GGUF"
# The config key a table read from a GGUF file carries (its architecture): how the rest tells it from a folder.
GGUF_ARCHITECTURE = "gguf_architecture"
_SCALARS: dict[int, tuple[str, type]] = {
    GGUFValueType.UINT8: ("<B", np.uint8),
    GGUFValueType.INT8: ("<b", np.int8),
    GGUFValueType.UINT16: ("<H", np.uint16),
    GGUFValueType.INT16: ("<h", np.int16),
    GGUFValueType.UINT32: ("<I", np.uint32),
    GGUFValueType.INT32: ("<i", np.int32),
    GGUFValueType.FLOAT32: ("<f", np.float32),
    GGUFValueType.BOOL: ("<?", np.bool_),
    GGUFValueType.UINT64: ("<Q", np.uint64),
    GGUFValueType.INT64: ("<q", np.int64),
    GGUFValueType.FLOAT64: ("<d", np.float64),
}
# A model has a few thousand tensors at most; far larger counts mean a damaged header.
_MAX_TENSORS = 1 << 20
_MAX_KEYS = 1 << 20
# The longest array a header may hold (a vocabulary, its merges, scores): the most rows a
# token table may have (``readers.base.MAX_TABLE_ROWS``). Checked before the array is read,
# so a sparse file declaring 100 million tokens costs nothing.
MAX_ARRAY_ITEMS = 4_194_304
# general.alignment: a power of two llama.cpp writes as 32; anything up to 1 MiB is accepted.
_MAX_ALIGNMENT = 1 << 20


@dataclass(frozen=True)
class GgufTensor:
    """One tensor of a GGUF file: its name, type, shape (rows first) and byte range."""

    name: str
    type: GGMLQuantizationType
    shape: tuple[int, ...]  # numpy order: the last number is the width of a row
    start: int
    nbytes: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class GgufFile:
    """A GGUF file's metadata (arrays as lists or numpy arrays) and its tensors by name."""

    path: Path
    version: int
    metadata: dict[str, object]
    tensors: dict[str, GgufTensor]
    size: int


def is_gguf(path: Path) -> bool:
    """True when ``path`` is a file that starts with the GGUF magic bytes."""
    try:
        handle, _size = open_regular(path, "model file", CorruptWeightsError)  # never waits on a FIFO
        with handle:
            return handle.read(4) == MAGIC
    except (OSError, CorruptWeightsError):
        return False


def read_gguf(path: Path) -> GgufFile:
    """Parse the header of a GGUF file; raise CorruptWeightsError for anything malformed."""
    handle, size = open_regular(path, "model file", CorruptWeightsError)
    try:
        with handle:
            if size < 24:
                raise CorruptWeightsError(f"{path.name} is too short to be a GGUF file.")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return _Parser(path, view, size).parse()
    except OSError as exc:
        raise CorruptWeightsError(f"Cannot read {path}: {exc.strerror or exc}") from exc


class _Parser:
    def __init__(self, path: Path, data: mmap.mmap, size: int) -> None:
        self.path, self.data, self.size, self.pos = path, data, size, 0

    def fail(self, what: str) -> CorruptWeightsError:
        return CorruptWeightsError(
            f"{self.path.name} is not a readable GGUF file ({what}); it may be truncated. Download it again."
        )

    def take(self, count: int) -> int:
        """Advance by ``count`` bytes and return where they start."""
        start = self.pos
        if count < 0 or start + count > self.size:
            raise self.fail(f"it ends at byte {self.size:,}, before the header does")
        self.pos = start + count
        return start

    def scalar(self, fmt: str) -> int | float | bool:
        start = self.take(struct.calcsize(fmt))
        return struct.unpack_from(fmt, self.data, start)[0]  # type: ignore[no-any-return]

    def string(self) -> str:
        length = int(self.scalar("<Q"))
        start = self.take(length)
        return bytes(self.data[start : start + length]).decode("utf-8", errors="replace")

    def value(self, kind: int) -> object:
        if kind == GGUFValueType.STRING:
            return self.string()
        if kind == GGUFValueType.ARRAY:
            item_kind, count = int(self.scalar("<I")), int(self.scalar("<Q"))
            return self.array(item_kind, count)
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind][0])
        raise self.fail(f"a value of unknown type {kind}")

    def array(self, kind: int, count: int) -> object:
        if count > self.size:
            raise self.fail("an array longer than the file")
        if count > MAX_ARRAY_ITEMS:
            raise CorruptWeightsError(
                f"{self.path.name} declares a list of {count:,} entries in its header; EmbedExplorer reads "
                f"lists of at most {MAX_ARRAY_ITEMS:,} (the largest vocabularies have about 260,000)."
            )
        if kind in _SCALARS:
            dtype = np.dtype(_SCALARS[kind][1]).newbyteorder("<")
            start = self.take(count * dtype.itemsize)
            return np.frombuffer(self.data, dtype=dtype, count=count, offset=start).copy()
        if kind == GGUFValueType.STRING:
            return self.strings(count)
        if kind == GGUFValueType.ARRAY:
            # llama.cpp never nests arrays; a file that does is damaged or hostile (and
            # each level costs a frame of Python's stack).
            raise self.fail("an array of arrays")
        return [self.value(kind) for _ in range(count)]

    def strings(self, count: int) -> list[str]:
        # One pass over the bytes: a length, then that many bytes, ``count`` times.
        data, size, pos = self.data, self.size, self.pos
        unpack = struct.Struct("<Q").unpack_from
        pieces: list[bytes] = []
        append = pieces.append
        for _ in range(count):
            if pos + 8 > size:
                raise self.fail("a list of strings runs past the end")
            (length,) = unpack(data, pos)
            pos += 8
            if pos + length > size:
                raise self.fail("a string runs past the end")
            append(data[pos : pos + length])
            pos += length
        self.pos = pos
        return [piece.decode("utf-8", errors="replace") for piece in pieces]

    def parse(self) -> GgufFile:
        magic = bytes(self.data[0:4])
        if magic != MAGIC:
            raise CorruptWeightsError(f"{self.path.name} is not a GGUF file (it does not start with 'GGUF').")
        self.pos = 4
        version = int(self.scalar("<I"))
        if version not in (2, 3):
            raise self.fail(f"GGUF version {version}; versions 2 and 3 are read")
        tensor_count, key_count = int(self.scalar("<Q")), int(self.scalar("<Q"))
        if tensor_count > _MAX_TENSORS or key_count > _MAX_KEYS:
            raise self.fail("impossible counts of tensors or keys")
        metadata: dict[str, object] = {}
        for _ in range(key_count):
            key = self.string()
            metadata[key] = self.value(int(self.scalar("<I")))
        infos = []
        for _ in range(tensor_count):
            name = self.string()
            dims = int(self.scalar("<I"))
            if dims > 8:
                raise self.fail(f"tensor {name!r} has {dims} dimensions")
            shape = tuple(int(self.scalar("<Q")) for _ in range(dims))
            infos.append((name, int(self.scalar("<I")), shape[::-1], int(self.scalar("<Q"))))
        from gguf.constants import GGUF_DEFAULT_ALIGNMENT

        alignment = self.alignment(metadata.get("general.alignment", GGUF_DEFAULT_ALIGNMENT))
        data_start = -(-self.pos // alignment) * alignment
        tensors: dict[str, GgufTensor] = {}
        for name, type_code, shape, offset in infos:
            tensors[name] = self.tensor(name, type_code, shape, data_start + offset)
        self.refuse_overlaps(tensors)
        return GgufFile(self.path, version, metadata, tensors, self.size)

    def alignment(self, value: object) -> int:
        """general.alignment: a whole number from 1 to 1 MiB (not text, not NaN, not a fraction)."""
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise self.fail(f"general.alignment is {value!r}, not a whole number of bytes")
        if not 1 <= int(value) <= _MAX_ALIGNMENT:
            raise self.fail(f"an alignment of {int(value):,} bytes")
        return int(value)

    def refuse_overlaps(self, tensors: dict[str, GgufTensor]) -> None:
        """Two tensors sharing bytes are a damaged or forged header: each tensor's bytes are its own."""
        spans = sorted((t.start, t.start + t.nbytes, t.name) for t in tensors.values() if t.nbytes > 0)
        for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
            if start < end:
                raise CorruptWeightsError(
                    f"{self.path.name} is not a readable GGUF file: tensors {first!r} and {second!r} share "
                    "bytes, which no GGUF writer does. Download the file again."
                )

    def tensor(self, name: str, type_code: int, shape: tuple[int, ...], start: int) -> GgufTensor:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        try:
            kind = GGMLQuantizationType(type_code)
        except ValueError:
            kind = None
        if kind is None or kind not in GGML_QUANT_SIZES:
            raise CorruptWeightsError(
                f"{self.path.name}: tensor {name!r} has a storage type (number {type_code}) that the "
                "installed gguf package does not know; a newer llama.cpp may have written it."
            )
        block, block_bytes = GGML_QUANT_SIZES[kind]
        width = shape[-1] if shape else 1
        if width % block:
            raise self.fail(f"tensor {name!r} has rows of {width} numbers, not whole blocks of {block}")
        nbytes = math.prod(shape) // block * block_bytes
        if start + nbytes > self.size:
            raise CorruptWeightsError(
                f"{self.path.name} is truncated: it ends at byte {self.size:,} but tensor {name!r} "
                f"needs bytes up to {start + nbytes:,}. Download the file again."
            )
        return GgufTensor(name, kind, shape, start, nbytes)
