"""Nothing waits forever and nothing reads without a bound: FIFOs, /dev/zero, slow and endless servers, regexes.

Hostile round 2, classes 4 (hangs) and 5 (memory blow-ups). Each trap is generated: which
file the trap stands in for, what kind of trap it is; a catastrophic regular expression
built from a repeat inside a repeat over tokens made to defeat it; a Hub that sends one
byte a second or never stops sending.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedexplorer.core.common.errors import EmbedExplorerError, QueryError
from embedexplorer.core.exercises.lessons import load_lesson
from embedexplorer.core.formats.table_store import read_note
from embedexplorer.core.maps.map_cache import MapCache
from embedexplorer.core.maps.word_sets import from_file, matching

from .helpers import (
    LOOPBACK,
    assert_one_line_error,
    ctrl_c_as_at_a_terminal,
    run_cli,
    word_level_tokenizer,
    write_table_folder,
)

TRAPS = ("fifo", "link-to-fifo", "dev-zero", "sparse-giant")
# A call that is refused must be refused at once; this only keeps a broken build from hanging the suite.
GIVE_UP_SECONDS = 60


def plant(path: Path, trap: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if trap == "fifo":
        os.mkfifo(path)
    elif trap == "link-to-fifo":
        os.mkfifo(path.with_name(path.name + ".pipe"))
        path.symlink_to(path.with_name(path.name + ".pipe"))
    elif trap == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as handle:
            handle.truncate(3 << 30)  # 3 GiB of nothing: no disk, but any unbounded read takes it all


def finishes(call: Callable[[], object]) -> object:
    """Run ``call`` on a thread; fail (instead of hanging) when it has not returned in time."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(GIVE_UP_SECONDS)
    assert not thread.is_alive(), "it waited on the trap"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("value")


