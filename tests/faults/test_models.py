"""Models that cannot be opened say why in plain words; a model without positions still opens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from embedexplorer import open_table
from embedexplorer.core.common.errors import (
    CorruptWeightsError,
    EmbedExplorerError,
    ModelNotFoundError,
    OfflineError,
    TableNotFoundError,
    TokenizerMismatchError,
    UnsafeCheckpointError,
)


def test_a_path_that_does_not_exist() -> None:
    with pytest.raises(ModelNotFoundError, match=r"^No such folder: \./no/such/model$"):
        open_table("./no/such/model")


@pytest.mark.parametrize("spec", ["/no/such/model.gguf", "model.gguf", "sub/model-q4_k.GGUF", "./weights.safetensors"])
def test_a_model_file_that_does_not_exist_is_named_a_file(spec: str) -> None:
    """A remembered .gguf file since deleted: "No such file", never "folder" nor a Hugging Face id to download."""
    with pytest.raises(ModelNotFoundError, match=rf"^No such file: {re.escape(spec)}$"):
        open_table(spec)


def test_an_id_that_is_not_cached_offline() -> None:
    with pytest.raises(OfflineError, match="not a folder and not in the local Hugging Face cache"):
        open_table("someone/no-such-model")


def test_a_spec_no_file_system_accepts() -> None:
    with pytest.raises(ModelNotFoundError, match="not a folder or model id that can be opened"):
        open_table("bad\0name")


def test_a_file_instead_of_a_folder(rotary_folder: Path, tmp_path: Path) -> None:
    # A model folder's own file stands for its folder; any other file no reader claims is refused.
    assert open_table(str(rotary_folder / "model.safetensors")).name == str(rotary_folder.resolve())
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model", encoding="utf-8")
    with pytest.raises(ModelNotFoundError, match="is a file that is not a model; choose a model folder or file"):
        open_table(str(notes))


def test_an_empty_folder(broken: dict[str, Path]) -> None:
    with pytest.raises(TableNotFoundError, match="has no config.json; it does not look like a model folder"):
        open_table(str(broken["empty"]))


def test_a_folder_without_weights(broken: dict[str, Path]) -> None:
    with pytest.raises(CorruptWeightsError, match=r"has no weights: no \*\.safetensors file was found"):
        open_table(str(broken["no-weights"]))


@pytest.mark.parametrize(
    ("name", "file"), [("pickle-only", "pytorch_model.bin"), ("pickle-shards", "pytorch_model-00001-of-00002.bin")]
)
def test_pickled_weights_are_refused_with_the_reason(broken: dict[str, Path], name: str, file: str) -> None:
    with pytest.raises(UnsafeCheckpointError) as caught:
        open_table(str(broken[name]))
    message = str(caught.value)
    assert f"only has pickled weights ({file})" in message
    assert "can run arbitrary code" in message and "safetensors" in message


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("truncated", "is truncated: it ends at byte"),
        ("truncated-header", "has a broken header; the file is truncated or not safetensors"),
        ("zero-bytes", "is too short to be a safetensors file"),
        ("garbage", "has a broken header"),
        ("not-json-header", "has an unreadable header"),
        ("list-header", "has an unreadable header"),
        ("bad-offsets", "'model.embed_tokens.weight' has inconsistent offsets"),
    ],
)
def test_corrupt_safetensors_is_reported(broken: dict[str, Path], name: str, words: str) -> None:
    with pytest.raises(CorruptWeightsError) as caught:
        open_table(str(broken[name]))
    assert words in str(caught.value)
    assert str(caught.value).startswith("model.safetensors")


def test_a_tokenizer_with_more_ids_than_rows(broken: dict[str, Path]) -> None:
    with pytest.raises(TokenizerMismatchError) as caught:
        open_table(str(broken["gpt2-tokenizer-minilm-table"]))
    assert str(caught.value) == (
        "The tokenizer has 50,257 tokens but the table has only 30,522 rows: they do not belong to the same model."
    )


def test_a_tokenizer_from_another_model_with_fewer_ids(broken: dict[str, Path]) -> None:
    with pytest.raises(TokenizerMismatchError) as caught:
        open_table(str(broken["minilm-tokenizer-gpt2-table"]))
    assert str(caught.value) == (
        "config.json says the start-of-text token is id 50,256, but the tokenizer has only "
        "30,522 tokens: the tokenizer belongs to another model."
    )


def test_every_failure_is_an_embedexplorer_error_with_one_line(broken: dict[str, Path]) -> None:
    for name, folder in broken.items():
        with pytest.raises(EmbedExplorerError) as caught:
            open_table(str(folder))
        message = str(caught.value)
        assert message and "\n" not in message, (name, message)


def test_a_model_without_a_position_table_opens_and_says_so(rotary_table) -> None:  # type: ignore[no-untyped-def]
    facts = rotary_table.facts()
    assert facts.position_rows is None
    assert facts.position_note == ("no position table: the model marks positions by rotating rows (rotary embeddings)")
    assert (facts.rows, facts.width) == (30522, 16)
    # the q_proj and norm weights count; the inv_freq buffer does not; lm_head is untied here
    assert facts.model_weights == 2 * 30522 * 16 + 16 * 16 + 16
    assert rotary_table.position_row(0) is None
    report = rotary_table.tokenize("the capital of france is paris")
    assert report.position_rows is None and report.fits == report.count == 6 and report.note == ""
    assert len(rotary_table.neighbours("paris", k=5).neighbours) == 5


def test_a_long_text_on_a_model_without_positions_says_what_is_shown(rotary_table) -> None:  # type: ignore[no-untyped-def]
    report = rotary_table.tokenize("word " * 3000)
    assert report.count == report.fits == 3000
    assert len(report.tokens) == 2048
    assert report.note == "Showing the first 2,048 of 3,000 tokens."
