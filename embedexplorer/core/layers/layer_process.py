"""The whole model in a child process, so the window's process never imports torch or transformers.

Importing torch and transformers and building a model hold Python's global lock for long
stretches (extension modules initialising, weights being set up): in the window's process
no other thread, the GUI thread included, would run meanwhile. So the window's worker
starts a child (this same program, see ``child_command``) that imports them, loads the
model with ``layers.load_layer_model`` (safetensors only, never a model's own code) and
runs texts forward. It sends each layer's vector the moment the block has computed it,
so the worker compares layer i with the table while the child computes layer i + 1.

Messages are frames: a JSON header and float32 arrays as raw bytes (their shapes in the
header); nothing is ever unpickled. The child exits when its stdin closes, so it never
outlives the window, even in the middle of a forward pass.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import struct
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..common import errors
from ..common.cache import cache_dir
from ..common.errors import EmbedExplorerError, IncompleteModelError, Interrupted
from ..common.progress import ProgressCallback
from ..text.tokenizer_process import child_sys_path, last_line
from .answers import LayerBatch, LayerGuesses, LayerInput, LayerRun, StopCheck
from .layer_model import ModelFacts, default_threads

# The flag the app's entry point reads to run the child side (frozen apps have no -m).
CHILD_FLAG = "--layer-process"
_FRAME = struct.Struct("<II")  # JSON bytes, array bytes
# Bounds on one frame: a header is a few kB (a model's description), arrays at most a few
# layers of one position (13 x 768 x 4 bytes x 2 for GPT-2 small).
_MAX_HEADER = 16 * 1024 * 1024
_MAX_ARRAYS = 512 * 1024 * 1024
# How often a waiting caller looks at its stop check: a stale question ends within this.
POLL_S = 0.02
# A child that does not end within this after its stdin closed is killed.
_EXIT_WAIT_S = 2.0

_BOOTSTRAP = (
    "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); "
    "from embedexplorer.core.layers.layer_child import serve; sys.exit(serve(*sys.argv[2:]))"
)


def child_command(threads: int) -> tuple[list[str], dict[str, str]]:
    """How to start the child: the frozen app runs itself, a Python install runs the package.

    As for the tokenizer's child, nothing is imported from the working folder
    (``python -I``; the frozen child drops it from ``sys.path`` first).
    """
    env = {
        **os.environ,
        "TOKENIZERS_PARALLELISM": "false",
        # torch's own pool gets ``threads``; numpy in the child does next to nothing.
        "OMP_NUM_THREADS": str(threads),
        "OPENBLAS_NUM_THREADS": "1",
    }
    # Importing transformers' models imports torch._dynamo, which makes a cache folder in the temporary
    # folder at once (torchinductor_<user>), and it stayed there: it goes in the app's own cache instead.
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache_dir() / "torch"))
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_FLAG, str(threads)], env
    return [sys.executable, "-I", "-c", _BOOTSTRAP, json.dumps(child_sys_path()), str(threads)], env


# ----- frames, shared with the child (layer_child.py) -------------------------------------------
def send_frame(stream: IO[bytes], message: dict[str, Any], arrays: Sequence[np.ndarray] = ()) -> None:
    """Write one message and its arrays (as little-endian float32) in one piece."""
    blobs = [np.ascontiguousarray(a, dtype="<f4") for a in arrays]
    if blobs:
        message = {**message, "arrays": [list(b.shape) for b in blobs]}
    data = json.dumps(message, ensure_ascii=False).encode("utf-8")
    binary = b"".join(b.tobytes() for b in blobs)
    stream.write(_FRAME.pack(len(data), len(binary)) + data + binary)
    stream.flush()


def receive_frame(stream: IO[bytes]) -> tuple[dict[str, Any], list[np.ndarray]] | None:
    """The next message and its arrays, or None when the other side has closed the pipe."""
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        return None
    size, binary_size = _FRAME.unpack(header)
    if size > _MAX_HEADER or binary_size > _MAX_ARRAYS:
        raise ValueError(f"a message of {size:,} + {binary_size:,} bytes is beyond the bounds")
    data = stream.read(size)
    binary = stream.read(binary_size)
    if len(data) < size or len(binary) < binary_size:
        return None
    message = json.loads(data.decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError("a message must be a JSON object")
    arrays = []
    offset = 0
    for shape in message.pop("arrays", []):
        dims = tuple(int(d) for d in shape)
        count = int(np.prod(dims, dtype=np.int64))
        if any(d < 0 for d in dims) or offset + 4 * count > binary_size:
            raise ValueError(f"array shape {dims} does not fit the message")
        arrays.append(np.frombuffer(binary, dtype="<f4", count=count, offset=offset).reshape(dims))
        offset += 4 * count
    if offset != binary_size:
        raise ValueError("the message's arrays do not fill it")
    return message, arrays


def error_frame(exc: BaseException) -> dict[str, Any]:
    """An exception as the parent turns it back into the same error (class, message, sizes)."""
    if isinstance(exc, EmbedExplorerError):
        message: dict[str, Any] = {"error": str(exc), "kind": type(exc).__name__}
    else:
        message = {"error": f"{type(exc).__name__}: {exc}", "kind": "EmbedExplorerError"}
    if isinstance(exc, IncompleteModelError):
        message["model_bytes"] = exc.model_bytes
        message["model_weights"] = exc.model_weights
    return message


def _error_from(message: dict[str, Any]) -> EmbedExplorerError:
    text = str(message.get("error"))
    kind = getattr(errors, str(message.get("kind")), EmbedExplorerError)
    if not (isinstance(kind, type) and issubclass(kind, EmbedExplorerError)):
        kind = EmbedExplorerError
    if issubclass(kind, IncompleteModelError):
        return kind(text, _int_or_none(message.get("model_bytes")), _int_or_none(message.get("model_weights")))
    return kind(text)


def _int_or_none(value: object) -> int | None:
    return int(value) if isinstance(value, int) else None


def _read_frames(
    stream: IO[bytes],
    inbox: queue.Queue[tuple[dict[str, Any], list[np.ndarray]] | None],
    warm: threading.Event,
    prepared: threading.Event,
) -> None:
    """The parent's reader thread: every frame into ``inbox``, then None when the child is gone."""
    try:
        while (frame := receive_frame(stream)) is not None:
            if "warm" in frame[0]:
                warm.set()  # torch is imported: a load now costs only the load
            elif "prepared" in frame[0]:
                prepared.set()
            elif "started" not in frame[0]:
                inbox.put(frame)
    except (OSError, ValueError):
        pass  # a closed pipe or a garbled frame: the child is no longer usable either way
    finally:
        inbox.put(None)


