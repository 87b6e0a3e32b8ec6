"""Real model folders that are broken on purpose, and loopback servers that misbehave.

Every server here binds to 127.0.0.1 only: tests never reach past the machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from embedexplorer.core.sources import bundled_model_dir

LOOPBACK = "127.0.0.1"


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


class FakeHub(ThreadingHTTPServer):
    """Enough of the Hub's HTTP API for ``snapshot_download``: repo info, tree, resolve.

    ``cut`` names a file whose download stops after half of its bytes, the connection
    closed as a dropped network would: every attempt, resumed ones included.
    """

    daemon_threads = True

    def __init__(self, repo_id: str, folder: Path, cut: str | None = None) -> None:
        super().__init__((LOOPBACK, 0), _HubHandler)
        self.repo_id = repo_id
        self.files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
        self.cut = cut
        self.requests: list[str] = []
        self.url = f"http://{LOOPBACK}:{self.server_address[1]}"

    def tree(self) -> list[dict[str, object]]:
        entries = []
        for name, data in self.files.items():
            entry: dict[str, object] = {
                "type": "file",
                "path": name,
                "size": len(data),
                "oid": hashlib.sha1(data).hexdigest(),
            }
            if name.endswith(".safetensors"):
                entry["lfs"] = {"oid": _sha256(data), "size": len(data), "pointerSize": 134}
            entries.append(entry)
        return entries


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _HubHandler(BaseHTTPRequestHandler):
    server: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass

    def do_HEAD(self) -> None:  # noqa: N802 - the base's name
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802 - the base's name
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        hub = self.server
        hub.requests.append(f"{self.command} {self.path}")
        path = self.path.split("?", 1)[0]
        repo = hub.repo_id
        if path.startswith(f"/api/models/{repo}/revision/"):
            info = {"id": repo, "sha": COMMIT, "siblings": [{"rfilename": n} for n in hub.files]}
            return self._send_json(info, body)
        if path.startswith(f"/api/models/{repo}/tree/"):
            return self._send_json(hub.tree(), body)
        prefix = f"/{repo}/resolve/"
        if path.startswith(prefix):
            name = path[len(prefix) :].split("/", 1)[-1]
            if name in hub.files:
                return self._send_file(name, hub.files[name], body)
        self._send_json({"error": "Repository Not Found"}, body, status=404)

    def _send_json(self, payload: object, body: bool, status: int = 200) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 404:
            self.send_header("X-Error-Code", "RepoNotFound")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _send_file(self, name: str, data: bytes, body: bool) -> None:
        start = 0
        ranged = self.headers.get("Range", "")
        if ranged.startswith("bytes=") and body:
            start = int(ranged[len("bytes=") :].split("-", 1)[0] or 0)
        self.send_response(206 if start else 200)
        etag = _sha256(data) if name.endswith(".safetensors") else hashlib.sha1(data).hexdigest()
        self.send_header("ETag", f'"{etag}"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if not body:
            return
        if name == self.server.cut:
            half = len(data) // 2
            self.wfile.write(data[start:half] if start < half else b"")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(data[start:])


@contextmanager
def fake_hub(repo_id: str, folder: Path, cut: str | None = None) -> Iterator[FakeHub]:
    hub = FakeHub(repo_id, folder, cut)
    thread = threading.Thread(target=hub.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        hub.shutdown()
        hub.server_close()


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
