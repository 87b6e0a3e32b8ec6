"""Real model folders that are broken on purpose, and loopback servers that misbehave.

Every server here binds to 127.0.0.1 only: tests never reach past the machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from embedexplorer.core.sources.resolve import bundled_model_dir

LOOPBACK = "127.0.0.1"


def ctrl_c_as_at_a_terminal() -> None:
    """For a child a test will Ctrl-C (``preexec_fn``): SIGINT as a terminal's foreground program has it.

    A script that starts the tests in the background (``cmd &`` without job control, as a CI runner
    may) hands its children SIGINT ignored; Python then installs no KeyboardInterrupt handler, and
    a signal the test sends is dropped, which says nothing about the program.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m embedexplorer ...`` as a person runs it, with extra environment."""
    return subprocess.run(
        [sys.executable, "-m", "embedexplorer", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit code 2, exactly one line on stderr, no traceback, and every fragment in it."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("embedexplorer: "), lines[0]
    assert "unexpected error" not in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# ----- model folders ---------------------------------------------------------------------------
def link_files(source: Path, target: Path, names: tuple[str, ...]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        (target / name).symlink_to(source / name)


def build_rotary_folder(folder: Path, width: int = 16, seed: int = 0) -> Path:
    """A small Llama-shaped model: tensors named as Llama names them, rotary positions, no wpe.

    The tokenizer is the bundled MiniLM's, so the 30,522-row table has real tokens.
    """
    from safetensors.numpy import save_file

    rows = 30522
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {
        "model.embed_tokens.weight": rng.standard_normal((rows, width), dtype=np.float32),
        "model.layers.0.self_attn.q_proj.weight": rng.standard_normal((width, width), dtype=np.float32),
        "model.layers.0.self_attn.rotary_emb.inv_freq": np.ones(width // 2, dtype=np.float32),
        "model.norm.weight": np.ones(width, dtype=np.float32),
        "lm_head.weight": rng.standard_normal((rows, width), dtype=np.float32),
    }
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": rows,
        "hidden_size": width,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": None,
        "tie_word_embeddings": False,
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    shutil.copy(bundled_model_dir() / "tokenizer.json", folder / "tokenizer.json")
    return folder


# ----- loopback servers --------------------------------------------------------------------------
def closed_port() -> int:
    """A loopback port nobody listens on: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


