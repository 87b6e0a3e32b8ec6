"""Opening does only what the answer needs: tokens listed when asked, ``tokens`` without the table.

The oracles are the libraries that wrote the files: ``tokenizers`` for every token and id,
``safetensors`` for the position table's shape.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from safetensors import safe_open
from tokenizers import Tokenizer

from embedexplorer.core.sources.resolve import bundled_model_dir
from embedexplorer.core.text.tokenizer_process import TokenizerProcess
from embedexplorer.core.text.vocabulary import Vocabulary

from ..faults.helpers import assert_one_line_error, run_cli, word_level_tokenizer, write_table_folder

TEXT = "The capital of France is Paris, naïve café 東京"


def test_the_child_describes_its_tokenizer_without_listing_it_and_lists_what_is_asked(gpt2_folder: Path) -> None:
    library = Tokenizer.from_file(str(gpt2_folder / "tokenizer.json"))
    size = library.get_vocab_size(with_added_tokens=True)
    process = TokenizerProcess(gpt2_folder, max_rows=size)
    try:
        described = process.facts()
        assert "raw_tokens" not in described  # 50,257 tokens are not sent to open the table
        assert described["size"] == size and described["top_id"] == size - 1
        ids = [0, 6342, 50256, 25996]
        assert process.tokens(ids) == [library.id_to_token(i) for i in ids]
        assert process.tokens(None) == [library.id_to_token(i) for i in range(size)]
        encoding = library.encode(TEXT, add_special_tokens=False)
        assert process.encode_listing(TEXT) == (encoding.ids, encoding.tokens)  # one request for both
    finally:
        process.close()


def test_a_vocabulary_lists_its_tokens_when_asked_exactly_as_the_library_stores_them(gpt2_folder: Path) -> None:
    for folder in (gpt2_folder, bundled_model_dir()):
        library = Tokenizer.from_file(str(folder / "tokenizer.json"))
        stored = library.get_vocab(with_added_tokens=True)
        by_id = [""] * (max(stored.values()) + 1)
        for token, token_id in stored.items():
            by_id[token_id] = token
        for vocabulary in (Vocabulary.from_folder(folder), Vocabulary.start(folder, separate_process=True)()):
            try:
                few = [5, len(by_id) - 1, 1000]
                vocabulary.prefetch(few)
                assert [vocabulary.raw_token(i) for i in few] == [by_id[i] for i in few]
                assert vocabulary.raw_token(len(by_id)) == ""  # past the last id
                assert vocabulary.max_id() == len(by_id) - 1
                # More than a few asked one by one: the whole list, the same.
                assert [vocabulary.raw_token(i) for i in range(0, len(by_id), 7)] == by_id[::7]
                assert vocabulary.facts.raw_tokens == by_id
            finally:
                vocabulary.close()


def test_tokens_on_a_folder_answers_from_the_tokenizer_and_the_header_without_the_table(gpt2_folder: Path) -> None:
    command = ["tokens", TEXT, "--model", str(gpt2_folder), "--json"]
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "embedexplorer", *command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    answer = json.loads(run.stdout)
    ids = Tokenizer.from_file(str(gpt2_folder / "tokenizer.json")).encode(TEXT, add_special_tokens=False).ids
    with safe_open(str(gpt2_folder / "model.safetensors"), "np") as weights:
        positions = weights.get_slice("transformer.wpe.weight").get_shape()[0]
    assert [t["id"] for t in answer["tokens"]] == ids
    assert (answer["count"], answer["fits"], answer["position_rows"]) == (len(ids), min(len(ids), positions), positions)
    # The table was never mapped: numpy, which mapping it needs, was never imported.
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if "import time:" in line}
    assert "embedexplorer.core.tables.token_only" in imported
    assert not {name for name in imported if name.split(".")[0] == "numpy"}


def test_tokens_on_a_folder_refuses_a_tokenizer_larger_than_its_table_in_one_line(tmp_path: Path) -> None:
    folder = write_table_folder(tmp_path / "small", 3, 8, word_level_tokenizer({f"w{i}": i for i in range(10)}))
    assert_one_line_error(run_cli("tokens", "w1 w9", "--model", str(folder)), "10 tokens", "3 rows")
    no_config = write_table_folder(tmp_path / "no-config", 4, 8)
    (no_config / "config.json").unlink()
    assert_one_line_error(run_cli("tokens", "t1", "--model", str(no_config)), "no config.json")
