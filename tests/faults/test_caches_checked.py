"""Issue 37, rule 6: a cache that does not check out is made again with a note, never trusted, never fatal.

The map cache (t-SNE and UMAP coordinates as .npy) and the small files a table-only
download keeps under ``.partial/`` (a config.json a proxy cut short).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from embedexplorer import open_table
from embedexplorer.core.maps.map_cache import MapCache
from embedexplorer.core.maps.word_maps import word_map
from embedexplorer.core.maps.word_sets import choose

from .capped import run_capped_python
from .helpers import COMMIT, assert_one_line_error, fake_hub, run_cli
from .test_network import online_env

ROWS = 40


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def huge_header() -> bytes:
    """A real .npy header claiming (10^11, 2) float64 (1.6 TB) over 32 bytes of numbers."""
    header = npy_bytes(np.zeros((1, 2)))
    return header.replace(b"(1, 2)", b"(100000000000, 2)").replace(b"          \n", b"\n", 1) + bytes(16)


def npz_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("coords.npy", npy_bytes(np.zeros((ROWS, 2))))
    return buffer.getvalue()


HOSTILE_ENTRIES = {
    "npz-of-the-same-name": npz_bytes,
    "header-claiming-10^11-rows": huge_header,
    "cut-short": lambda: npy_bytes(np.random.default_rng(0).standard_normal((ROWS, 2)))[:-40],
    "other-shape": lambda: npy_bytes(np.zeros((ROWS + 1, 2))),
    "other-type": lambda: npy_bytes(np.zeros((ROWS, 2), dtype=np.float32)),
    "not-finite": lambda: npy_bytes(np.full((ROWS, 2), np.nan)),
    "text": lambda: b"not a map at all\n",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_ENTRIES))
def test_a_map_cache_entry_that_does_not_check_out_is_dropped_with_a_note(tmp_path: Path, kind: str) -> None:
    cache = MapCache(tmp_path)
    key = "k" * 40
    cache.path(key).write_bytes(HOSTILE_ENTRIES[kind]())
    coords, note = cache.checked(key, ROWS)
    assert coords is None
    assert note == f"The cached map {key}.npy did not check out (not this map's {ROWS:,} points), so it was made again."
    assert not cache.path(key).exists()  # dropped: the new map takes its place
    good = np.random.default_rng(1).standard_normal((ROWS, 2))
    assert cache.store(key, good)
    again, note = cache.checked(key, ROWS)
    assert note == "" and again is not None and np.array_equal(again, good)


def test_the_huge_header_is_refused_before_anything_is_allocated(tmp_path: Path) -> None:
    (tmp_path / ("k" * 40 + ".npy")).write_bytes(huge_header())
    code = f"""
from embedexplorer.core.maps.map_cache import MapCache
result = list(map(str, MapCache({str(tmp_path)!r}).checked("k" * 40, {ROWS})))
"""
    answer = run_capped_python(code)
    assert answer["result"][0] == "None" and "did not check out" in answer["result"][1], answer  # type: ignore[index]


def test_a_map_reads_a_good_entry_and_never_trusts_a_bad_one(tmp_path: Path) -> None:
    table = open_table("bundled")
    words = choose(table, "^(dog|cat|sun|moon|red|blue|king|queen|paris|london)$")
    cache = MapCache(tmp_path)
    key = cache.key(table, words, "tsne", 42)
    planted = np.random.default_rng(2).standard_normal((len(words), 2))
    cache.store(key, planted)
    drawn = word_map(table, words, method="tsne", cache=cache)  # read back, not computed
    assert drawn.from_cache and np.array_equal(drawn.coords, planted)
    cache.path(key).write_bytes(npz_bytes())  # replaced by an archive of the same name
    coords, note = cache.checked(key, len(words))
    assert coords is None and "did not check out" in note


# ----- the small files of a table-only download --------------------------------------------------------------
REPO = "someone/tiny-rotary"


def partial_folder(home: Path) -> Path:
    return home / "embedexplorer" / "tables" / ".partial" / REPO.replace("/", "--")


def test_a_config_cut_short_by_a_proxy_is_fetched_again(tmp_path: Path, rotary_folder: Path) -> None:
    with fake_hub(REPO, rotary_folder, short={"config.json": 1}) as hub:
        result = run_cli("info", "--json", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
        served = [r for r in hub.requests if r.endswith("/config.json")]
    assert result.returncode == 0, result.stderr
    assert len(served) == 2  # the short answer, then the whole file
    assert json.loads(result.stdout)["model"] == REPO


def test_a_config_an_earlier_try_kept_cut_short_is_fetched_again(tmp_path: Path, rotary_folder: Path) -> None:
    # What an earlier version left: the state of this commit's download and a config cut in half.
    staging = partial_folder(tmp_path)
    staging.mkdir(parents=True)
    (staging / "download-state.json").write_text(json.dumps({"repository": REPO, "revision": COMMIT}))
    whole = (rotary_folder / "config.json").read_bytes()
    (staging / "config.json").write_bytes(whole[: len(whole) // 2])
    with fake_hub(REPO, rotary_folder) as hub:
        result = run_cli("info", "--json", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["model"] == REPO


def test_a_config_always_cut_short_is_one_sentence_and_nothing_is_kept(tmp_path: Path, rotary_folder: Path) -> None:
    with fake_hub(REPO, rotary_folder, short={"config.json": 99}) as hub:
        result = run_cli("info", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
    assert_one_line_error(result, f"The Hub sent config.json of '{REPO}' cut short or damaged 3 times")
    assert not os.path.exists(partial_folder(tmp_path) / "config.json")
