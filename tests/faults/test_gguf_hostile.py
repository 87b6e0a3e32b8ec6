"""GGUF headers that lie: bounds before allocating, overlapping tensors, bad scales, parts, odd metadata.

Hostile round 2, classes 5 (sparse files declaring 8 million columns, 20 million rows or
100 million tokens), 6 (overlapping tensors, Q8_0 blocks with inf/NaN scales, a split
part taken for the whole, an unknown token past the vocabulary) and 7 (general.alignment
as text or NaN). Headers are written byte by byte here, so they can say anything; data
regions are sparse, so a header that claims gigabytes costs no disk.
"""

from __future__ import annotations

import math
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedexplorer import open_table
from embedexplorer.core.common.errors import (
    CorruptWeightsError,
    EmbedExplorerError,
    QueryError,
    TableNotFoundError,
    TokenizerMismatchError,
)
from embedexplorer.core.formats.gguf_file import MAX_ARRAY_ITEMS, read_gguf
from embedexplorer.core.readers.base import MAX_TABLE_ROWS, MAX_TABLE_WIDTH

from ..gguf_fixture import float64_top_k, quantised_rows, small_vocabulary, write_gguf
from .helpers import assert_one_line_error, run_cli

SETTINGS = settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))

UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = 4, 5, 6, 7, 8, 9, 10, 11, 12


def text(value: str) -> bytes:
    raw = value.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def key_value(key: str, kind: int, payload: bytes) -> bytes:
    return text(key) + struct.pack("<I", kind) + payload


def tensor_info(name: str, shape: tuple[int, ...], kind: int, offset: int) -> bytes:
    """``shape`` rows first, as numpy has it; GGUF stores the width first."""
    dims = b"".join(struct.pack("<Q", d) for d in reversed(shape))
    return text(name) + struct.pack("<I", len(shape)) + dims + struct.pack("<IQ", kind, offset)


def tokens_entry(count: int) -> bytes:
    """tokenizer.ggml.tokens with ``count`` strings declared; only the first few are written."""
    shown = min(count, 16)
    return key_value("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", STRING, count)) + b"".join(
        text(f"t{i}") for i in range(shown)
    )


def raw_gguf(path: Path, entries: list[bytes], tensors: list[bytes], size: int = 0) -> Path:
    """A GGUF file from raw header pieces, made ``size`` bytes long (sparse) when that is longer."""
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(entries)) + b"".join(entries) + b"".join(tensors)
    header += b"\0" * (-len(header) % 32)
    with open(path, "wb") as handle:
        handle.write(header)
        handle.truncate(max(size, len(header) + 64))
    return path


basic_tokenizer = [
    key_value("general.architecture", STRING, text("llama")),
    key_value("tokenizer.ggml.model", STRING, text("llama")),
]


# ----- bounds before allocating ---------------------------------------------------------------------
@SETTINGS
@given(count=st.integers(min_value=MAX_ARRAY_ITEMS + 1, max_value=400_000_000))
def test_a_vocabulary_of_millions_is_refused_before_it_is_read(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = raw_gguf(Path(tmp) / "tokens.gguf", [*basic_tokenizer, tokens_entry(count)], [], size=count + (1 << 20))
        with pytest.raises(CorruptWeightsError, match=f"declares a list of {count:,} entries"):
            read_gguf(path)


table_shapes = st.one_of(
    st.tuples(st.integers(MAX_TABLE_ROWS + 1, 40_000_000), st.integers(1, 64)),
    st.tuples(st.integers(1, 64), st.integers(MAX_TABLE_WIDTH + 1, 16_000_000)),
)


@SETTINGS
@given(shape=table_shapes)
def test_a_table_no_model_has_is_refused_before_anything_is_built(shape: tuple[int, int]) -> None:
    rows, width = shape
    with tempfile.TemporaryDirectory() as tmp:
        tensors = [tensor_info("token_embd.weight", (rows, width), 0, 0)]  # F32
        path = raw_gguf(Path(tmp) / "wide.gguf", [*basic_tokenizer, tokens_entry(16)], tensors, 4096 + rows * width * 4)
        with pytest.raises(TableNotFoundError) as caught:
            open_table(str(path))
        message = str(caught.value)
        assert "\n" not in message and "wide.gguf" in message
        assert f"{rows:,} rows" in message if rows > MAX_TABLE_ROWS else f"{width:,} numbers" in message


def test_the_sweeps_three_sparse_files_on_the_command_line(tmp_path: Path) -> None:
    cases = {
        "columns.gguf": ([tensor_info("token_embd.weight", (100, 8_000_000), 0, 0)], 100 * 8_000_000 * 4, "8,000,000"),
        "rows.gguf": ([tensor_info("token_embd.weight", (20_000_000, 8), 0, 0)], 20_000_000 * 8 * 4, "20,000,000"),
        "tokens.gguf": ([], 200_000_000, "100,000,000"),
    }
    for name, (tensors, size, fragment) in cases.items():
        tokens = tokens_entry(100_000_000 if name == "tokens.gguf" else 16)
        path = raw_gguf(tmp_path / name, [*basic_tokenizer, tokens], tensors, size + 4096)
        assert_one_line_error(run_cli("info", "--model", str(path)), name, fragment)


# ----- headers that are wrong ------------------------------------------------------------------------
alignments = st.one_of(
    st.text(max_size=8).map(lambda t: (STRING, text(t))),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.5, 32.0]).map(lambda f: (FLOAT32, struct.pack("<f", f))),
    st.sampled_from([math.nan, 1e300]).map(lambda f: (FLOAT64, struct.pack("<d", f))),
    st.integers(-(2**31), 0).map(lambda n: (INT32, struct.pack("<i", n))),
    st.integers(2**20 + 1, 2**64 - 1).map(lambda n: (UINT64, struct.pack("<Q", n))),
    st.booleans().map(lambda b: (BOOL, struct.pack("<?", b))),
)


