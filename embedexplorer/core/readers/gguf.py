"""GGUF files (llama.cpp, Ollama, LM Studio): the token table in any type the gguf package reads.

The table ``token_embd.weight`` stays mapped as the file stores it; quantised rows
are dequantised block by block by the gguf package (llama.cpp's own Python code)
whenever rows are read, so no float32 copy of the whole table is ever made.  The
tokenizer comes from the file's metadata (``gguf_tokenizer``).
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..common.background import Background
from ..common.errors import TableNotFoundError, TokenizerStartError
from ..common.files import FileState
from ..formats.gguf_file import GGUF_ARCHITECTURE, GgufFile, GgufTensor, is_gguf
from ..formats.gguf_split import read_parts
from ..search.stored_rows import StoredRows
from ..search.stored_screen import DEQUANTISED_KINDS
from ..text.vocabulary import Vocabulary
from .base import OpenedModel, ProgressCallback, check_table_shape
from .safetensors import check_vocabulary, prepare_rows

if TYPE_CHECKING:
    from gguf.constants import GGMLQuantizationType

    from ..text.llama_vocab import LlamaTokenizer

try:
    from ..search import _quants
except ImportError:  # built without a C compiler: the gguf package dequantises
    _quants = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
# (numbers, bytes) of a block of each type the C dequantiser reads (gguf's GGML_QUANT_SIZES).
_BLOCK_SHAPES = {
    "Q8_0": (32, 34),
    "Q4_0": (32, 18),
    "Q4_K": (256, 144),
    "Q6_K": (256, 210),
    "Q5_K": (256, 176),
    "Q4_1": (32, 20),
    "Q5_0": (32, 22),
    "Q5_1": (32, 24),
    "IQ4_NL": (32, 18),
    "Q2_K": (256, 84),
    "Q3_K": (256, 110),
    "IQ4_XS": (256, 136),
    "TQ2_0": (256, 66),
    "MXFP4": (32, 17),
    "NVFP4": (64, 36),
    "TQ1_0": (256, 54),
    "IQ3_S": (256, 110),
    "IQ3_XXS": (256, 98),
    "IQ2_XXS": (256, 66),
    "IQ2_XS": (256, 74),
    "IQ2_S": (256, 82),
    "IQ1_S": (256, 50),
    "IQ1_M": (256, 56),
}

TOKEN_TABLE = "token_embd.weight"
# The output head's table; a model without one scores the next token with its token table (llama.cpp).
OUTPUT_HEAD = "output.weight"
POSITION_TABLE = "position_embd.weight"
# Tensor types whose rows come out as float32 unchanged or by a cast: no dequantising.
_FLOAT32 = "F32"
_HALF = ("BF16", "F16")


class GgufReader:
    """A single .gguf file (an Ollama blob is one, without the name)."""

    name = "GGUF file"
    label = ".gguf file (llama.cpp, Ollama, LM Studio)"
    patterns: tuple[str, ...] = ("*.gguf",)

    def claims(self, path: Path) -> bool:
        try:
            return path.is_file() and is_gguf(path)
        except OSError:
            return False

    def open(
        self, path: Path, report: ProgressCallback, separate_tokenizer: bool = False, read_whole: bool = True
    ) -> OpenedModel:
        report(1, 4, "Reading the GGUF header")
        parts = read_parts(path)  # one, or every part of a split model (any part opens it)
        first = parts[0]
        header = next((part for part in parts if TOKEN_TABLE in part.tensors), first)
        token_tensor = header.tensors.get(TOKEN_TABLE)
        if token_tensor is None or len(token_tensor.shape) != 2:
            raise TableNotFoundError(f"{path.name} has no token table ({TOKEN_TABLE}); it is not a language model.")
        check_table_shape(token_tensor.shape[0], token_tensor.shape[1], f"The token table of {path.name}")
        report(2, 4, "Reading the tokenizer")
        finish_vocabulary = _start_vocabulary(first.path, first.metadata, separate_tokenizer)
        report(3, 4, "Mapping the embedding table")
        rows = map_gguf_rows(header, token_tensor)
        mapped = (FileState(header.path),)
        # Dequantising (or measuring) the rows while the tokenizer is built; a tokenizer that
        # is refused stops it at the next progress report.
        try:
            screen, raw = prepare_rows(rows, _reporting_failures(report, finish_vocabulary), read_whole, mapped)
        except BaseException:
            if separate_tokenizer:  # its child process started at once: stop it (a thread just ends)
                finish_vocabulary.result().close()
            raise
        vocabulary = finish_vocabulary.result()
        try:
            check_vocabulary(vocabulary, rows.shape[0])
        except BaseException:
            vocabulary.close()
            raise
        position_header = next((part for part in parts if POSITION_TABLE in part.tensors), header)
        position_tensor = position_header.tensors.get(POSITION_TABLE)
        positions = None
        if (
            position_tensor is not None
            and len(position_tensor.shape) == 2
            and position_tensor.shape[0] > 0
            and position_tensor.shape[-1] == token_tensor.shape[-1]
        ):
            # Kept as mapped rows, read one at a time: a header may claim 20 million positions
            # in a sparse file, and a whole quantised table in float32 would be gigabytes.
            check_table_shape(*position_tensor.shape, f"The position table of {path.name}")
            positions = map_gguf_rows(position_header, position_tensor)
        return OpenedModel(
            rows=rows,
            vocabulary=vocabulary,
            model_weights=sum(t.numel for part in parts for t in part.tensors.values()),
            storage=token_tensor.type.name,
            positions=positions,
            position_note=_position_note(first, positions),
            folder=path.parent,
            config={GGUF_ARCHITECTURE: first.metadata.get("general.architecture", "")},
            mapped_files=mapped,
            stored_screen=screen,
            raw_rows=raw,
        )


READER = GgufReader()


def _start_vocabulary(path: Path, metadata: dict[str, object], separate_tokenizer: bool) -> Background[Vocabulary]:
    """The file's tokenizer: built on a thread while the table is prepared, or in a child process.

    With a child, its facts (tokens, kind) come from the metadata here, so a tokenizer that
    cannot be rebuilt is refused at once.
    """
    # Imported here: the port of llama.cpp's tokenizer is large, and a model folder never needs it.
    from ..text.gguf_tokenizer import build_gguf_tokenizer, gguf_tokenizer_facts

    if not separate_tokenizer:

        def build() -> Vocabulary:
            tokenizer, facts = build_gguf_tokenizer(metadata, path.name)
            return Vocabulary(facts, tokenizer.encode)

        return Background(build, "embedexplorer-tokenizer")
    facts = gguf_tokenizer_facts(metadata, path.name)
    child = _ChildTokenizer(path)
    return Background(lambda: Vocabulary(facts, child.encode, child.close), "embedexplorer-tokenizer")


def _reporting_failures(report: ProgressCallback, background: Background[Vocabulary]) -> ProgressCallback:
    def reporting(done: int, total: int, message: str) -> None:
        background.raise_if_failed()
        report(done, total, message)

    return reporting


class _ChildTokenizer:
    """Encodes through a tokenizer process started now; in this process if no child can run here."""

    def __init__(self, path: Path) -> None:
        from ..text.tokenizer_process import TokenizerProcess

        self.path = path
        self.process = TokenizerProcess(path)
        self.local: LlamaTokenizer | None = None

    def encode(self, text: str) -> list[int]:
        if self.local is None:
            try:
                self.process.facts()  # waits, the first time, for the child to finish building
                return self.process.encode(text)
            except TokenizerStartError as exc:
                log.warning("%s Building the tokenizer in this process instead.", exc)
                from ..text.gguf_tokenizer import load_gguf_tokenizer

                self.process.close()
                self.local = load_gguf_tokenizer(self.path)[0]
        return self.local.encode(text)

    def close(self) -> None:
        self.process.close()


def map_gguf_rows(header: GgufFile, tensor: GgufTensor) -> np.ndarray | StoredRows:
    """A 2-D tensor of the file: float32 mapped as is, anything else as StoredRows."""
    count, width = tensor.shape
    if tensor.type.name == _FLOAT32:
        return np.memmap(header.path, dtype="<f4", mode="r", offset=tensor.start, shape=(count, width))
    if tensor.type.name in _HALF:
        bits = np.memmap(header.path, dtype="<u2", mode="r", offset=tensor.start, shape=(count, width))
        return StoredRows.half(bits, tensor.type.name)
    raw = np.memmap(header.path, dtype=np.uint8, mode="r", offset=tensor.start, shape=(count, tensor.nbytes // count))
    check_dequantizable(tensor, header.path.name)
    return StoredRows(raw, tensor.type.name, width, partial(_dequantize_rows, qtype=tensor.type))


def check_dequantizable(tensor: GgufTensor, file_name: str) -> None:
    """Refuse, in one sentence, a storage type the installed gguf package cannot dequantise."""
    from gguf.constants import GGML_QUANT_SIZES
    from gguf.quants import dequantize

    block, block_bytes = GGML_QUANT_SIZES[tensor.type]
    try:
        dequantize(np.zeros((1, block_bytes), dtype=np.uint8), tensor.type)
    except NotImplementedError:
        raise TableNotFoundError(
            f"{file_name} stores its token table as {tensor.type.name}, which the installed gguf package "
            "cannot dequantise."
        ) from None


def _dequantize_rows(raw: np.ndarray, qtype: GGMLQuantizationType) -> np.ndarray:
    """Float32 rows of quantised blocks: by the C scan's dequantiser for its types (the very numbers
    gguf gives, tests compare them), else by the gguf package."""
    kind = DEQUANTISED_KINDS.get(qtype.name)
    if _quants is not None and kind is not None:
        blocks = np.ascontiguousarray(raw)
        width = blocks.shape[-1] // _BLOCK_SHAPES[qtype.name][1] * _BLOCK_SHAPES[qtype.name][0]
        out = np.empty((*blocks.shape[:-1], width), dtype=np.float32)
        if out.size:
            _quants.dequantise(blocks, kind, out)
        return out
    from gguf.quants import dequantize

    return np.asarray(dequantize(np.ascontiguousarray(raw), qtype), dtype=np.float32)


def _position_note(header: GgufFile, positions: np.ndarray | StoredRows | None) -> str:
    if positions is not None:
        return f"learned position table with {positions.shape[0]:,} rows"
    architecture = str(header.metadata.get("general.architecture", ""))
    if f"{architecture}.rope.dimension_count" in header.metadata or any(
        key.startswith(f"{architecture}.rope.") for key in header.metadata
    ):
        return "no position table: the model marks positions by rotating rows (rotary embeddings)"
    return "no position table in the weights: the model marks positions another way"
