"""The child side of the layer process: import torch early, load a model when asked, run texts forward.

It lives apart from ``layer_process`` (the parent's side) so that the parent never imports
torch or transformers. Requests arrive on stdin, answers leave on stdout (frames of
``layer_process``); a reader thread takes the requests, so a stop request reaches a
forward pass between two layers, and the child exits the moment stdin closes.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from ..common.errors import EmbedExplorerError, Interrupted
from ..text.tokenizer_child import _forget_working_folder
from .answers import LayerGuesses, LayerInput
from .layer_model import LayerModel
from .layer_process import error_frame, receive_frame, send_frame
from .loading import ModelDesign, load_layer_model, read_design

# Prompts one repeat request may carry (the health check asks about at most a few hundred tokens).
MAX_REPEATS = 1000


def serve(threads: str = "1") -> int:
    """The child's whole life: say it runs, import torch, then answer until stdin closes."""
    _forget_working_folder()
    # The protocol owns the real stdout; anything a library prints goes to stderr instead.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    server = _Server(answers, max(1, int(threads)))
    try:
        send_frame(answers, {"started": True})
        threading.Thread(target=server.read, args=(sys.stdin.buffer,), name="requests", daemon=True).start()
        server.warm()
        server.answer()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the parent is gone; so is the reason to live
    return 0