class Blackhole:
    """Accepts connections on loopback and never answers; counts who came."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind((LOOPBACK, 0))
        self.server.listen(64)
        self.port = int(self.server.getsockname()[1])
        self.url = f"http://{LOOPBACK}:{self.port}"
        self.connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections.append(conn)  # held open, never read, never answered

    def close(self) -> None:
        self.server.close()
        for conn in self.connections:
            conn.close()


@contextmanager
def blackhole() -> Iterator[Blackhole]:
    hole = Blackhole()
    try:
        yield hole
    finally:
        hole.close()


COMMIT = "a" * 40
STREAM_BLOCK = 1 << 20


class FakeHub(ThreadingHTTPServer):
    """Enough of the Hub's HTTP API for ``snapshot_download`` and table-only downloads.

    Repo info, tree and resolve, as the Hub answers them: small files straight from
    the Hub, safetensors files by a redirect to a second loopback host (another port)
    standing in for the Hub's storage, which accepts only the signed address the Hub
    gave. Both answer ``Range: bytes=a-b`` with 206 and Content-Range. Files are read
    from disk block by block, so a GPT-2-sized checkpoint costs no memory.

    ``cut`` names a file whose download stops at byte ``cut_at`` (default: half the
    file), the connection closed as a dropped network would: every attempt, resumed
    ones included. ``short`` maps a file to how many answers send only its first half,
    with a Content-Length that agrees (a proxy that cuts files and says nothing).
    ``ignore_range`` makes both hosts send whole files. ``token`` makes
    the repository gated: without ``Authorization: Bearer <token>`` the Hub answers 401.
    ``sent`` counts the body bytes each file put on the wire, on both hosts together.
    """

    daemon_threads = True

    def __init__(
        self,
        repo_id: str,
        folder: Path,
        cut: str | None = None,
        *,
        cut_at: int | None = None,
        ignore_range: bool = False,
        token: str | None = None,
        short: dict[str, int] | None = None,
    ) -> None:
        super().__init__((LOOPBACK, 0), _HubHandler)
        # name -> how many answers send its first half only, with a Content-Length that agrees (a cutting proxy)
        self.short = dict(short or {})
        self.repo_id = repo_id
        self.paths = {p.name: p for p in sorted(folder.iterdir()) if p.is_file()}
        self.cut = cut
        self.cut_at = cut_at
        self.ignore_range = ignore_range
        self.token = token
        self.requests: list[str] = []
        self.authorizations: list[str | None] = []
        self.sent: dict[str, int] = {}
        self.ranges: list[tuple[str, int, int]] = []  # (file, first byte, last byte + 1) served
        self._lock = threading.Lock()
        self._digests: dict[str, str] = {}
        self.url = f"http://{LOOPBACK}:{self.server_address[1]}"
        self.storage = _Storage(self)

    def size(self, name: str) -> int:
        return self.paths[name].stat().st_size

    def sha256(self, name: str) -> str:
        with self._lock:
            if name not in self._digests:
                digest = hashlib.sha256()
                with open(self.paths[name], "rb") as handle:
                    while block := handle.read(STREAM_BLOCK):
                        digest.update(block)
                self._digests[name] = digest.hexdigest()
            return self._digests[name]

    def etag(self, name: str) -> str:
        return self.sha256(name) if _is_lfs(name) else hashlib.sha1(self.paths[name].read_bytes()).hexdigest()

    def signature(self, name: str) -> str:
        return hashlib.sha256(f"{name}|storage-secret".encode()).hexdigest()[:16]

    def count(self, name: str, sent: int, first: int) -> None:
        with self._lock:
            self.sent[name] = self.sent.get(name, 0) + sent
            self.ranges.append((name, first, first + sent))

    def bytes_sent(self) -> int:
        return sum(self.sent.values())

    def tree(self) -> list[dict[str, object]]:
        entries = []
        for name in self.paths:
            entry: dict[str, object] = {"type": "file", "path": name, "size": self.size(name), "oid": self.etag(name)}
            if _is_lfs(name):
                entry["lfs"] = {"oid": self.sha256(name), "size": self.size(name), "pointerSize": 134}
            entries.append(entry)
        return entries


def _is_lfs(name: str) -> bool:
    return name.endswith(".safetensors")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _FileSender(BaseHTTPRequestHandler):
    """What both hosts share: ranged answers from a file on disk, counted, maybe cut."""

    server: ThreadingHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass

    def hub(self) -> FakeHub:
        raise NotImplementedError

    def do_HEAD(self) -> None:  # noqa: N802 - the base's name
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802 - the base's name
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        raise NotImplementedError

    def _send_json(self, payload: object, body: bool, status: int = 200, error_code: str = "") -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if error_code:
            self.send_header("X-Error-Code", error_code)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _send_file(self, name: str, body: bool) -> None:
        hub = self.hub()
        size = hub.size(name)
        with hub._lock:
            cut_short = body and hub.short.get(name, 0) > 0
            if cut_short:
                hub.short[name] -= 1
        if cut_short:
            data = hub.paths[name].read_bytes()[: size // 2]
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            hub.count(name, len(data), 0)
            return
        first, last = 0, size - 1
        ranged = self.headers.get("Range", "")
        partial = ranged.startswith("bytes=") and not hub.ignore_range
        if partial:
            low, _, high = ranged[len("bytes=") :].partition("-")
            first = int(low or 0)
            last = min(int(high), size - 1) if high else size - 1
        self.send_response(206 if partial else 200)
        self.send_header("ETag", f'"{hub.etag(name)}"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Accept-Ranges", "none" if hub.ignore_range else "bytes")
        self.send_header("Content-Length", str(last + 1 - first))
        if partial:
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.end_headers()
        if not body:
            return
        stop = last + 1
        cut = name == hub.cut
        if cut:
            stop = min(stop, size // 2 if hub.cut_at is None else hub.cut_at)
        position = first
        try:
            with open(hub.paths[name], "rb") as handle:
                handle.seek(first)
                while position < stop:
                    block = handle.read(min(STREAM_BLOCK, stop - position))
                    self.wfile.write(block)
                    hub.count(name, len(block), position)
                    position += len(block)
        except (BrokenPipeError, ConnectionResetError):  # the client had what it wanted
            self.close_connection = True
            return
        if cut:
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)


class _HubHandler(_FileSender):
    server: FakeHub

    def hub(self) -> FakeHub:
        return self.server

    def _answer(self, body: bool) -> None:
        hub = self.server
        authorization = self.headers.get("Authorization")
        with hub._lock:  # the two lists stay in step when requests come in on several threads
            hub.requests.append(f"{self.command} {self.path}")
            hub.authorizations.append(authorization)
        if hub.token is not None and authorization != f"Bearer {hub.token}":
            return self._send_json({"error": "Access to this model is restricted."}, body, 401, "GatedRepo")
        path = self.path.split("?", 1)[0]
        repo = hub.repo_id
        if path.startswith(f"/api/models/{repo}/revision/"):
            info = {"id": repo, "sha": COMMIT, "siblings": [{"rfilename": n} for n in hub.paths]}
            return self._send_json(info, body)
        if path.startswith(f"/api/models/{repo}/tree/"):
            return self._send_json(hub.tree(), body)
        prefix = f"/{repo}/resolve/"
        if path.startswith(prefix):
            name = path[len(prefix) :].split("/", 1)[-1]
            if name in hub.paths and _is_lfs(name):
                return self._redirect(name, body)
            if name in hub.paths:
                return self._send_file(name, body)
            return self._send_json({"error": "Entry not found"}, body, 404, "EntryNotFound")
        self._send_json({"error": "Repository Not Found"}, body, 404, "RepoNotFound")

    def _redirect(self, name: str, body: bool) -> None:
        """As the Hub does for large files: 302 to signed storage, with the file's size and hash."""
        hub = self.server
        self.send_response(302)
        self.send_header("Location", f"{hub.storage.url}/blob/{name}?sig={hub.signature(name)}")
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("X-Linked-Etag", f'"{hub.sha256(name)}"')
        self.send_header("X-Linked-Size", str(hub.size(name)))
        self.send_header("ETag", f'"{hub.sha256(name)}"')
        self.send_header("Content-Length", "0")
        self.end_headers()