# ----- the model as the parent sees it ---------------------------------------------------------
@dataclass
class ChildLayerModel(ModelFacts):
    """A model loaded in the child: its facts, and texts run forward through the child.

    It answers ``trace`` as ``LayerModel`` does (see ``layers.LayerRunner``).
    """

    process: LayerProcess = field(repr=False)

    def layer_runs(self, runs: Sequence[LayerRun], should_stop: StopCheck | None) -> Iterator[tuple[int, LayerBatch]]:
        return self.process.layer_runs(self, runs, should_stop)

    def repeat_probabilities(self, prompts: Sequence[Sequence[int]], tokens: Sequence[int], batch: int,
                             should_stop: StopCheck | None = None, progress: ProgressCallback | None = None,
                             ) -> np.ndarray:  # fmt: skip
        """As ``LayerModel.repeat_probabilities``, in the child."""
        return self.process.repeat(self, prompts, tokens, batch, should_stop, progress)


# ----- the parent ------------------------------------------------------------------------------
class LayerProcess:
    """The parent's handle on the child: start it early, ``load`` a folder, then run texts.

    Starting returns at once: the child imports torch and transformers on its own while
    the window goes on. One caller at a time (the worker's long lane). A child that dies
    is started again on the next request, which then loads the model again.
    """

    def __init__(self, threads: int | None = None, prepare: str | None = None) -> None:
        self.threads = threads or default_threads()
        # The folder whose design (weight count, special tokens) the child reads as soon as it starts.
        self.prepare = prepare
        self.model: ChildLayerModel | None = None
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._inbox: queue.Queue[tuple[dict[str, Any], list[np.ndarray]] | None] = queue.Queue()
        self._loading: tuple[int, str] | None = None  # the load request the child is working on
        self.warm = threading.Event()  # set once the child has imported torch and transformers
        self.prepared = threading.Event()  # ... and read the design of the ``prepare`` folder
        self._start()

    # ----- the process ------------------------------------------------------------------
    def _start(self) -> None:
        command, env = child_command(self.threads)
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile()  # read only to say why the child stopped
        self._inbox = queue.Queue()
        self.warm = threading.Event()
        self.prepared = threading.Event()
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env
        )
        self.model = None
        self._loading = None
        assert self._process.stdout is not None
        reader = threading.Thread(
            target=_read_frames,
            args=(self._process.stdout, self._inbox, self.warm, self.prepared),
            name="layer-process-reader",
            daemon=True,
        )
        reader.start()
        if self.prepare is not None and self._process.stdin is not None:
            send_frame(self._process.stdin, {"prepare": self.prepare})
        # The child ends with this handle even if nobody calls close().
        weakref.finalize(self, _stop, self._process)

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs (for tests and the benchmark's memory figures)."""
        process = self._process
        return None if process is None or process.poll() is not None else process.pid

    def _ensure_running(self) -> None:
        if self._process is None or self._process.poll() is not None:
            if self._process is not None:
                _stop(self._process)
            self._start()

    def _send(self, message: dict[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise EmbedExplorerError("The model's process is not running; ask again.")
        try:
            send_frame(process.stdin, message)
        except (BrokenPipeError, OSError, ValueError) as exc:
            self._died()
            raise EmbedExplorerError(f"The model's process stopped{self._last_words()}; ask again.") from exc

    def _died(self) -> None:
        if self._process is not None:
            _stop(self._process)
        self.model = None
        self._loading = None

    def _last_words(self) -> str:
        """The last line the child wrote to stderr, to say why it stopped."""
        line = last_line(self._stderr)
        return f" ({line})" if line else ""

    def close(self) -> None:
        """End the child (it exits at once, even mid-pass, when its stdin closes)."""
        with self._lock:
            if self._process is not None:
                _stop(self._process)
                self._process = None
            self.model = None
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None

    # ----- messages ---------------------------------------------------------------------
    def _next(self, wanted: set[int], should_stop: StopCheck | None, block: bool = True) -> tuple[
        dict[str, Any], list[np.ndarray]
    ] | None:
        """The next frame for one of the ``wanted`` requests; others are about stale requests and dropped.

        Waiting looks at ``should_stop`` every ``POLL_S``. With ``block=False``, None when
        nothing has arrived yet.
        """
        while True:
            if block and should_stop is not None and should_stop():
                raise Interrupted("Stopped: a newer question replaced this one.")
            try:
                frame = self._inbox.get(timeout=POLL_S) if block else self._inbox.get_nowait()
            except queue.Empty:
                if not block:
                    return None
                continue
            if frame is None:
                self._died()
                raise EmbedExplorerError(f"The model's process stopped{self._last_words()}; ask again.")
            message, _ = frame
            request_id = message.get("id")
            if self._loading is not None and request_id == self._loading[0]:
                # A load finishes for whoever waits next, even if the one who asked has gone.
                if "model" in message:
                    self.model = ChildLayerModel(**ModelFacts.from_message(message["model"]), process=self)
                    self._loading = None
                elif "error" in message:
                    self._loading = None
            if request_id in wanted:
                return frame

    def load(
        self,
        folder: str,
        *,
        name: str | None = None,
        progress: ProgressCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> ChildLayerModel:
        """The model in ``folder``, loaded in the child (at once when it is loaded already).

        A caller that stops waiting does not stop the load: the next caller gets the model.
        Load errors are the same as ``layers.load_layer_model``'s.
        """
        report = progress or (lambda done, total, message: None)
        with self._lock:
            self._ensure_running()
            if self.model is not None and self.model.folder == str(folder):
                return self.model
            if not self.warm.is_set():
                report(0, 4, "Starting the model's process (importing torch and transformers)")
            if self._loading is None or self._loading[1] != str(folder):
                request_id = next(self._ids)
                self._send({"id": request_id, "load": str(folder), "name": name or str(folder)})
                self._loading = (request_id, str(folder))
            request_id = self._loading[0]
            while True:
                found = self._next({request_id}, should_stop)
                assert found is not None
                message, _ = found
                if "progress" in message:
                    done, total, words = message["progress"]
                    report(int(done), int(total), str(words))
                elif "error" in message:
                    raise _error_from(message)
                elif "model" in message and self.model is not None:
                    return self.model

    def forget(self) -> None:
        """Drop the texts the child remembers, so the next question runs the model forward."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                self._send({"forget": True})

    def layer_runs(
        self, model: ChildLayerModel, runs: Sequence[LayerRun], should_stop: StopCheck | None
    ) -> Iterator[tuple[int, LayerBatch]]:
        """Send every run at once, then hand out the layers as they arrive: whatever came in while
        the caller was busy with the last batch comes together as one batch per run."""
        with self._lock:
            if self.model is not model:
                raise EmbedExplorerError("The model's process was restarted; ask again.")
            request_ids = [next(self._ids) for _ in runs]
            for request_id, run in zip(request_ids, runs, strict=True):
                message = {
                    "id": request_id,
                    "run": list(run.ids),
                    "position": run.position,
                    "token": run.token_id,
                    "k": run.k,
                }
                self._send(message)
            index_of = {request_id: i for i, request_id in enumerate(request_ids)}
            pending = set(request_ids)
            try:
                while pending:
                    frames = [self._next(pending, should_stop)]
                    while (more := self._next(pending, should_stop, block=False)) is not None:
                        frames.append(more)
                    batches: dict[int, list[tuple[dict[str, Any], list[np.ndarray]]]] = {}
                    for frame in frames:
                        assert frame is not None
                        message = frame[0]
                        request_id = int(str(message["id"]))
                        if "error" in message:
                            raise _error_from(message)
                        if "stopped" in message:
                            raise Interrupted("Stopped: a newer question replaced this one.")
                        if "done" in message:
                            pending.discard(request_id)
                        else:
                            batches.setdefault(index_of[request_id], []).append(frame)
                    for index in sorted(batches):
                        yield index, _batch(batches[index])
            finally:
                if pending:
                    # The child stops these at its next layer; their late frames are dropped.
                    try:
                        self._send({"stop": max(pending)})
                    except EmbedExplorerError:
                        pass

    def repeat(self, model: ChildLayerModel, prompts: Sequence[Sequence[int]], tokens: Sequence[int], batch: int,
               should_stop: StopCheck | None, progress: ProgressCallback | None) -> np.ndarray:  # fmt: skip
        """The repeat check in the child: progress as it goes, the probabilities (float64) at the end."""
        with self._lock:
            if self.model is not model:
                raise EmbedExplorerError("The model's process was restarted; ask again.")
            request_id = next(self._ids)
            prompts = [[int(i) for i in p] for p in prompts]
            self._send({"id": request_id, "repeat": prompts, "tokens": [int(t) for t in tokens], "batch": batch})
            try:
                while True:
                    found = self._next({request_id}, should_stop)
                    assert found is not None
                    message = found[0]
                    if "error" in message:
                        raise _error_from(message)
                    if "stopped" in message:
                        raise Interrupted("Stopped: a newer question replaced this one.")
                    if "progress" in message and progress is not None:
                        done, total, words = message["progress"]
                        progress(int(done), int(total), str(words))
                    if "repeated" in message:
                        request_id = 0  # answered: nothing to stop
                        return np.array([float(p) for p in message["repeated"]], dtype=np.float64)
            finally:
                if request_id:
                    try:
                        self._send({"stop": request_id})
                    except EmbedExplorerError:
                        pass


def _batch(frames: list[tuple[dict[str, Any], list[np.ndarray]]]) -> LayerBatch:
    """Frames of one run that arrived together, as one batch (layers in arrival order)."""
    layers: list[int] = []
    vectors: list[np.ndarray] = []
    compared: list[np.ndarray] = []
    layer_input = None
    guesses = None
    for message, arrays in frames:
        if "layers" in message:
            layers += [int(i) for i in message["layers"]]
            vectors.append(arrays[0])
            compared.append(arrays[1])
        elif "parts" in message:
            names = [str(n) for n in message["parts"]]
            parts = tuple((n, np.array(a)) for n, a in zip(names, arrays[: len(names)], strict=True))
            layer_input = LayerInput(parts, np.array(arrays[-2]), np.array(arrays[-1]), str(message["note"]))
        elif "guess_ids" in message:
            guesses = _guesses(message, arrays)
    if not layers:
        return LayerBatch((), np.empty((0, 0), np.float32), np.empty((0, 0), np.float32), layer_input, guesses)
    return LayerBatch(tuple(layers), np.concatenate(vectors), np.concatenate(compared), layer_input, guesses)


def _guesses(message: dict[str, Any], arrays: list[np.ndarray]) -> LayerGuesses:
    """The child's guesses frame: ids in the header (exact integers), probabilities as the one array."""
    ids = np.array(message["guess_ids"], dtype=np.int64)
    probs = np.array(arrays[0], dtype=np.float32) if arrays else np.empty((0, 0), np.float32)
    if ids.ndim != 2 or ids.shape != probs.shape:
        raise ValueError(f"guesses of shape {ids.shape} and probabilities of shape {probs.shape} do not match")
    cosine = message.get("row_cosine")
    return LayerGuesses(ids, probs, float(cosine) if isinstance(cosine, (int, float)) else None)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin (it exits at once) and reap it; kill it if it lingers.

    Its stdout is closed last: the reader thread may be reading it until the child is gone.
    """
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout=_EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    try:
        if process.stdout is not None:
            process.stdout.close()
    except OSError:
        pass