class _Server:
    def __init__(self, answers: IO[bytes], threads: int) -> None:
        self.answers = answers
        self.threads = threads
        self.requests: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stop_up_to = 0  # every request with an id up to this one is stale
        self.model: LayerModel | None = None
        self.design: ModelDesign | None = None  # read ahead of need, for the load to come
        self._writing = threading.Lock()  # one frame at a time on the pipe, from either thread
        # A run's frames, made and sent in order by the sender thread (see ``run``).
        self._outbox: queue.Queue[Callable[[], None]] = queue.Queue()
        self._failed: BaseException | None = None
        threading.Thread(target=self._send_in_order, name="layer-sender", daemon=True).start()

    def read(self, stream: IO[bytes]) -> None:
        """The reader thread: stop requests take effect at once, the rest queue for the main thread."""
        try:
            while (frame := receive_frame(stream)) is not None:
                message = frame[0]
                if "stop" in message:
                    self.stop_up_to = max(self.stop_up_to, int(message["stop"]))
                else:
                    self.requests.put(message)
        except (OSError, ValueError):
            pass
        finally:
            # The parent closed the pipe (the window closed, or it died): end now, even mid-pass.
            os._exit(0)

    def stopped(self, request_id: int) -> bool:
        return request_id <= self.stop_up_to

    def send(self, message: dict[str, Any], arrays: tuple[np.ndarray, ...] = ()) -> None:
        with self._writing:
            send_frame(self.answers, message, arrays)

    def _send_in_order(self) -> None:
        """The sender thread: each queued frame is made and sent in turn; the first failure is kept."""
        while True:
            job = self._outbox.get()
            try:
                if self._failed is None:
                    job()
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
                self._failed = exc
            finally:
                self._outbox.task_done()

    def warm(self) -> None:
        """Import what a load needs before anyone asks, so the first load costs only the load."""
        import torch

        torch.set_num_threads(self.threads)
        import transformers.modeling_utils  # noqa: F401 - the import is the point
        from transformers import AutoConfig, AutoModel  # noqa: F401

        self.send({"warm": True})

    def answer(self) -> None:
        while True:
            message = self.requests.get()
            request_id = int(message.get("id", 0))
            try:
                if "prepare" in message:
                    self.prepare(str(message["prepare"]))
                elif "load" in message:
                    self.load(request_id, str(message["load"]), str(message.get("name") or message["load"]))
                elif "run" in message:
                    self.run(request_id, message)
                elif "repeat" in message:
                    self.repeat(request_id, message)
                elif "forget" in message and self.model is not None:
                    self.model.forget()
            except (BrokenPipeError, ConnectionResetError):
                raise
            except Interrupted:
                self.send({"id": request_id, "stopped": True})
            except Exception as exc:  # noqa: BLE001 - the parent turns it into the same error
                self.send({"id": request_id, **error_frame(exc)})

    def prepare(self, folder: str) -> None:
        """Read the model's design before anyone asks (the load reads it again if this fails)."""
        try:
            self.design = read_design(folder)
        except Exception:  # noqa: BLE001 - the load reports the same error, to the one who asks
            self.design = None
        self.send({"prepared": True})

    def load(self, request_id: int, folder: str, name: str) -> None:
        if self.model is None or str(self.model.folder) != folder:
            self.model = None  # the old model's memory goes before the new one's comes

            def progress(done: int, total: int, words: str) -> None:
                self.send({"id": request_id, "progress": [done, total, words]})

            self.model = load_layer_model(
                folder, name=name, progress=progress, threads=self.threads, design=self.design
            )
        # The folder as asked for: the parent knows its model by it.
        facts = {**self.model.message(), "folder": folder}
        self.send({"id": request_id, "model": facts})

    def run(self, request_id: int, message: dict[str, Any]) -> None:
        """One text forward: each layer's vector at ``position`` is sent as soon as it is computed."""
        model = self.model
        if model is None:
            raise EmbedExplorerError("No model is loaded in the model's process; ask again.")
        ids = [int(i) for i in message["run"]]
        position = int(message["position"])
        token = message.get("token")
        token_id = None if token is None else int(token)
        k = int(message.get("k") or 0)
        if self.stopped(request_id):
            raise Interrupted("Stopped before it ran.")
        if model.remembers(ids):
            vectors = model.hidden_states(ids)[:, position, :]
            self._send_layers(request_id, list(range(vectors.shape[0])), vectors, model.for_table(vectors))
            if token_id is not None:
                self._send_input(request_id, model.input_parts(token_id, position, vectors[0]))
            self._send_guesses(request_id, model.guesses(vectors, k, token_id))
        else:
            # The forward pass only copies each layer's row; the sender thread compares it with the table's
            # form and sends it meanwhile, on the core the model leaves free (it cost 3 % of the pass inline).
            streamed: set[int] = set()

            def on_layer(layer: int, hidden: Any) -> None:
                streamed.add(layer)
                row = hidden[position : position + 1].clone()
                self._outbox.put(lambda: self._send_layers(request_id, [layer], *model.layer_vector(row, 0)))

            self._failed = None
            try:
                states = model.hidden_states(ids, should_stop=lambda: self.stopped(request_id), on_layer=on_layer)
            finally:
                self._outbox.join()  # no frame of this run may follow its end, or the next run's
            if self._failed is not None:
                raise self._failed
            # Layers no hook could hand over (a model whose blocks were not found) come from the pass's states.
            unsent = [layer for layer in range(states.shape[0]) if layer not in streamed]
            if unsent:
                vectors = states[unsent, position, :]
                self._send_layers(request_id, unsent, vectors, model.for_table(vectors))
            # Sent after the pass, not in it: the parent needs it only with the last layer.
            if token_id is not None:
                self._send_input(request_id, model.input_parts(token_id, position, states[0, position]))
            # Every layer through the head in one product once the pass is done: the head's rows are read once.
            self._send_guesses(request_id, model.guesses(states[:, position], k, token_id))
        self.send({"id": request_id, "done": True})

    def repeat(self, request_id: int, message: dict[str, Any]) -> None:
        """The repeat check (vocabulary health): each prompt forward, the probability of its token next."""
        model = self.model
        if model is None:
            raise EmbedExplorerError("No model is loaded in the model's process; ask again.")
        prompts = [[int(i) for i in p] for p in message["repeat"]][:MAX_REPEATS]
        tokens = [int(t) for t in message["tokens"]][: len(prompts)]
        limit = model.max_positions
        if limit is not None and any(len(p) > limit for p in prompts):
            raise EmbedExplorerError(f"The repeat prompt is longer than the model's {limit:,} positions.")

        def progress(done: int, total: int) -> None:
            self.send({"id": request_id, "progress": [done, total, f"Asked the model about {done} of {total}"]})

        found = model.repeat_probabilities(
            prompts, tokens, int(message.get("batch") or 1), lambda: self.stopped(request_id), progress
        )
        self.send({"id": request_id, "repeated": [float(p) for p in found]})

    def _send_layers(self, request_id: int, layers: list[int], vectors: np.ndarray, compared: np.ndarray) -> None:
        self.send({"id": request_id, "layers": layers}, (vectors, compared))

    def _send_guesses(self, request_id: int, guesses: LayerGuesses | None) -> None:
        if guesses is not None:
            message = {"id": request_id, "guess_ids": guesses.ids.tolist(), "row_cosine": guesses.row_cosine}
            self.send(message, (guesses.probs,))

    def _send_input(self, request_id: int, parts: LayerInput) -> None:
        names = [name for name, _ in parts.parts]
        arrays = (*(row for _, row in parts.parts), parts.total, parts.enters)
        self.send({"id": request_id, "parts": names, "note": parts.note}, arrays)


if __name__ == "__main__":
    sys.exit(serve(*sys.argv[1:]))
