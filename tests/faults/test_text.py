"""Whatever is typed or pasted gets tokens and a plain note, or a QueryError that says why."""

from __future__ import annotations

import pytest

from embedexplorer.core.common.errors import QueryError
from embedexplorer.core.text.texts import MAX_SHOWN_TOKENS, MAX_TEXT_CHARS


def joined_bytes(tokens) -> bytes:  # type: ignore[no-untyped-def]
    # A byte-level token may be part of a character: text_of keeps such bytes as surrogate escapes.
    return b"".join(t.text.encode("utf-8", errors="surrogateescape") for t in tokens)


# ----- empty and blank -------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["minilm_table", "gpt2_table"])
def test_empty_text(model: str, request: pytest.FixtureRequest) -> None:
    table = request.getfixturevalue(model)
    report = table.tokenize("")
    assert (report.count, report.tokens, report.note) == (0, (), "The text is empty; type a word.")
    with pytest.raises(QueryError, match=r"^There is no token in an empty text; type a word\.$"):
        table.neighbours("")
    with pytest.raises(QueryError, match="There is no token in an empty text"):
        table.cosine("", "paris")


def test_only_spaces_on_minilm(minilm_table) -> None:  # type: ignore[no-untyped-def]
    report = minilm_table.tokenize("   \t ")
    assert report.count == 0
    assert report.note == "The text is only spaces, and this tokenizer drops spaces; type a word."
    with pytest.raises(QueryError, match=r"^There is no token in an empty text; type a word\.$"):
        minilm_table.neighbours("   ")


