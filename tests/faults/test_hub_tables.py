"""Table-only downloads: the headers, then only the token (and position) table's bytes.

Each case runs the command line in a new process pointed at the loopback Hub
look-alike (huggingface_hub reads HF_ENDPOINT when it is imported). The look-alike
redirects weight files to a second loopback host, as the Hub's storage does, and
counts every byte it sends, so the figures here are measured on the server's side.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from .helpers import COMMIT, assert_one_line_error, blackhole, fake_hub, run_cli
from .test_network import app_cache, online_env

REPO = "someone/tiny-rotary"
TABLE = "model.embed_tokens.weight"
WEIGHTS = "model.safetensors"


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)


def header_of(file: Path) -> tuple[int, dict[str, dict[str, object]]]:
    """The header's length and JSON, read with nothing but the format's definition."""
    data = file.read_bytes()
    length = int.from_bytes(data[:8], "little")
    return length, json.loads(data[8 : 8 + length])


def table_span(file: Path, name: str) -> tuple[int, int]:
    """Absolute first and past-last byte of tensor ``name`` in a safetensors file."""
    length, header = header_of(file)
    begin, end = header[name]["data_offsets"]  # type: ignore[misc]
    return 8 + length + int(begin), 8 + length + int(end)


def stored(home: Path, repo: str = REPO) -> Path:
    return home / "embedexplorer" / "tables" / repo.replace("/", "--")


def offline_env(home: Path, endpoint: str) -> dict[str, str]:
    """Network allowed but pointed at ``endpoint`` (a blackhole): any attempt would be counted."""
    return {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": endpoint, "HF_HOME": str(home), **app_cache(home)}


def info_json(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ----- a complete download, then opened with no network ------------------------------------------------
def test_table_only_download_fetches_the_table_and_opens_offline(tmp_path: Path, rotary_folder: Path) -> None:
    source = rotary_folder / WEIGHTS
    header_len, _ = header_of(source)
    start, end = table_span(source, TABLE)
    with fake_hub(REPO, rotary_folder) as hub:
        result = run_cli("info", "--json", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
        sent, ranges = dict(hub.sent), list(hub.ranges)
        storage_auth = list(hub.storage.authorizations)
    downloaded = info_json(result)
    assert result.stderr == ""  # no progress bars or notes when stderr is not a terminal

    # The whole model's figures, as the full folder gives them.
    full = info_json(run_cli("info", "--json", "--model", str(rotary_folder)))
    for key in ("rows", "width", "table_weights", "model_weights", "share", "position_note"):
        assert downloaded[key] == full[key], key
    assert downloaded["model"] == REPO

    # Only the header and the table's bytes of the weights crossed the network.
    assert sent[WEIGHTS] == 8 + header_len + (end - start)
    weight_ranges = [(a, b) for name, a, b in ranges if name == WEIGHTS]
    assert all(b <= 8 + header_len or (start <= a and b <= end) for a, b in weight_ranges), weight_ranges
    assert all(auth is None for auth in storage_auth)

    # A small valid model folder: the safetensors library reads the table, equal to the source's.
    folder = stored(tmp_path)
    assert np.array_equal(load_file(str(folder / WEIGHTS))[TABLE], load_file(str(source))[TABLE])
    assert set(load_file(str(folder / WEIGHTS))) == {TABLE}
    note = json.loads((folder / "embedexplorer-table.json").read_text(encoding="utf-8"))
    assert (note["repository"], note["revision"]) == (REPO, COMMIT)
    assert note["model_weights"] == full["model_weights"]
    assert set(note["tensors"]) == set(header_of(source)[1]) - {"__metadata__"}
    assert not (tmp_path / "hub").exists() or not any((tmp_path / "hub").glob("models--*"))  # HF cache untouched
    assert not [p for p in (tmp_path / "embedexplorer" / "tables" / ".partial").iterdir() if p.is_dir()]

    # Opened later with the Hub unreachable: not one connection.
    with blackhole() as hole:
        env = offline_env(tmp_path, hole.url)
        again = run_cli("neighbours", "--json", "--model", REPO, "monday", "-k", "3", env=env)
        connections = len(hole.connections)
    assert again.returncode == 0, again.stderr
    assert len(json.loads(again.stdout)["neighbours"]) == 3
    assert connections == 0


# ----- cut off halfway through the table, then resumed ---------------------------------------------------
def test_a_cut_download_resumes_with_only_the_rest_of_the_table(tmp_path: Path, rotary_folder: Path) -> None:
    source = rotary_folder / WEIGHTS
    start, end = table_span(source, TABLE)
    cut_at = start + (end - start) // 2
    with fake_hub(REPO, rotary_folder, cut=WEIGHTS, cut_at=cut_at) as hub:
        first = run_cli("info", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
    assert_one_line_error(first, f"The download of '{REPO}' stopped before it finished", "run the download again")

    # Nothing looks complete: no table folder, and the model cannot be opened without the network.
    assert not stored(tmp_path).exists()
    part = tmp_path / "embedexplorer" / "tables" / ".partial" / REPO.replace("/", "--") / (WEIGHTS + ".part")
    part_header, _ = header_of(part)
    arrived = part.stat().st_size - 8 - part_header
    assert arrived == cut_at - start
    unfinished = run_cli("info", "--model", REPO, env={**offline_env(tmp_path, ""), "HF_HUB_OFFLINE": "1"})
    assert_one_line_error(unfinished, f"'{REPO}' is only partly here: the download of its table was interrupted")

    with fake_hub(REPO, rotary_folder) as hub:
        second = run_cli("info", "--json", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
        sent = dict(hub.sent)
    assert info_json(second)["rows"] == 30522
    # Only the rest of the table was fetched: no header, no small file, no byte twice.
    assert sent == {WEIGHTS: (end - start) - arrived}
    table = load_file(str(stored(tmp_path) / WEIGHTS))[TABLE]
    assert np.array_equal(table, load_file(str(source))[TABLE])


# ----- a header that lies about where the bytes are ---------------------------------------------------------
def lying_folder(rotary_folder: Path, target: Path, how: str) -> Path:
    target.mkdir()
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(rotary_folder / name, target / name)
    data = (rotary_folder / WEIGHTS).read_bytes()
    length, header = header_of(rotary_folder / WEIGHTS)
    begin, end = header[TABLE]["data_offsets"]  # type: ignore[misc]
    if how == "overlap":  # the right length, but starting inside the tensor before it
        header[TABLE]["data_offsets"] = [begin - 64, end - 64]  # type: ignore[index]
    else:  # a byte range shorter than the shape needs
        header[TABLE]["data_offsets"] = [begin, end - 4]  # type: ignore[index]
    raw = json.dumps(header).encode("utf-8")
    (target / WEIGHTS).write_bytes(len(raw).to_bytes(8, "little") + raw + data[8 + length :])
    return target


@pytest.mark.parametrize(
    ("how", "says"),
    [("overlap", "byte ranges overlap or leave gaps"), ("short", "has inconsistent offsets")],
)
def test_a_header_that_lies_about_byte_ranges_is_refused(
    tmp_path: Path, rotary_folder: Path, how: str, says: str
) -> None:
    folder = lying_folder(rotary_folder, tmp_path / "lying", how)
    header_len, _ = header_of(folder / WEIGHTS)
    with fake_hub(REPO, folder) as hub:
        result = run_cli("info", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
        sent = hub.sent.get(WEIGHTS, 0)
    assert_one_line_error(
        result,
        f"'{REPO}' cannot be downloaded: the header of model.safetensors",
        says,
        "Nothing beyond the file headers",
    )
    assert sent == 8 + header_len  # not one byte of a tensor was fetched
    assert not stored(tmp_path).exists()


# ----- a server that ignores Range ------------------------------------------------------------------------
def test_a_server_that_ignores_range_still_gives_the_right_table_and_says_so(
    tmp_path: Path, rotary_folder: Path
) -> None:
    with fake_hub(REPO, rotary_folder, ignore_range=True) as hub:
        result = run_cli("info", "--json", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
    assert info_json(result)["rows"] == 30522
    notes = result.stderr.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith("embedexplorer: note: ")
    assert "ignored byte-range requests" in notes[0] and "complete and checked" in notes[0]
    source = rotary_folder / WEIGHTS
    assert np.array_equal(load_file(str(stored(tmp_path) / WEIGHTS))[TABLE], load_file(str(source))[TABLE])


# ----- no safetensors: refused, and no pickle is fetched --------------------------------------------------
def test_a_repository_with_only_pickles_is_refused_without_fetching_them(tmp_path: Path, rotary_folder: Path) -> None:
    folder = tmp_path / "pickles"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(rotary_folder / name, folder / name)
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04K\x01.")  # a pickle: never to be read
    with fake_hub(REPO, folder) as hub:
        result = run_cli("info", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
        asked = list(hub.requests) + list(hub.storage.requests)
    assert_one_line_error(
        result, f"'{REPO}' has no safetensors weights", "only pickled ones (pytorch_model.bin)", "arbitrary code"
    )
    assert not any("pytorch_model.bin" in request for request in asked)
    assert not stored(tmp_path).exists()


# ----- gated repositories ----------------------------------------------------------------------------------
def test_a_gated_repository_without_a_token_says_how_to_log_in(tmp_path: Path, rotary_folder: Path) -> None:
    with fake_hub(REPO, rotary_folder, token="hf_gated_secret") as hub:
        result = run_cli("info", "--model", REPO, "--download", env={**online_env(hub.url, tmp_path), "HF_TOKEN": ""})
    assert_one_line_error(result, f"'{REPO}' is gated", "hf auth login", "huggingface-cli login", "HF_TOKEN")


def test_a_gated_repository_with_a_token_uses_it(tmp_path: Path, rotary_folder: Path) -> None:
    with fake_hub(REPO, rotary_folder, token="hf_gated_secret") as hub:
        env = {**online_env(hub.url, tmp_path), "HF_TOKEN": "hf_gated_secret"}
        result = run_cli("info", "--json", "--model", REPO, "--download", env=env)
        # (huggingface_hub itself may ask the Hub for other things, such as its agent registry.)
        hub_auth = [auth for request, auth in zip(hub.requests, hub.authorizations, strict=True) if REPO in request]
        storage_auth = list(hub.storage.authorizations)
    assert info_json(result)["rows"] == 30522
    assert hub_auth and all(auth == "Bearer hf_gated_secret" for auth in hub_auth)
    assert storage_auth and all(auth is None for auth in storage_auth)  # never sent on to the storage host


def test_a_wrong_token_is_named_as_refused(tmp_path: Path, rotary_folder: Path) -> None:
    with fake_hub(REPO, rotary_folder, token="hf_gated_secret") as hub:
        env = {**online_env(hub.url, tmp_path), "HF_TOKEN": "hf_someone_else"}
        result = run_cli("info", "--model", REPO, "--download", env=env)
    assert_one_line_error(result, f"The Hugging Face Hub refused your token for '{REPO}'", "Ask for access")


# ----- stopping between blocks ----------------------------------------------------------------------------
def test_should_stop_interrupts_and_keeps_what_arrived(tmp_path: Path, rotary_folder: Path) -> None:
    code = (
        "from embedexplorer.core.common.errors import Interrupted\n"
        "from embedexplorer.core.sources.hub import download_table\n"
        "seen = []\n"
        "try:\n"
        f"    download_table({REPO!r}, progress=lambda d, t, m: seen.append((d, t)), should_stop=lambda: bool(seen)"
        " and seen[-1][0] > 0)\n"
        "except Interrupted as exc:\n"
        "    print(seen[-1][0], seen[-1][1], exc)\n"
    )
    with fake_hub(REPO, rotary_folder) as hub:
        env = {**dict(os.environ), **online_env(hub.url, tmp_path)}
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    done, total, message = result.stdout.split(" ", 2)
    start, end = table_span(rotary_folder / WEIGHTS, TABLE)
    assert 0 < int(done) < int(total) == end - start
    assert "was stopped" in message
    assert not stored(tmp_path).exists()


# ----- two downloads of one model at once -------------------------------------------------------------------
def test_a_second_download_of_the_same_model_waits_its_turn(tmp_path: Path, rotary_folder: Path) -> None:
    import fcntl

    lock = tmp_path / "embedexplorer" / "tables" / ".partial" / (REPO.replace("/", "--") + ".lock")
    lock.parent.mkdir(parents=True)
    with fake_hub(REPO, rotary_folder) as hub, open(lock, "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as a download in another process holds it
        result = run_cli("info", "--model", REPO, "--download", env=online_env(hub.url, tmp_path))
        fetched = dict(hub.sent)
    assert_one_line_error(result, f"Another download of '{REPO}' is running")
    assert fetched == {}
