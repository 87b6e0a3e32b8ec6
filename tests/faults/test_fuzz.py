"""Random texts through tokens, neighbours and cosine: only a plain EmbedExplorerError may escape.

The contract, decided here: for any text, ``tokenize`` and ``encode`` never raise. A text
with no tokens (empty, only spaces, or only characters the tokenizer drops) makes
``neighbours`` and ``cosine`` raise QueryError with a one-line message; every other text
gets an answer. A token id outside the table is a QueryError too. Nothing else escapes.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from embedexplorer.core.common.errors import CorruptWeightsError, EmbedExplorerError, FamiliesError, QueryError

TRICKY = [
    "",
    " ",
    "\t\n",
    "\x00",
    "\x07\x1b",
    "\u200b\u200d\ufeff",
    "\u202e\u202c",
    "[UNK]",
    "[CLS] [SEP]",
    "<|endoftext|>",
    "🙂",
    "👩‍👩‍👧",
    "東京",
    "שלום",
    "مرحبا",
    "\udcff",
    "a\ud800b",
    "\U0010ffff",
    "x" * 300,
    " Paris",
]

texts = st.one_of(
    st.text(max_size=30),  # any Unicode but surrogates, hypothesis' own mix of the odd and the plain
    # lone surrogates, as a command line hands over bytes that are not UTF-8
    st.text(alphabet=st.one_of(st.characters(categories=["Cs"]), st.characters()), max_size=12),
    st.text(alphabet=st.sampled_from(list(" \t\n\x00\x07\u200b\u3000\u00a0")), max_size=8),
    st.sampled_from(TRICKY),
    st.builds("".join, st.lists(st.sampled_from(TRICKY), max_size=4)),
)
queries = st.one_of(texts, st.integers(min_value=-5, max_value=60_000))

SETTINGS = settings(
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def check_one(table, text: str | int, other: str | int, k: int) -> None:  # type: ignore[no-untyped-def]
    has_tokens = True
    if isinstance(text, str):
        report = table.tokenize(text)
        assert report.count == len(table.encode(text))
        assert len(report.tokens) <= report.fits <= report.count
        has_tokens = report.count > 0
        if not has_tokens:
            assert report.note
    try:
        result = table.neighbours(text, k=k)
    except QueryError as exc:
        message = str(exc)
        assert message and "\n" not in message
        assert not has_tokens or isinstance(text, int)
    else:
        assert has_tokens
        assert 0 <= result.query.id < table.rows.shape[0]
        assert len(result.neighbours) == k
        assert result.query.id not in {n.id for n in result.neighbours}
        assert all(-1.0001 <= n.cosine <= 1.0001 for n in result.neighbours)
    try:
        value = table.cosine(text, other)
    except QueryError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert math.isfinite(value) and -1.0001 <= value <= 1.0001


@pytest.mark.parametrize("model", ["minilm_table", "gpt2_table"])
def test_random_texts_raise_nothing_but_plain_errors(model: str, request: pytest.FixtureRequest) -> None:
    table = request.getfixturevalue(model)
    table.unit  # noqa: B018 - compute the unit rows once, outside the timed examples
    seen = {"answered": 0, "refused": 0}

    @SETTINGS
    @given(text=queries, other=queries, k=st.integers(min_value=1, max_value=12))
    def run(text: str | int, other: str | int, k: int) -> None:
        try:
            check_one(table, text, other, k)
        except EmbedExplorerError:
            raise AssertionError(f"an error other than QueryError for {text!r}, {other!r}") from None
        seen["answered" if _has_tokens(table, text) else "refused"] += 1

    run()
    # both kinds of text were really tried
    assert seen["answered"] > 500 and seen["refused"] > 20, seen


def _has_tokens(table, text: str | int) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(text, int):
        return 0 <= text < table.rows.shape[0]
    return bool(table.vocabulary.encode(text))


# ----- hostile files (issue 17): only the engine's own error may escape ------------------------
FILE_SETTINGS = settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(alphabet=st.one_of(st.characters(categories=["Cs", "Cc"]), st.characters()), max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)
dtypes = st.sampled_from(["F32", "F16", "BF16", "F64", "I8", "BOOL", "F8_E4M3", "Q4", "", "f32"])
sizes = st.one_of(st.integers(min_value=-3, max_value=40), st.sampled_from([0, 10**9, 2**63, -(2**40)]))
tensor_infos = st.one_of(
    st.fixed_dictionaries(
        {"dtype": dtypes, "shape": st.lists(sizes, max_size=3), "data_offsets": st.lists(sizes, min_size=2, max_size=2)}
    ),
    json_values,
)
headers = st.dictionaries(
    st.sampled_from(["model.embed_tokens.weight", "wte.weight", "__metadata__", "x"]), tensor_infos, max_size=3
)


@FILE_SETTINGS
@given(header=headers, data_size=st.integers(min_value=0, max_value=300), deep=st.integers(min_value=0, max_value=3))
def test_random_safetensors_headers_give_ranges_inside_the_file_or_corrupt_weights(
    tmp_path_factory: pytest.TempPathFactory, header: dict[str, object], data_size: int, deep: int
) -> None:
    from embedexplorer.core.formats.safetensors_io import read_header

    raw = json.dumps(header).encode("utf-8", "surrogatepass")
    if deep:
        raw = b"[" * 10**deep * 50 + b"]" * 10**deep * 50  # nesting no JSON reader should follow
    file = tmp_path_factory.getbasetemp() / "fuzz.safetensors"
    file.write_bytes(len(raw).to_bytes(8, "little") + raw + bytes(data_size))
    try:
        entries = read_header(file)
    except CorruptWeightsError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    size = file.stat().st_size
    for entry in entries.values():
        assert 8 + len(raw) <= entry.start <= entry.end <= size, entry


shard_names = st.one_of(
    st.sampled_from(
        ["shard.safetensors", "./shard.safetensors", ".//shard.safetensors", "alias.safetensors", "missing.safetensors"]
    ),
    st.sampled_from(["../shard.safetensors", "/etc/hostname", "a/../../x", "C:\\x", "\\\\server\\x", "..", "", "."]),
    st.text(alphabet=st.sampled_from(list("./\\ab.\x00\x1b")), max_size=10),
    json_scalars,
)


@FILE_SETTINGS
@given(names=st.lists(shard_names, max_size=6), wrap=st.booleans())
@example(names=["\n"], wrap=True)  # found by the fuzzer: a line break in a missing shard's name
def test_random_shard_indexes_name_only_files_inside_the_folder(
    tmp_path_factory: pytest.TempPathFactory, names: list[object], wrap: bool
) -> None:
    from embedexplorer.core.formats.safetensors_io import INDEX_FILE, weight_files

    folder = tmp_path_factory.getbasetemp() / "fuzz-model"
    if not folder.exists():
        folder.mkdir()
        (folder / "shard.safetensors").write_bytes(b"\0" * 8)
        (folder / "alias.safetensors").symlink_to("shard.safetensors")
    index: object = {"weight_map": {f"w{i}": name for i, name in enumerate(names)}} if wrap else names
    (folder / INDEX_FILE).write_text(json.dumps(index), encoding="utf-8", errors="surrogatepass")
    try:
        files = weight_files(folder)
    except CorruptWeightsError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    real = [os.path.realpath(f) for f in files]
    assert len(real) == len(set(real))  # each real file once
    assert all(Path(f).resolve().parent == folder.resolve() for f in files)


@FILE_SETTINGS
@given(content=json_values, wrap=st.booleans())
def test_random_families_files_load_or_raise_families_error(
    tmp_path_factory: pytest.TempPathFactory, content: object, wrap: bool
) -> None:
    from embedexplorer.core.maps.family_map import load_families, save_families

    file = tmp_path_factory.getbasetemp() / "fuzz-families.json"
    data = {"families": content} if wrap else content
    file.write_bytes(json.dumps(data).encode("utf-8"))  # lone surrogates travel as \\ud800 escapes
    try:
        families = load_families(file)
    except FamiliesError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        for name, words in families.items():
            (name + "".join(words)).encode("utf-8")  # all of it is text
            assert words and all(w.strip() for w in words)
        save_families(families, file)
        assert load_families(file) == families
    try:
        save_families(content, file)  # type: ignore[arg-type]
    except FamiliesError as exc:
        assert str(exc) and "\n" not in str(exc)


api_arguments = st.one_of(json_values, st.binary(max_size=8), st.floats(), st.just(object()), st.tuples(st.integers()))


@pytest.mark.parametrize("model", ["minilm_table"])
def test_random_arguments_to_the_api_raise_only_query_errors(model: str, request: pytest.FixtureRequest) -> None:
    table = request.getfixturevalue(model)

    @FILE_SETTINGS
    @given(word=api_arguments, other=api_arguments, k=api_arguments)
    def run(word: object, other: object, k: object) -> None:
        for ask in (
            lambda: table.neighbours(word, k=k),
            lambda: table.cosine(word, other),
            lambda: table.tokenize(word),
            lambda: table.analogy(word, other, "paris", k=k),
        ):
            try:
                ask()
            except QueryError as exc:
                assert str(exc) and "\n" not in str(exc)

    run()
