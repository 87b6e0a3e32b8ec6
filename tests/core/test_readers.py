"""The same questions of every reader in core.readers.READERS, each on a file of its own kind.

A new reader needs a fixture in FIXTURES (the first test fails until it has one); then it
is asked what every reader is asked, and the file dialog and the command line's help name it.
"""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q
from safetensors.numpy import load_file

from embedexplorer.cli import build_parser
from embedexplorer.core.readers import READERS, file_dialog_filter, file_patterns
from embedexplorer.core.sources.resolve import bundled_model_dir
from embedexplorer.core.tables.opening import open_table

from ..gguf_fixture import float64_top_k, write_gguf

Fixture = tuple[Path, np.ndarray]  # the path to open, the numbers its token table holds


def safetensors_folder(_tmp: Path) -> Fixture:
    folder = bundled_model_dir()
    weights = load_file(str(folder / "model.safetensors"))
    return folder, weights["embeddings.word_embeddings.weight"].astype(np.float64)


def gguf_file(tmp: Path) -> Fixture:
    rows = np.random.default_rng(5).standard_normal((2000, 128)).astype(np.float16)
    return write_gguf(tmp / "table.gguf", rows, Q.F16), rows.astype(np.float64)


FIXTURES: dict[str, Callable[[Path], Fixture]] = {
    "safetensors folder": safetensors_folder,
    "GGUF file": gguf_file,
}


def test_every_reader_has_a_fixture_here() -> None:
    assert sorted(reader.name for reader in READERS) == sorted(FIXTURES)


@pytest.fixture(params=READERS, ids=lambda reader: reader.name)
def case(request, tmp_path):  # type: ignore[no-untyped-def]
    reader = request.param
    path, numbers = FIXTURES[reader.name](tmp_path)
    return reader, path, numbers


class TestEveryReader:
    def test_it_claims_its_file_and_no_other_kind(self, case, tmp_path) -> None:  # type: ignore[no-untyped-def]
        reader, path, _ = case
        assert reader.claims(path)
        for other in READERS:
            if other is not reader:
                assert not other.claims(path), other.name
        text = tmp_path / "notes.txt"
        text.write_text("not a model")
        assert not reader.claims(text) and not reader.claims(tmp_path / "missing")

    def test_its_patterns_name_its_file(self, case) -> None:  # type: ignore[no-untyped-def]
        reader, path, _ = case
        names = [p.name for p in path.iterdir()] if path.is_dir() else [path.name]
        assert any(fnmatch(name, pattern) for name in names for pattern in reader.patterns)

    def test_it_opens_a_row_per_token_as_stored(self, case) -> None:  # type: ignore[no-untyped-def]
        reader, path, numbers = case
        opened = reader.open(path, lambda done, total, message: None)
        assert opened.rows.shape == numbers.shape
        assert opened.vocabulary.size == numbers.shape[0]
        np.testing.assert_array_equal(np.asarray(opened.rows[[0, numbers.shape[0] - 1]]), numbers[[0, -1]])
        assert opened.storage

    def test_its_neighbours_are_a_float64_searchs(self, case) -> None:  # type: ignore[no-untyped-def]
        _reader, path, numbers = case
        table = open_table(str(path))
        for query in (3, numbers.shape[0] // 2):
            ids, cosines = float64_top_k(numbers, numbers[query], 8, (query,))
            result = table.neighbours(query, k=8)
            assert [n.id for n in result.neighbours] == ids
            np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines, atol=1e-6)

    def test_the_file_dialog_and_the_help_name_it(self, case) -> None:  # type: ignore[no-untyped-def]
        reader, _path, _ = case
        assert f"{reader.label} ({' '.join(reader.patterns)})" in file_dialog_filter()
        assert all(pattern in file_patterns() for pattern in reader.patterns)
        help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["tokens"].format_help().split())
        assert " ".join(reader.label.split()) in help_text
