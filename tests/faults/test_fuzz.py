"""Random texts through tokens, neighbours and cosine: only a plain EmbedExplorerError may escape.

The contract, decided here: for any text, ``tokenize`` and ``encode`` never raise. A text
with no tokens (empty, only spaces, or only characters the tokenizer drops) makes
``neighbours`` and ``cosine`` raise QueryError with a one-line message; every other text
gets an answer. A token id outside the table is a QueryError too. Nothing else escapes.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedexplorer.core.errors import EmbedExplorerError, QueryError

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
