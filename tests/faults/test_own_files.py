"""Files the program keeps for itself (caches, a download's part file, notes) trust nothing found in their place.

Hostile round 2, classes 1 (writes through links), 6 (poisoned caches) and 7 (a cache
cut short while open). Every hostile thing is built by a generator: what a planted link
names (a user's file of any bytes, a dangling name, a chain of links, a FIFO), what a
poisoned cache holds (lengths scaled, swapped, zeroed, NaN; first-pass rows flipped).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import torch
from gguf.constants import GGMLQuantizationType as Q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from embedexplorer import open_table
from embedexplorer.core.common import cache
from embedexplorer.core.common.files import atomic_write_bytes, open_own_file
from embedexplorer.core.maps.map_cache import MapCache
from embedexplorer.core.search import stored_search
from embedexplorer.core.search.stored_search import _identity

from ..gguf_fixture import float64_top_k, quantised_rows, write_gguf
from .helpers import word_level_tokenizer

SETTINGS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))

# What a link planted where the program keeps a file of its own may name.
user_bytes = st.binary(min_size=0, max_size=300)
link_kinds = st.sampled_from(["user-file", "dangling", "chain", "fifo", "user-file-elsewhere"])


@contextmanager
def planted_link(folder: Path, name: str, kind: str, content: bytes) -> Iterator[tuple[Path, Path | None]]:
    """A symbolic link at ``folder/name`` to something of the user's; yields (link, the user's file or None)."""
    home = folder / f"user-{name}"
    home.mkdir()
    user_file: Path | None = home / "thesis.txt"
    link = folder / name
    if kind == "user-file":
        user_file.write_bytes(content)
        link.symlink_to(user_file)
    elif kind == "user-file-elsewhere":
        user_file.write_bytes(content)
        link.symlink_to(os.path.relpath(user_file, folder))
    elif kind == "chain":
        user_file.write_bytes(content)
        middle = home / "middle"
        middle.symlink_to(user_file)
        link.symlink_to(middle)
    elif kind == "fifo":
        user_file = None
        fifo = home / "pipe"
        os.mkfifo(fifo)
        link.symlink_to(fifo)
    else:
        user_file = None
        link.symlink_to(home / "not-yet-there")
    yield link, user_file


def assert_replaced(link: Path, user_file: Path | None, content: bytes, expected: bytes | None = None) -> None:
    """The link's name now holds a regular file of our own; the user's file is as it was."""
    assert not link.is_symlink() and stat.S_ISREG(os.lstat(link).st_mode)
    if expected is not None:
        assert link.read_bytes() == expected
    if user_file is not None:
        assert user_file.read_bytes() == content
    assert not (link.parent / f"user-{link.name}" / "not-yet-there").exists()


@SETTINGS
@given(kind=link_kinds, content=user_bytes, data=st.binary(min_size=1, max_size=200))
def test_an_atomic_write_replaces_a_link_and_never_writes_the_file_it_names(kind, content, data) -> None:
    with tempfile.TemporaryDirectory() as tmp, planted_link(Path(tmp), "entry.bin", kind, content) as (link, user):
        atomic_write_bytes(link, data)
        assert_replaced(link, user, content, data)
        assert [p.name for p in Path(tmp).iterdir() if p.name.endswith(".tmp")] == []  # no partial file left


@SETTINGS
@given(kind=link_kinds, content=user_bytes, fresh=st.booleans())
def test_a_part_file_is_never_opened_through_a_link(kind, content, fresh) -> None:
    with tempfile.TemporaryDirectory() as tmp, planted_link(Path(tmp), "model.safetensors.part", kind, content) as (
        link,
        user,
    ):
        with open_own_file(link, fresh=fresh) as handle:
            assert handle.read() == b""  # a new file, not the user's bytes
            handle.write(b"table bytes")
        assert_replaced(link, user, content, b"table bytes")


@SETTINGS
@given(kind=link_kinds, content=user_bytes, rows=st.integers(min_value=2, max_value=50))
def test_caches_replace_planted_links(kind, content, rows) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        maps = MapCache(folder)
        coords = np.random.default_rng(rows).standard_normal((rows, 2))
        with planted_link(folder, f"{'k' * 40}.npy", kind, content) as (link, user):
            assert maps.load("k" * 40, rows) is None  # a link is no cache: never read through
            assert maps.store("k" * 40, coords)
            assert_replaced(link, user, content)
            np.testing.assert_array_equal(maps.load("k" * 40, rows), coords)

        previous = os.environ["EMBEDEXPLORER_CACHE_DIR"]  # tests/conftest.py sets it
        os.environ["EMBEDEXPLORER_CACHE_DIR"] = str(folder)
        try:
            lengths = np.arange(rows, dtype=np.float64)
            with planted_link(folder, "key.lengths", kind, content) as (link, user):
                assert cache.load_array("key", "lengths", (rows,), np.float64) is None
                cache.save_array("key", "lengths", lengths)
                assert_replaced(link, user, content, lengths.tobytes())
            with planted_link(folder, f".key.bf16.{os.getpid()}.tmp", kind, content) as (link, user):
                made = cache.new_array_file("key", "bf16", (rows, 4), np.uint16)
                assert made is not None
                made[0][:] = 7
                kept = cache.keep(made[0], made[1], "key", "bf16")
                assert (np.asarray(kept) == 7).all()
                if user is not None:
                    assert user.read_bytes() == content
        finally:
            os.environ["EMBEDEXPLORER_CACHE_DIR"] = previous


def test_a_table_download_replaces_a_planted_part_file_link(tmp_path: Path, rotary_folder: Path) -> None:
    """The resumable download itself, through the Hub look-alike: the part file's link is never written through."""
    from .helpers import fake_hub
    from .test_network import online_env

    repo = "someone/tiny-rotary"
    cache_home = tmp_path / "embedexplorer"
    staging = cache_home / "tables" / ".partial" / "someone--tiny-rotary"
    staging.mkdir(parents=True)
    victim = tmp_path / "thesis.txt"
    victim.write_bytes(b"my only copy")
    (staging / "model.safetensors.part").symlink_to(victim)
    code = (
        "from embedexplorer.core.sources.hub import download_table\n"
        f"print(download_table({repo!r}).folder)\n"
    )
    with fake_hub(repo, rotary_folder) as hub:
        env = {**os.environ, **online_env(hub.url, tmp_path)}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert victim.read_bytes() == b"my only copy"
    table = open_table(done.stdout.strip())
    reference = open_table(str(rotary_folder))
    np.testing.assert_array_equal(np.asarray(table.rows), np.asarray(reference.rows))


