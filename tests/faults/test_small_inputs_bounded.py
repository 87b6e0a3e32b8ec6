"""Issue 37, rule 1: a small input never costs unbounded memory or time.

Every file read named by a cache, a store or a listing is a regular-file check, a size
bound and a non-blocking open; every structure built from a file is bounded by what the
file can honestly hold before it is allocated; a user's pattern is bounded when it is
compiled as well as when it runs.  The cases that once took gigabytes run in a child under
an address-space ceiling (tests/faults/capped.py), so a regression fails there.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q

from tests.gguf_fixture import quantised_rows, small_vocabulary, write_gguf

from .capped import run_capped_python

LISTING = """
from embedexplorer.core.sources.discovery import local_models
result = [[m.kind, m.name, m.spec, m.missing] for m in local_models() if m.kind != "bundled"]
"""  # the bundled model is on every machine; these tests are about the other places


def hub_cache_model(hf_home: Path, revision: str = "0123456789abcdef") -> Path:
    """A Hub cache entry with a config and a weights file: enough for the listing."""
    repo = hf_home / "hub" / "models--someone--cached"
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (snapshot / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    (repo / "refs").mkdir()
    return repo / "refs" / "main"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse-12-GB", "folder"])
def test_a_hub_cache_ref_that_is_not_a_small_file_is_not_read(tmp_path: Path, kind: str) -> None:
    ref = hub_cache_model(tmp_path / "hf")
    if kind == "fifo":
        os.mkfifo(ref)  # no writer: a blocking read would wait for ever
    elif kind == "dev-zero":
        ref.symlink_to("/dev/zero")
    elif kind == "sparse-12-GB":
        with open(ref, "wb") as handle:
            handle.truncate(12 * 1024**3)
    else:
        ref.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    answer = run_capped_python(LISTING, env={"HF_HOME": str(tmp_path / "hf"), "HOME": str(home)}, timeout=30)
    # The ref is passed over and the newest snapshot listed, as for a cache without refs.
    assert answer == {"result": [["hf-cache", "someone/cached", "someone/cached", ""]]}


def test_an_lm_studio_home_pointer_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.mkfifo(home / ".lmstudio-home-pointer")
    answer = run_capped_python(LISTING, env={"HF_HOME": str(tmp_path / "hf"), "HOME": str(home)}, timeout=30)
    assert answer == {"result": []}


def test_a_fifo_named_like_a_model_is_not_a_model_and_a_split_claiming_99999_parts_is_listed_once(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    folder = home / ".lmstudio" / "models" / "someone" / "odd-GGUF"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "x.gguf")
    os.mkfifo(folder / "fifo-00001-of-00002.gguf")
    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    write_gguf(folder / "m-00001-of-99999.gguf", rows, Q.F16, metadata={"split.count": 99_999, "split.no": 0})
    write_gguf(folder / "m-00003-of-99999.gguf", rows, Q.F16, metadata={"split.count": 99_999, "split.no": 2})
    answer = run_capped_python(LISTING, env={"HF_HOME": str(tmp_path / "hf"), "HOME": str(home)}, timeout=30)
    assert answer == {
        "result": [
            [
                "lmstudio",
                "someone/odd-GGUF/m",
                str(folder / "m-00001-of-99999.gguf"),
                "parts 2, 4, 5 and 99,994 more of 99,999 missing",
            ]
        ]
    }
    # Opening it names the missing parts in one sentence, the same way.
    opened = run_capped_python(
        f"from embedexplorer import open_table\nresult = open_table({str(folder / 'm-00001-of-99999.gguf')!r})",
        timeout=30,
    )
    assert opened["error"] == "ModelNotFoundError"
    assert "m-00002-of-99999.gguf, m-00004-of-99999.gguf, m-00005-of-99999.gguf and 99,994 more are missing" in str(
        opened["message"]
    )


@pytest.mark.parametrize("kind", ["t5", "rwkv", "plamo2", "llama", "gpt2"])
def test_a_vocabulary_with_a_100000_character_token_is_refused_before_any_tokenizer_is_built(
    tmp_path: Path, kind: str
) -> None:
    # PLaMo-2, RWKV and T5 index every prefix of a token: one such token took 2.9 to 4.8 GB.
    tokens = ["<unk>", "<s>", "</s>", *small_vocabulary(296), "x" * 100_000]
    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    path = write_gguf(
        tmp_path / f"giant-{kind}.gguf", rows, Q.F16, tokens=tokens, tokenizer_model=kind, pre=None,
        token_types=[2, 3, 3] + [1] * 296 + [4], scores=[0.0] * 300,
    )  # fmt: skip
    for separate in (False, True):  # the tokenizer built here, and in its child process
        answer = run_capped_python(
            f"from embedexplorer import open_table\nresult = open_table({str(path)!r}, separate_tokenizer={separate})"
        )
        assert answer["error"] == "TokenizerMismatchError", answer
        assert str(answer["message"]) == (
            f"{path.name} has a token of 100,000 bytes (token 299); real vocabularies have none longer than "
            "about 1,000 and EmbedExplorer reads tokens of at most 16,384 bytes, so its tokenizer was not built."
        )


def test_many_long_tokens_together_are_refused_too(tmp_path: Path) -> None:
    # Each under the bound, together past what indexing their prefixes may take.
    tokens = ["<unk>", "<s>", "</s>", *[f"{i:05d}" + "y" * 16_000 for i in range(2_100)]]
    rows = np.random.default_rng(0).standard_normal((len(tokens), 8)).astype(np.float16)
    path = write_gguf(tmp_path / "long.gguf", rows, Q.F16, tokens=tokens, tokenizer_model="rwkv", pre=None)
    answer = run_capped_python(f"from embedexplorer import open_table\nresult = open_table({str(path)!r})")
    assert answer["error"] == "TokenizerMismatchError"
    assert "so long together (the longest 16,005 bytes) that indexing them would take over 256 MiB" in str(
        answer["message"]
    )


@pytest.mark.parametrize(
    "pattern",
    [
        "(?:(?:(?:(?:a{1000}){1000}){1000}){1000})",
        "(?:a{1000}){1000}",
        "(?:ab){100000}",
        "(x|(?:y{500}){500})",
        "[a-z]{5}(?:\\p{L}{1000}){1000}",
    ],
)
def test_a_pattern_that_unrolls_to_millions_of_steps_is_refused_before_it_is_compiled(pattern: str) -> None:
    code = f"""