@settings(max_examples=24, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(trap=st.sampled_from(TRAPS), surface=st.sampled_from(["lesson", "map-cache", "table-note", "word-list"]))
def test_a_trap_where_a_file_belongs_is_refused_at_once(minilm_table, trap: str, surface: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if surface == "lesson":
            plant(folder / "class.lesson.json", trap)
            with pytest.raises(EmbedExplorerError) as caught:
                finishes(lambda: load_lesson(folder / "class.lesson.json"))
            assert "class.lesson.json" in str(caught.value)
        elif surface == "map-cache":
            plant(folder / f"{'a' * 40}.npy", trap)
            assert finishes(lambda: MapCache(folder).load("a" * 40, 100)) is None  # no cache: it is made again
        elif surface == "table-note":
            plant(folder / "embedexplorer-table.json", trap)
            assert finishes(lambda: read_note(folder)) is None
        else:
            plant(folder / "words.txt", trap)
            with pytest.raises(QueryError) as caught:
                finishes(lambda: from_file(minilm_table, folder / "words.txt"))
            assert "words.txt" in str(caught.value)


@pytest.mark.parametrize("trap", ["fifo", "dev-zero"])
def test_the_command_line_refuses_a_word_list_that_is_a_trap(tmp_path: Path, trap: str) -> None:
    plant(tmp_path / "words.txt", trap)
    result = run_cli("map", "--model", "bundled", "--words", f"@{tmp_path / 'words.txt'}", timeout=GIVE_UP_SECONDS)
    assert_one_line_error(result, "words.txt", "not a regular file")


# ----- catastrophic regular expressions ------------------------------------------------------------
letters = st.sampled_from(list("a=xq"))
catastrophic = st.one_of(
    st.builds(lambda c: f"({c}|{c}{c})+$", letters),
    st.builds(lambda c: f"^({c}+)+$", letters),
    st.builds(lambda c: f"({c}*)*[^{c}!]$", letters),
    st.builds(lambda c: f"(({c}{c}?)+)+$", letters),
)


def regex_folder(folder: Path, letter: str, run: int) -> Path:
    """A small table whose tokens include long runs of ``letter`` ended by a character that defeats the pattern."""
    vocab = {"[UNK]": 0, "plain": 1, letter * run + "!": 2, letter * (run + 7) + "!": 3, "b" + letter * run: 4}
    return write_table_folder(folder, len(vocab), 8, word_level_tokenizer(vocab))


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(pattern=catastrophic, run=st.integers(min_value=40, max_value=90))
def test_a_catastrophic_regex_is_stopped_and_leaves_the_lock_free(tmp_path_factory, pattern: str, run: int) -> None:
    from embedexplorer import open_table

    letter = pattern[1] if pattern[1] not in "(^" else pattern[2]
    table = open_table(str(regex_folder(tmp_path_factory.mktemp("regex") / "model", letter, run)))
    outcome = matched_with_lock_free(table, pattern)
    if isinstance(outcome, QueryError) and "took more than" in str(outcome):
        assert "\n" not in str(outcome)
    else:  # the regex engine saw through this one: an answer, or none, in time
        assert not isinstance(outcome, BaseException) or "No token" in str(outcome), outcome


def matched_with_lock_free(table, pattern: str) -> object:  # type: ignore[no-untyped-def]
    """``matching`` on a thread of its own, while this one (the window's, in the app) counts; returns what it gave."""
    ticks = 0
    done = threading.Event()
    outcome: list[object] = []

    def match() -> None:
        try:
            outcome.append(matching(table, pattern))
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome.append(exc)
        finally:
            done.set()

    threading.Thread(target=match, daemon=True).start()
    began = time.monotonic()
    while not done.wait(0.001):
        ticks += 1
    if time.monotonic() - began > 2.0:  # it ran long enough for the window to notice a freeze
        assert ticks > 20  # it did not: Python's lock was free meanwhile
    return outcome[0]


@pytest.mark.parametrize("letter", ["a", "="])
def test_a_nested_repeat_over_a_long_run_is_refused_in_one_sentence(tmp_path: Path, letter: str) -> None:
    from embedexplorer import open_table

    table = open_table(str(regex_folder(tmp_path / "model", letter, 60)))
    outcome = matched_with_lock_free(table, f"({letter}|{letter}{letter})+$")
    assert isinstance(outcome, QueryError) and "took more than 0.2 s on the token" in str(outcome), outcome


def test_ctrl_c_stops_a_catastrophic_regex_on_the_command_line(tmp_path: Path) -> None:
    folder = regex_folder(tmp_path / "model", "a", 80)
    started = subprocess.Popen(
        [sys.executable, "-m", "embedexplorer", "map", "--model", str(folder), "--words", "(a|aa)+$"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    # Ctrl-C once the table is open (mapped into the process), when the pattern runs, or after
    # it has been refused and the command has ended.
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while started.poll() is None and time.monotonic() < deadline and str(folder) not in _mapped(started.pid):
        time.sleep(0.02)
    started.send_signal(signal.SIGINT)
    try:
        _, stderr = started.communicate(timeout=GIVE_UP_SECONDS)
    finally:
        started.kill()
    # Refused (2), or interrupted: 130, or ended by the signal itself (a shell reports both as 130).
    assert started.returncode in (2, 130, -signal.SIGINT), stderr
    assert "Traceback" not in stderr


def _mapped(pid: int) -> str:
    """The files process ``pid`` has mapped (empty once it has ended)."""
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


# ----- a Hub that is slow or bottomless -------------------------------------------------------------
REPO = "someone/slow"


class _TrickHub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, how: str, delay: float) -> None:
        super().__init__((LOOPBACK, 0), _TrickHandler)
        self.how, self.delay = how, delay
        self.url = f"http://{LOOPBACK}:{self.server_address[1]}"
        self.sent = 0


class _TrickHandler(BaseHTTPRequestHandler):
    server: _TrickHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - the base's name
        path = self.path.split("?", 1)[0]
        if path.startswith(f"/api/models/{REPO}/revision/"):
            info = {"id": REPO, "sha": "b" * 40, "siblings": [{"rfilename": "config.json"},
                                                              {"rfilename": "model.safetensors"}]}
            data = json.dumps(info).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        hub = self.server
        if not path.endswith("/config.json"):  # what else huggingface_hub asks for: not there
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        if hub.how == "slow":
            self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            while True:
                block = b"{" if hub.how == "slow" else b" " * 65536
                self.wfile.write(block)
                self.wfile.flush()
                hub.sent += len(block)
                if hub.delay:
                    time.sleep(hub.delay)
        except (BrokenPipeError, ConnectionResetError):
            return


def trick_hub(how: str, delay: float) -> _TrickHub:
    hub = _TrickHub(how, delay)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    return hub


SLOW_DOWNLOAD = """
import sys, time
import embedexplorer.core.sources.hub as hub
import embedexplorer.core.sources.hub_ranges as hub_ranges
from embedexplorer.core.common.errors import EmbedExplorerError
hub_ranges.SMALL_FILE_SECONDS = float(sys.argv[1])
stop_after = float(sys.argv[2])
start = time.monotonic()
try:
    hub.download_table("someone/slow", should_stop=lambda: stop_after and time.monotonic() - start > stop_after)
except EmbedExplorerError as exc:
    print(f"{time.monotonic() - start:.1f}|{type(exc).__name__}|{exc}")
"""


@pytest.mark.parametrize(("bound", "stop_after", "kind"), [(4.0, 0.0, "OfflineError"), (300.0, 3.0, "Interrupted")])
def test_a_hub_sending_config_a_byte_a_second_is_given_up_on_or_stopped(
    tmp_path: Path, bound: float, stop_after: float, kind: str
) -> None:
    from .test_network import online_env

    hub = trick_hub("slow", 1.0)
    try:
        env = {**os.environ, **online_env(hub.url, tmp_path)}
        result = subprocess.run(
            [sys.executable, "-c", SLOW_DOWNLOAD, str(bound), str(stop_after)],
            capture_output=True, text=True, timeout=120, env=env,
        )
    finally:
        hub.shutdown()
    assert result.returncode == 0, result.stderr
    seconds, name, message = result.stdout.strip().split("|", 2)
    assert name == kind, message
    # Whole, the config would take minutes at a byte a second (past the run's 120 s bound):
    # the bound or the stop ended it, as the exception's class says.
    assert "config.json" in message or "stopped" in message


def test_a_hub_sending_an_endless_config_is_cut_at_the_bound(tmp_path: Path) -> None:
    from embedexplorer.core.common.files import CONFIG_FILE_LIMIT

    from .test_network import online_env

    hub = trick_hub("endless", 0.0)
    try:
        env = {**os.environ, **online_env(hub.url, tmp_path)}
        result = subprocess.run(
            [sys.executable, "-c", SLOW_DOWNLOAD, "300", "0"], capture_output=True, text=True, timeout=300, env=env
        )
    finally:
        hub.shutdown()
    assert result.returncode == 0, result.stderr
    _, name, message = result.stdout.strip().split("|", 2)
    assert name == "CorruptWeightsError" and "more than 4 MiB for config.json" in message
    # The server also fills the loopback's socket buffers (several MiB, more the slower the client
    # is to hang up on a busy machine); a client without the bound reads on for its whole time limit.
    assert hub.sent < CONFIG_FILE_LIMIT + 32 * 1024 * 1024