class _Storage(ThreadingHTTPServer):
    """The second loopback host: serves a file only at the signed address the Hub redirected to."""

    daemon_threads = True

    def __init__(self, hub: FakeHub) -> None:
        super().__init__((LOOPBACK, 0), _StorageHandler)
        self.hub = hub
        self.requests: list[str] = []
        self.authorizations: list[str | None] = []
        self.url = f"http://{LOOPBACK}:{self.server_address[1]}"


class _StorageHandler(_FileSender):
    server: _Storage

    def hub(self) -> FakeHub:
        return self.server.hub

    def _answer(self, body: bool) -> None:
        storage = self.server
        storage.requests.append(f"{self.command} {self.path}")
        storage.authorizations.append(self.headers.get("Authorization"))
        path, _, query = self.path.partition("?")
        name = path.removeprefix("/blob/")
        if name not in storage.hub.paths or query != f"sig={storage.hub.signature(name)}":
            return self._send_json({"error": "AccessDenied"}, body, 403)
        self._send_file(name, body)


@contextmanager
def fake_hub(repo_id: str, folder: Path, cut: str | None = None, **options: Any) -> Iterator[FakeHub]:
    """A Hub look-alike serving ``folder`` as ``repo_id`` (options: see ``FakeHub``)."""
    hub = FakeHub(repo_id, folder, cut, **options)
    threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in (hub, hub.storage)]
    for thread in threads:
        thread.start()
    try:
        yield hub
    finally:
        for server in (hub, hub.storage):
            server.shutdown()
            server.server_close()


# ----- hostile files ---------------------------------------------------------------------------
def write_table_folder(folder: Path, rows: int, width: int, tokenizer: dict[str, object] | None = None) -> Path:
    """A model folder with a random ``rows`` x ``width`` float32 table and a word-level tokenizer.

    The tokenizer's vocabulary is "t0", "t1", ... one token per row, unless ``tokenizer`` is given.
    """
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    table = np.random.default_rng(rows).standard_normal((rows, width), dtype=np.float32)
    save_file({"model.embed_tokens.weight": table}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": rows}), encoding="utf-8")
    spec = tokenizer if tokenizer is not None else word_level_tokenizer({f"t{i}": i for i in range(rows)})
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    return folder


def word_level_tokenizer(
    vocab: dict[str, int], normalizer: object = None, pre_tokenizer: object = None
) -> dict[str, object]:
    """A tokenizer.json that splits on spaces (unless ``pre_tokenizer``) and looks words up in ``vocab``."""
    unknown = next(iter(vocab))
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer or {"type": "WhitespaceSplit"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": unknown},
    }


def safetensors_bytes(header: dict[str, object], data: bytes) -> bytes:
    """A safetensors file from a header given as a mapping (which may lie) and its data bytes."""
    raw = json.dumps(header).encode("utf-8")
    return len(raw).to_bytes(8, "little") + raw + data