from embedexplorer import open_table
from embedexplorer.core.maps.word_sets import choose
result = choose(open_table("bundled"), {pattern!r}, "skip").description
"""
    answer = run_capped_python(code, timeout=60)
    assert answer["error"] == "QueryError", answer
    message = str(answer["message"])
    assert message.startswith(f"The regular expression {pattern!r} asks for ")
    assert "at most 100,000 are allowed" in message and "\n" not in message


def test_patterns_people_write_still_work() -> None:
    from embedexplorer import open_table
    from embedexplorer.core.maps.word_sets import choose

    table = open_table("bundled")
    assert len(choose(table, "^(?:un|re)[a-z]{3,8}$", "skip")) > 100
    assert len(choose(table, "^[a-z]{1,20}ing$", "skip")) > 100
    assert len(choose(table, "a{2}", "skip")) > 0


def patch_rows(path: Path, tensor: str, rows: int) -> None:
    """Make the header of ``path`` claim ``rows`` rows for ``tensor`` (its last tensor), the file grown sparsely."""
    data = bytearray(path.read_bytes())
    name = tensor.encode()
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
    dims, width, old_rows = struct.unpack_from("<IQQ", data, at)
    assert dims == 2
    struct.pack_into("<Q", data, at + 12, rows)
    row_bytes = (width // 32) * 18  # Q4_0: 18 bytes per 32 numbers
    path.write_bytes(data)
    with open(path, "r+b") as handle:
        handle.truncate(len(data) + (rows - old_rows) * row_bytes)  # sparse: nothing written


# 2 M rows of 256 (288 MB on disk, 2 GB as float32); 20 M rows of 32 (the reported file: 360 MB, 2.6 GB).
@pytest.mark.parametrize(("claimed", "width"), [(2_000_000, 256), (20_000_000, 32)])
def test_a_quantised_position_table_claiming_millions_of_rows_is_never_made_whole(
    tmp_path: Path, claimed: int, width: int
) -> None:
    rng = np.random.default_rng(0)
    positions = quantised_rows(rng.standard_normal((4, width)).astype(np.float32), Q.Q4_0)
    path = write_gguf(
        tmp_path / "positions.gguf",
        rng.standard_normal((300, width)).astype(np.float16),
        Q.F16,
        extra={"position_embd.weight": (positions, Q.Q4_0)},
    )
    patch_rows(path, "position_embd.weight", claimed)
    code = f"""
from embedexplorer import open_table
table = open_table({str(path)!r})
result = [table.position_count, table.position_row(1).shape[0], float(abs(table.position_row(2)).sum())]
"""
    answer = run_capped_python(code)
    if claimed > 4_194_304:  # more positions than any table may have rows: refused in one sentence
        assert answer == {
            "error": "TableNotFoundError",
            "message": f"The position table of {path.name} claims {claimed:,} rows; EmbedExplorer opens tables of "
            "at most 4,194,304 rows (the largest vocabularies in use have about 260,000).",
        }
    else:  # read one row at a time, when asked
        assert answer["result"][:2] == [claimed, width]
        assert answer["result"][2] > 0