def test_only_spaces_are_tokens_on_gpt2(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    report = gpt2_table.tokenize("   ")
    assert [t.token for t in report.tokens] == ["_", "_", "_"]
    assert [t.id for t in report.tokens] == [220, 220, 220]
    assert report.note == ""


# ----- words the vocabulary lacks, words of several tokens -------------------------------------------
def test_unknown_word_becomes_unk_on_minilm(minilm_table) -> None:  # type: ignore[no-untyped-def]
    report = minilm_table.tokenize("i love 🙂")
    assert [t.token for t in report.tokens] == ["i", "love", "[UNK]"]
    assert report.unknown == 1
    assert report.note == (
        "1 of the 3 tokens are [UNK]: the vocabulary has no token for those characters, so they all share one row."
    )
    result = minilm_table.neighbours("🙂", k=3)
    assert result.query.token == "[UNK]" and result.query.id == 100
    assert result.note == "The vocabulary has no token for '🙂'; it became [UNK]."


def test_emoji_is_bytes_on_gpt2_never_unknown(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    report = gpt2_table.tokenize("🙂")
    assert [t.token for t in report.tokens] == ["<0xF0><0x9F>", "<0x99><0x82>"]
    assert joined_bytes(report.tokens) == "🙂".encode()
    assert report.unknown == 0 and report.note == ""


@pytest.mark.parametrize(
    ("model", "word", "pieces"),
    [
        ("minilm_table", "embeddings", ["em", "##bed", "##ding", "##s"]),
        ("gpt2_table", "unbelievability", ["un", "bel", "iev", "ability"]),
    ],
)
def test_a_word_of_several_tokens(model: str, word: str, pieces: list[str], request) -> None:  # type: ignore[no-untyped-def]
    table = request.getfixturevalue(model)
    query = table.query(word)
    assert [p.token for p in query.pieces] == pieces
    assert query.token == pieces[0]
    assert query.note == (
        f"{word!r} is {len(pieces)} tokens ({' '.join(pieces)}); the first, {pieces[0]}, answers for it."
    )
    assert table.neighbours(word, k=4).note == query.note


# ----- scripts and control characters ------------------------------------------------------------
SCRIPTS = {
    "emoji": "👩‍👩‍👧 🇫🇷 🙂",
    "cjk": "東京は日本の首都です",
    "hebrew": "שלום עולם",
    "arabic": "مرحبا بالعالم",
    "mixed direction": "Paris \u202eسلام\u202c est",
    "control": "a\x00b\x07c\x1bd",
    "zero width": "a\u200bb\u200dc\ufeff",
}


@pytest.mark.parametrize("text", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_gpt2_reads_every_script_byte_for_byte(gpt2_table, text: str) -> None:  # type: ignore[no-untyped-def]
    report = gpt2_table.tokenize(text)
    assert report.count > 0 and report.unknown == 0
    assert joined_bytes(report.tokens) == text.encode("utf-8")
    for token in report.tokens:
        assert token.token.isprintable(), token  # control bytes are spelled out, never printed raw
    gpt2_table.neighbours(text, k=3)


@pytest.mark.parametrize("text", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_minilm_reads_every_script_or_says_why_not(minilm_table, text: str) -> None:  # type: ignore[no-untyped-def]
    report = minilm_table.tokenize(text)
    assert report.count > 0
    assert all(t.token.isprintable() for t in report.tokens)
    minilm_table.neighbours(text, k=3)


def test_control_characters_alone_on_minilm(minilm_table) -> None:  # type: ignore[no-untyped-def]
    report = minilm_table.tokenize("\x07\x00\x1b")
    assert report.count == 0
    assert report.note == (
        "The tokenizer drops every character of <U+0007><U+0000><U+001B> "
        "(control or invisible characters); type a word."
    )
    with pytest.raises(QueryError, match="There is no token in"):
        minilm_table.neighbours("\x07")


def test_control_characters_are_spelled_out_on_gpt2(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    assert [t.token for t in gpt2_table.encode("\x07\n\t")] == ["<U+0007>", "\\n", "\\t"]


@pytest.mark.parametrize("model", ["minilm_table", "gpt2_table"])
def test_lone_surrogates_from_the_command_line(model: str, request: pytest.FixtureRequest) -> None:
    table = request.getfixturevalue(model)
    # "café" passed as bytes that were not decoded: argv keeps them as surrogate escapes
    assert [t.id for t in table.encode("caf\udcc3\udca9")] == [t.id for t in table.encode("café")]
    # a lone half of a surrogate pair becomes U+FFFD instead of a TypeError from the tokenizer
    assert [t.id for t in table.encode("a\ud800b")] == [t.id for t in table.encode("a\ufffdb")]
    table.tokenize("\udcff")
    table.neighbours("paris\udcff", k=2)


# ----- long pastes and the position table -------------------------------------------------------------
PASTE = "The capital of France is Paris, and 東京 is far away 🙂. " * 1900  # 102,600 characters


@pytest.mark.parametrize("model", ["minilm_table", "gpt2_table"])
def test_a_100000_character_paste_is_read_whole(model: str, request: pytest.FixtureRequest) -> None:
    # How fast is bench's business (about 0.1 s alone); this checks what the paste gives.
    table = request.getfixturevalue(model)
    text = PASTE[:100_000]
    report = table.tokenize(text)
    assert report.chars == report.chars_read == 100_000
    assert report.count == len(table.vocabulary.encode(text)) > 20_000
    assert len(report.tokens) == report.fits == report.position_rows
    rows = report.position_rows
    assert f"there is no row for position {rows + 1:,}" in report.note


def test_a_paste_beyond_the_cap_is_read_up_to_the_cap(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    text = PASTE * 10  # 1,026,000 characters; how fast it is read is bench's business
    report = gpt2_table.tokenize(text)
    assert report.chars == len(text) and report.chars_read == MAX_TEXT_CHARS
    assert report.count == len(gpt2_table.vocabulary.encode(text[:MAX_TEXT_CHARS]))
    assert report.note.startswith(f"Only the first 200,000 of {len(text):,} characters were read. ")
    assert not report.complete


def test_gpt2_has_no_row_for_position_1025(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    text = " hello" * 1500
    report = gpt2_table.tokenize(text)
    assert (report.count, report.position_rows, report.fits, len(report.tokens)) == (1500, 1024, 1024, 1024)
    assert report.note == (
        "The text is 1,500 tokens, but the position table has 1,024 rows: there is no row for "
        "position 1,025, so only the first 1,024 tokens fit (shown)."
    )
    assert gpt2_table.position_row(1023) is not None and gpt2_table.position_row(1024) is None
    every = gpt2_table.tokenize(text, only_fitting=False, max_shown=None)
    assert len(every.tokens) == 1500 and every.fits == 1024
    assert every.note.endswith("so only the first 1,024 tokens fit.")


def test_exactly_1024_tokens_fit_with_no_note(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    report = gpt2_table.tokenize(" hello" * 1024)
    assert (report.count, report.fits, len(report.tokens), report.note) == (1024, 1024, 1024, "")
    assert report.complete


def test_minilm_has_512_position_rows(minilm_table) -> None:  # type: ignore[no-untyped-def]
    report = minilm_table.tokenize("word " * 600)
    assert (report.count, report.fits, len(report.tokens)) == (600, 512, 512)
    assert "there is no row for position 513" in report.note


def test_display_cap_is_documented() -> None:
    assert MAX_SHOWN_TOKENS >= 1024  # GPT-2's whole context is always shown
    assert MAX_TEXT_CHARS >= 100_000  # a 100,000-character paste is read whole


def test_numbers_that_round_to_zero_never_read_minus_zero(gpt2_table) -> None:
    from embedexplorer.core.text.texts import fixed

    assert [fixed(v, 3) for v in (-0.0004, -0.0006, 0.0, 0.019)] == ["0.000", "-0.001", "0.000", "0.019"]
    # The random GPT-2's unrelated tokens average a hair below zero: the summary says 0.000.
    assert abs(gpt2_table.baseline_cosine) < 0.0005
    assert "(baseline): 0.000" in gpt2_table.facts().summary()