# ----- poisoned caches are checked against their table ----------------------------------------------
def bf16_folder(folder: Path, rows: int = 600, width: int = 24) -> tuple[Path, np.ndarray]:
    folder.mkdir(parents=True, exist_ok=True)
    weights = torch.randn(rows, width, generator=torch.Generator().manual_seed(rows)).to(torch.bfloat16)
    save_file({"model.embed_tokens.weight": weights}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": rows}), encoding="utf-8")
    vocab = {f"t{i}": i for i in range(rows)}
    (folder / "tokenizer.json").write_text(json.dumps(word_level_tokenizer(vocab)), encoding="utf-8")
    return folder, weights.to(torch.float64).numpy()


poisons = st.sampled_from(["scale", "zero", "nan", "swap", "shuffle", "one-row"])


def poisoned(lengths: np.ndarray, how: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bad = lengths.copy()
    if how == "scale":
        bad *= rng.uniform(1e-4, 0.5)
    elif how == "zero":
        bad[:] = 0.0
    elif how == "nan":
        bad[rng.random(bad.size) < 0.5] = np.nan
    elif how == "swap":
        bad = bad[::-1].copy()
    elif how == "shuffle":
        rng.shuffle(bad)
    else:
        bad[:] = 0.01  # the sweep's case: cosine(w, w) came out as 217,392.9
    return bad


@settings(max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(how=poisons, seed=st.integers(0, 2**16))
def test_poisoned_row_lengths_are_found_and_rebuilt(tmp_path_factory, how, seed) -> None:
    folder, stored = bf16_folder(tmp_path_factory.mktemp("bf16") / "model")
    first = open_table(str(folder))
    _ = first.screen
    entry = cache.cache_dir() / f"{_identity(first.rows)}.lengths"
    bad = poisoned(np.fromfile(entry), how, seed)
    if np.allclose(bad, first.screen.lengths, equal_nan=True):
        return  # a shuffle that changed nothing
    bad.tofile(entry)

    again = open_table(str(folder))
    # The oracle: plain numpy in float64 on the stored numbers.
    unit = stored / np.linalg.norm(stored, axis=1, keepdims=True)
    assert again.cosine(5, 5) == pytest.approx(1.0, abs=1e-9)
    assert again.cosine(3, 9) == pytest.approx(float(unit[3] @ unit[9]), abs=1e-9)
    ids, _ = float64_top_k(stored, stored[7], 8, (7,))
    assert [n.id for n in again.neighbours(7, k=8).neighbours] == ids
    assert any("thrown away and computed again" in note for note in again.screen.notes)
    np.testing.assert_allclose(np.fromfile(entry), np.linalg.norm(stored, axis=1), rtol=1e-12)  # rebuilt on disk


@contextmanager
def without_vnni() -> Iterator[None]:
    """The scan's build without AVX-512 VNNI, where Q5_K's first pass is a bfloat16 cache entry (with it, a
    copy of the rows sixteen at a time made at open, nothing on disk)."""
    quants = stored_search._quants
    if quants is not None:
        quants.use_build("plain")
    try:
        yield
    finally:
        if quants is not None:
            quants.use_build("best")


@without_vnni()
def test_a_poisoned_first_pass_of_a_quantised_table_is_rebuilt(tmp_path: Path) -> None:
    # Q5_K without VNNI: a type the C scan does not read in its blocks, so its first pass is a bfloat16 cache entry.
    rows = np.random.default_rng(3).standard_normal((640, 256)).astype(np.float32)
    path = write_gguf(tmp_path / "q5k.gguf", quantised_rows(rows, Q.Q5_K), Q.Q5_K)
    first = open_table(str(path))
    _ = first.screen
    stored = np.asarray(first.rows[:], dtype=np.float64)
    entry = cache.cache_dir() / f"{_identity(first.rows)}.bf16"
    bits = np.fromfile(entry, dtype=np.uint16)
    bits[::3] ^= 0x4000  # flips an exponent bit: the first pass now points elsewhere
    bits.tofile(entry)
    again = open_table(str(path))
    ids, _ = float64_top_k(stored, stored[11], 8, (11,))
    assert [n.id for n in again.neighbours(11, k=8).neighbours] == ids
    assert any("thrown away and computed again" in note for note in again.screen.notes)


# ----- a cache cut short while it is open --------------------------------------------------------------
CUT_WHILE_OPEN = """
import numpy as np, sys
from embedexplorer import open_table
from embedexplorer.core.common import cache
from embedexplorer.core.common.errors import EmbedExplorerError
from embedexplorer.core.search import stored_search
if stored_search._quants is not None:
    stored_search._quants.use_build("plain")  # no VNNI: Q5_K's first pass is a bfloat16 cache entry
cache.IN_MEMORY_LIMIT = 0  # every entry mapped, as a large table's would be
table = open_table(sys.argv[1])
table.neighbours(3, k=4)  # builds and keeps the first pass
again = open_table(sys.argv[1])
screen = again.screen  # maps the kept entries
for entry in cache.cache_dir().glob("*.bf16"):
    with open(entry, "r+b") as handle:
        handle.truncate(0)
try:
    again.neighbours(3, k=4)
except EmbedExplorerError as exc:
    print("refused:", exc)
"""


def test_a_cache_cut_short_while_open_is_a_message_not_sigbus(tmp_path: Path) -> None:
    rows = np.random.default_rng(4).standard_normal((4096, 256)).astype(np.float32)
    path = write_gguf(tmp_path / "q5k.gguf", quantised_rows(rows, Q.Q5_K), Q.Q5_K)  # a bfloat16 cache entry
    env = {**os.environ, "EMBEDEXPLORER_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run(
        [sys.executable, "-c", CUT_WHILE_OPEN, str(path)], capture_output=True, text=True, timeout=300, env=env
    )
    assert result.returncode == 0, (result.returncode, result.stderr)  # -7 would be SIGBUS
    assert result.stdout.startswith("refused:") and "changed on disk" in result.stdout
