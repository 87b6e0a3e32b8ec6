"""The network is used only for a download the user asked for, and never hangs the program.

huggingface_hub reads HF_ENDPOINT when it is imported, so each case runs in a new
process pointed at a loopback server: a closed port (offline), a port that accepts
and never answers, or a small Hub look-alike that can drop a download halfway.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import (
    LOOPBACK,
    assert_one_line_error,
    blackhole,
    closed_port,
    fake_hub,
    run_cli,
)

REPO = "someone/tiny-rotary"


def online_env(endpoint: str, home: Path) -> dict[str, str]:
    """Network allowed (HF_HUB_OFFLINE=0), an empty cache, and the Hub at ``endpoint``."""
    assert endpoint.startswith(f"http://{LOOPBACK}:")
    return {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": endpoint, "HF_HOME": str(home), **app_cache(home)}


def app_cache(home: Path) -> dict[str, str]:
    """The app's own cache (table-only downloads) beside the test's HF cache, empty at first."""
    return {"EMBEDEXPLORER_CACHE_DIR": str(home / "embedexplorer")}


# ----- an offline start never waits on the network -----------------------------------------------------
def test_offline_start_and_info_never_touch_the_network(tmp_path: Path) -> None:
    with blackhole() as hole:
        env = online_env(hole.url, tmp_path)
        code = "from embedexplorer import open_table\nprint(open_table(None).name)\n"
        opened = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**dict(os.environ), **env}
        )
        info = run_cli("info", env=env, timeout=120)
        uncached = run_cli("tokens", "hello", "--model", "someone/not-cached", env=env, timeout=120)
        connections = len(hole.connections)

    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == "all-MiniLM-L6-v2 (bundled)"
    assert info.returncode == 0, info.stderr
    assert info.stdout.startswith("model: all-MiniLM-L6-v2 (bundled)")
    assert_one_line_error(uncached, "'someone/not-cached' is not a folder and not in the local Hugging Face cache")
    # Not one connection was made (a wait on the black hole would meet the runs' 120 s bound).
    assert connections == 0


# ----- asked to download while offline -----------------------------------------------------------------
def test_download_while_offline_says_so(tmp_path: Path) -> None:
    env = online_env(f"http://{LOOPBACK}:{closed_port()}", tmp_path)
    result = run_cli("info", "--model", REPO, "--download", env=env, timeout=120)
    assert_one_line_error(
        result,
        f"Cannot reach the Hugging Face Hub to download '{REPO}': you seem to be offline. "
        "Open a local model folder instead, or try again when you are online.",
    )


def test_download_with_hf_hub_offline_set(tmp_path: Path) -> None:
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path)}
    result = run_cli("info", "--model", REPO, "--download", env=env)
    assert_one_line_error(result, "HF_HUB_OFFLINE is set. Open a local model folder instead")


def test_a_hub_that_never_answers_does_not_hang_a_download(tmp_path: Path) -> None:
    code = (
        "import time\n"
        "import embedexplorer.core.sources.hub_session as hub_session\n"
        "import embedexplorer.core.sources.resolve as sources\n"
        "from embedexplorer.core.common.errors import OfflineError\n"
        "hub_session.HUB_TIMEOUT_SECONDS = 2.0\n"
        "start = time.perf_counter()\n"
        "try:\n"
        f"    sources.download_hub_model({REPO!r})\n"
        "except OfflineError as exc:\n"
        "    print(f'{time.perf_counter() - start:.1f}|{exc}')\n"
    )
    with blackhole() as hole:
        env = {**dict(os.environ), **online_env(hole.url, tmp_path)}
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
        asked = len(hole.connections)
    assert result.returncode == 0, result.stderr
    _seconds, message = result.stdout.strip().split("|", 1)
    assert message == (
        f"The Hugging Face Hub did not answer within 2 seconds while downloading '{REPO}'. "
        "Try again later, or open a local model folder."
    )
    assert asked >= 1  # it did try: the user asked for this download


# ----- a download cut off halfway ---------------------------------------------------------------------
def cache_files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}


def test_a_complete_download_through_the_hub_look_alike(tmp_path: Path, rotary_folder: Path) -> None:
    """The control for the next test: this Hub look-alike is good enough for a real download."""
    with fake_hub(REPO, rotary_folder) as hub:
        result = run_cli("info", "--model", REPO, "--download=full", env=online_env(hub.url, tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress bars or warnings when stderr is not a terminal
    assert "30,522 rows x 16 numbers" in result.stdout
    offline = run_cli("info", "--model", REPO, env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path)})
    assert offline.returncode == 0, offline.stderr


def test_a_download_cut_off_halfway_leaves_nothing_that_looks_complete(tmp_path: Path, rotary_folder: Path) -> None:
    weights = (rotary_folder / "model.safetensors").read_bytes()
    with fake_hub(REPO, rotary_folder, cut="model.safetensors") as hub:
        result = run_cli("info", "--model", REPO, "--download=full", env=online_env(hub.url, tmp_path), timeout=120)
        # The Hub redirects the weights to its storage host, which the retries ask again.
        weight_requests = [r for r in hub.storage.requests if r.startswith("GET /blob/model.safetensors")]
    message = assert_one_line_error(result, f"The download of '{REPO}' stopped before it finished")
    assert "run the download again" in message
    assert len(weight_requests) >= 2  # huggingface_hub tried to resume before giving up

    # Nothing in the cache holds the whole weights file, and no snapshot names one.
    files = cache_files(tmp_path)
    digest = hashlib.sha256(weights).hexdigest()
    assert not any(data == weights for data in files.values())
    assert not any(Path(name).name == digest for name in files)  # no blob under its final name
    snapshots = list((tmp_path / "hub" / "models--someone--tiny-rotary" / "snapshots").iterdir())
    assert snapshots and not any((s / "model.safetensors").exists() for s in snapshots)
    assert any((s / "config.json").exists() for s in snapshots)  # the small files did arrive

    # Opening it later without the network says the download was interrupted.
    offline = run_cli("info", "--model", REPO, env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path)})
    assert_one_line_error(
        offline,
        f"'{REPO}' is only partly in the local Hugging Face cache: its download was interrupted "
        "and the weights are missing. Download it again",
    )
    # Downloading again completes it.
    with fake_hub(REPO, rotary_folder) as hub:
        again = run_cli("info", "--model", REPO, "--download=full", env=online_env(hub.url, tmp_path))
    assert again.returncode == 0, again.stderr
    assert run_cli("info", "--model", REPO, env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path)}).returncode == 0


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    # Whatever the machine has set, these tests only ever talk to loopback servers.
    monkeypatch.delenv("HF_ENDPOINT", raising=False)


def test_download_progress_reaches_the_callback_only(tmp_path: Path, rotary_folder: Path) -> None:
    code = (
        "from embedexplorer.core.sources.resolve import download_hub_model\n"
        "seen = []\n"
        f"download_hub_model({REPO!r}, progress=lambda done, total, what: seen.append((done, total)))\n"
        "print(max(total for _, total in seen), max(done for done, _ in seen))\n"
    )
    with fake_hub(REPO, rotary_folder) as hub:
        env = {**dict(os.environ), **online_env(hub.url, tmp_path)}
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # tqdm drew nothing: the callback is the only report
    size = sum(p.stat().st_size for p in rotary_folder.iterdir())
    total, done = (int(n) for n in result.stdout.split())
    assert total == done == size


def test_download_of_an_id_the_hub_does_not_have(tmp_path: Path, rotary_folder: Path) -> None:
    with fake_hub(REPO, rotary_folder) as hub:
        result = run_cli("info", "--model", "someone/not-there", "--download", env=online_env(hub.url, tmp_path))
    assert assert_one_line_error(result) == (
        "embedexplorer: There is no model 'someone/not-there' on the Hugging Face Hub that can be "
        "downloaded without a login. Check the id, or open a local model folder. If it is private: "
        "Log in with 'hf auth login' (older versions: 'huggingface-cli login'), or set HF_TOKEN to an "
        "access token, then download again."
    )