@SETTINGS
@given(alignment=alignments)
def test_an_alignment_that_is_not_a_size_is_one_sentence(alignment: tuple[int, bytes]) -> None:
    kind, payload = alignment
    with tempfile.TemporaryDirectory() as tmp:
        entries = [*basic_tokenizer, tokens_entry(16), key_value("general.alignment", kind, payload)]
        path = raw_gguf(Path(tmp) / "align.gguf", entries, [tensor_info("token_embd.weight", (16, 32), 0, 0)], 8192)
        with pytest.raises(CorruptWeightsError) as caught:
            read_gguf(path)
        assert "align.gguf" in str(caught.value) and "alignment" in str(caught.value)


@SETTINGS
@given(start=st.integers(0, 16 * 32 * 4 - 4), rows=st.integers(1, 16))
def test_overlapping_tensors_are_refused(start: int, rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tensors = [
            tensor_info("token_embd.weight", (16, 32), 0, 0),
            tensor_info("output.weight", (rows, 32), 0, start - start % 32),
        ]
        path = raw_gguf(Path(tmp) / "overlap.gguf", [*basic_tokenizer, tokens_entry(16)], tensors, 1 << 16)
        with pytest.raises(CorruptWeightsError, match="share bytes"):
            read_gguf(path)


def test_tensors_side_by_side_are_not_overlaps(tmp_path: Path) -> None:
    """The control: tensors that touch but do not share bytes are read."""
    tensors = [
        tensor_info("token_embd.weight", (16, 32), 0, 0),
        tensor_info("output.weight", (16, 32), 0, 16 * 32 * 4),
    ]
    path = raw_gguf(tmp_path / "side.gguf", [*basic_tokenizer, tokens_entry(16)], tensors, 1 << 16)
    assert set(read_gguf(path).tensors) == {"token_embd.weight", "output.weight"}


def q8_blocks_with_bad_scales(rows: np.ndarray, bad_rows: list[int], value: float) -> np.ndarray:
    """Q8_0 rows (34-byte blocks: a float16 scale, 32 int8) with the first scale of ``bad_rows`` set to ``value``."""
    blocks = quantised_rows(rows, Q.Q8_0).copy()
    blocks[bad_rows, 0:2] = np.array([value], dtype="<f2").view(np.uint8)
    return blocks


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(bad=st.lists(st.integers(0, 299), min_size=1, max_size=20, unique=True),
       value=st.sampled_from([math.inf, -math.inf, math.nan]))
def test_rows_with_inf_or_nan_scales_are_named_not_searched(tmp_path_factory, bad: list[int], value: float) -> None:
    rows = np.random.default_rng(len(bad)).standard_normal((300, 64)).astype(np.float32)
    blocks = q8_blocks_with_bad_scales(rows, bad, value)
    path = write_gguf(tmp_path_factory.mktemp("q8") / "scales.gguf", blocks, Q.Q8_0)
    table = open_table(str(path))
    for row in bad[:3]:
        with pytest.raises(QueryError, match=rf"\(id {row}\) holds .* not finite"):
            table.neighbours(row, k=8)
        with pytest.raises(QueryError, match="not finite"):
            table.cosine(row, (row + 1) % 300)
    good = next(i for i in range(300) if i not in bad)
    stored = np.asarray(table.rows[:], dtype=np.float64)
    ids, _ = float64_top_k(stored, stored[good], 8, (good,))  # the oracle sets the bad rows aside too
    assert [n.id for n in table.neighbours(good, k=8).neighbours] == ids
    assert not set(ids) & set(bad)


@SETTINGS
@given(count=st.integers(2, 9), number=st.integers(0, 8))
def test_one_part_of_a_split_model_names_the_missing_parts(tmp_path_factory, count: int, number: int) -> None:
    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    path = write_gguf(
        tmp_path_factory.mktemp("split") / f"model-0000{number + 1}-of-0000{count}.gguf",
        rows,
        Q.F16,
        metadata={"split.count": count, "split.no": number % count},
    )
    with pytest.raises(EmbedExplorerError) as caught:
        open_table(str(path))
    # Never opened as the whole model: the parts that are not there are named (issue 23 opens a whole split).
    message = str(caught.value)
    assert path.name in message and "split" in message
    assert "missing" in message or "its name does not say which" in message


@SETTINGS
@given(unknown=st.integers(300, 2**31 - 1))
def test_an_unknown_token_past_the_vocabulary_is_refused(tmp_path_factory, unknown: int) -> None:
    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    path = write_gguf(
        tmp_path_factory.mktemp("unk") / "unk.gguf",
        rows,
        Q.F16,
        tokens=small_vocabulary(300),
        tokenizer_model="llama",
        pre=None,
        metadata={"tokenizer.ggml.unknown_token_id": unknown},
    )
    with pytest.raises(TokenizerMismatchError, match=f"names token {unknown:,} as its unknown token"):
        open_table(str(path))


def test_the_baseline_of_a_table_with_bad_scales_is_a_number(tmp_path: Path) -> None:
    rows = np.random.default_rng(9).standard_normal((300, 64)).astype(np.float32)
    bad = list(range(0, 300, 7))
    table = open_table(str(write_gguf(tmp_path / "s.gguf", q8_blocks_with_bad_scales(rows, bad, math.nan), Q.Q8_0)))
    assert math.isfinite(table.baseline_cosine)
    unit = np.asarray(table.unit[:], dtype=np.float64)
    assert np.isfinite(unit).all() and not unit[bad].any()
