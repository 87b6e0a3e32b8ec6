"""The whole model loaded in this process: its layers run forward, its vectors read for the table."""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..common.blas import cores_but_one
from ..common.errors import EmbedExplorerError
from ..tables.position_rows import row_name
from . import output_head as oh
from .answers import LayerBatch, LayerCallback, LayerGuesses, LayerInput, LayerRun, StopCheck, stop_if_asked

# Texts whose layers are remembered, so picking another token of the same text runs nothing.
_REMEMBERED_TEXTS = 8
# Where transformers' models keep their list of blocks (GPT-2, Llama, BERT, T5's encoder, DistilBERT, OPT, MPT).
BLOCK_PATHS = ("h", "layers", "encoder.layer", "layer", "block", "transformer.layer", "decoder.layers", "blocks")


def default_threads() -> int:
    """Threads torch may use: every core but one, so the window always keeps one."""
    return cores_but_one()


def model_input(prefix: Sequence[int], suffix: Sequence[int], text_ids: list[int]) -> tuple[list[int], list[int]]:
    """The ids the model reads for a text's ids (special tokens around them) and where each text token sits."""
    start = len(prefix)
    return [*prefix, *text_ids, *suffix], list(range(start, start + len(text_ids)))


# ----- the loaded model ------------------------------------------------------------------------
@dataclass
class ModelFacts:
    """What the window knows of a loaded model, the same whether it runs here or in the model's process."""

    name: str
    folder: str
    # The special tokens the tokenizer puts around a text (BERT: [CLS] before, [SEP] after).
    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    layers: int
    max_positions: int | None
    head_is_table: bool
    head_note: str
    head_kind: str
    weights: int
    memory_bytes: int
    dtype: str

    def model_input(self, text_ids: list[int]) -> tuple[list[int], list[int]]:
        """The ids the model reads for a text's ids (special tokens around them) and where each text token sits.

        The text's ids come from the table's own tokenizer (in the window, a child process),
        so the model reads exactly the tokens the table shows.
        """
        return model_input(self.prefix, self.suffix, text_ids)

    def message(self) -> dict[str, Any]:
        """The facts as JSON data (what the model's process sends when a model is loaded)."""
        return {f.name: getattr(self, f.name) for f in fields(ModelFacts)}

    @staticmethod
    def from_message(data: dict[str, Any]) -> dict[str, Any]:
        """``message``'s data checked and typed again, as keyword arguments for a ``ModelFacts`` (or a subclass)."""
        limit = data.get("max_positions")
        return {
            "name": str(data["name"]),
            "folder": str(data["folder"]),
            "prefix": tuple(int(i) for i in data["prefix"]),
            "suffix": tuple(int(i) for i in data["suffix"]),
            "layers": int(data["layers"]),
            "max_positions": int(limit) if isinstance(limit, int) else None,
            "head_is_table": bool(data["head_is_table"]),
            "head_note": str(data["head_note"]),
            "head_kind": str(data["head_kind"]),
            "weights": int(data["weights"]),
            "memory_bytes": int(data["memory_bytes"]),
            "dtype": str(data["dtype"]),
        }


@dataclass
class LayerModel(ModelFacts):
    """A whole model loaded with transformers' own classes, ready to run texts forward.

    Build it with ``load_layer_model``; ``trace`` answers questions with it.
    """

    model: Any  # a transformers PreTrainedModel (the base model, whose layers run), in eval mode
    _final_norm: Any = None
    _output: oh.OutputHead | None = None  # the model's own output head, when the folder has one
    _hidden: OrderedDict[tuple[int, ...], np.ndarray] = field(default_factory=OrderedDict, repr=False)

    def remembers(self, ids: Sequence[int]) -> bool:
        """Whether this text's layers are known already (asking for them runs nothing)."""
        return tuple(ids) in self._hidden

    def forget(self) -> None:
        """Drop the remembered texts, so the next question runs the model forward."""
        self._hidden.clear()

    def hidden_states(
        self, ids: list[int], should_stop: StopCheck | None = None, on_layer: LayerCallback | None = None
    ) -> np.ndarray:
        """Every position's vector for the input and after each layer: ``(layers + 1, len(ids), width)``.

        The vectors are the residual stream itself: after the last layer it is the
        output of the last block, before any final norm. ``on_layer`` sees each layer's
        tensor (positions x width) the moment the block has computed it, so a caller can
        work on layer i while the model computes layer i + 1; it is not called for a
        remembered text.
        """
        key = tuple(ids)
        known = self._hidden.get(key)
        if known is not None:
            self._hidden.move_to_end(key)
            return known
        stop_if_asked(should_stop)
        import torch

        with torch.inference_mode(), self._stoppable(should_stop, on_layer):
            output = self.model(torch.tensor([ids], dtype=torch.long), output_hidden_states=True)
            states = torch.stack([h[0] for h in output.hidden_states]).float().numpy().copy()
        stop_if_asked(should_stop)
        self._hidden[key] = states
        if len(self._hidden) > _REMEMBERED_TEXTS:
            self._hidden.popitem(last=False)
        return states

    @contextmanager
    def _stoppable(self, should_stop: StopCheck | None, on_layer: LayerCallback | None = None) -> Iterator[None]:
        """Check ``should_stop`` before every layer, so a long text's forward pass stops between layers,
        and hand each layer's vectors to ``on_layer`` as soon as they exist.

        What enters block i is transformers' ``hidden_states[i]`` (the same tensor); the last
        block's own output is the last entry (``tie_last_hidden_states`` is off, see the load).
        """
        blocks = submodule(self.model, BLOCK_PATHS)
        if (should_stop is None and on_layer is None) or blocks is None:
            yield
            return
        blocks = list(blocks)

        def before(index: int) -> Callable[[Any, tuple[Any, ...], dict[str, Any]], None]:
            def hook(_module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
                stop_if_asked(should_stop)
                hidden = _hidden_of(args[0] if args else kwargs.get("hidden_states", kwargs.get("x")))
                if on_layer is not None and hidden is not None:
                    on_layer(index, hidden[0])

            return hook

        def after(_module: Any, _args: tuple[Any, ...], output: Any) -> None:
            hidden = _hidden_of(output[0] if isinstance(output, tuple) else output)
            if on_layer is not None and hidden is not None:
                on_layer(len(blocks), hidden[0])

        handles = [block.register_forward_pre_hook(before(i), with_kwargs=True) for i, block in enumerate(blocks)]
        handles.append(blocks[-1].register_forward_hook(after))
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()

    def layer_runs(self, runs: Sequence[LayerRun], should_stop: StopCheck | None) -> Iterator[tuple[int, LayerBatch]]:
        """Each run's layers in this process, one batch a layer as the forward pass computes them.

        The pass runs on a thread of its own, so the caller (``trace``) compares layer i with
        the table while the model computes layer i + 1, as it does with the model's process
        (on GPT-2's shape 3-4 ms less than searching after the pass). A remembered text
        comes as one batch.
        """
        for index, run in enumerate(runs):
            if self.remembers(run.ids):
                yield index, self._whole_run(run, self.hidden_states(list(run.ids), should_stop))
            else:
                yield from ((index, batch) for batch in self._streamed_run(run, should_stop))

    def _whole_run(self, run: LayerRun, states: np.ndarray, skip: frozenset[int] = frozenset()) -> LayerBatch:
        """Every layer of a run from its hidden states (but those in ``skip``), and what enters layer 1."""
        vectors = states[:, run.position, :]
        layers = tuple(layer for layer in range(vectors.shape[0]) if layer not in skip)
        parts = None if run.token_id is None else self.input_parts(run.token_id, run.position, vectors[0])
        chosen = vectors[list(layers)]
        guesses = self.guesses(vectors, run.k, run.token_id)
        return LayerBatch(layers, chosen, self.for_table(chosen) if layers else chosen, parts, guesses)

    def guesses(self, vectors: np.ndarray, k: int, token_id: int | None) -> LayerGuesses | None:
        """The model's top ``k`` guesses after each of ``vectors`` (the input and every layer, raw), or
        None without a head or when none are wanted. All layers go through the head in one product."""
        if self._output is None or k <= 0:
            return None
        ids, probs = self._output.top(vectors, k)
        row_cosine = None if token_id is None else self._output.row_cosine(token_id)
        return LayerGuesses(ids, probs, row_cosine)

    def repeat_probabilities(
        self,
        prompts: Sequence[Sequence[int]],
        tokens: Sequence[int],
        batch: int,
        should_stop: StopCheck | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """For each prompt, the probability the model's own head gives its token as the next one:
        ``softmax(model(prompt).logits[0, -1])[token]``, in float64. Prompts of one length run together."""
        if self._output is None or self.head_kind not in (oh.TIED, oh.OWN):
            raise EmbedExplorerError("This model has no next-token head to ask.")
        import torch

        found = np.zeros(len(prompts), dtype=np.float64)
        step = max(1, batch)
        for start in range(0, len(prompts), step):
            stop_if_asked(should_stop)
            ids = torch.tensor([list(p) for p in prompts[start : start + step]], dtype=torch.long)
            wanted = torch.tensor([int(t) for t in tokens[start : start + step]], dtype=torch.long)
            with torch.inference_mode(), self._stoppable(should_stop):
                # The last block's own output (see ``_stoppable``); the head applies the final norm.
                last = self.model(ids, output_hidden_states=True).hidden_states[-1][:, -1, :]
                probabilities = torch.softmax(self._output.logits(last).double(), dim=-1)
                found[start : start + len(wanted)] = probabilities[torch.arange(len(wanted)), wanted].numpy()
            if progress is not None:
                progress(start + len(wanted), len(prompts))
        return found

    def _streamed_run(self, run: LayerRun, should_stop: StopCheck | None) -> Iterator[LayerBatch]:
        """One run forward on a thread of its own, each layer handed over as soon as it exists."""
        arrived: queue.Queue[tuple[int, Any] | None] = queue.Queue()
        outcome: dict[str, Any] = {}

        def on_layer(layer: int, hidden: Any) -> None:
            arrived.put((layer, hidden[run.position : run.position + 1].clone()))

        abandoned = threading.Event()

        def stop_pass() -> bool:
            return abandoned.is_set() or (should_stop is not None and should_stop())

        def forward() -> None:
            try:
                outcome["states"] = self.hidden_states(list(run.ids), stop_pass, on_layer)
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                outcome["error"] = exc
            finally:
                arrived.put(None)

        thread = threading.Thread(target=forward, name="layer-forward", daemon=True)
        thread.start()
        streamed: set[int] = set()
        try:
            while (item := arrived.get()) is not None:
                layer, row = item
                streamed.add(layer)
                yield LayerBatch((layer,), *self.layer_vector(row, 0))
        finally:
            # The caller left early (Ctrl-C, an error, a stop): the pass stops at its next layer
            # instead of running to the end. Never two passes through the model at once.
            abandoned.set()
            thread.join()
        if "error" in outcome:
            raise outcome["error"]
        # What enters layer 1, and any layer no hook could hand over (a model whose blocks were not found).
        yield self._whole_run(run, outcome["states"], frozenset(streamed))

    def for_table(self, vectors: np.ndarray) -> np.ndarray:
        """The vectors as the table is compared with them: through the final norm when the head is the table."""
        if self._final_norm is None:
            return vectors
        import torch

        with torch.inference_mode():
            weight = next(self._final_norm.parameters(), None)
            dtype = weight.dtype if weight is not None else torch.float32
            normed = self._final_norm(torch.from_numpy(np.ascontiguousarray(vectors)).to(dtype))
            return normed.float().numpy().copy()

    def layer_vector(self, hidden: Any, position: int) -> tuple[np.ndarray, np.ndarray]:
        """One position of a layer's output (a tensor, positions x width): the vector and the vector as
        the table is compared with it, each ``(1, width)`` float32, as ``for_table`` gives them.

        The model's process calls it for each layer as the layer arrives (its sender thread); it stays
        in torch up to one conversion at the end, where ``for_table`` starts from numpy.
        """
        import torch

        with torch.inference_mode():
            row = hidden[position : position + 1]
            if self._final_norm is None:
                vector = row.float().numpy().copy()
                return vector, vector
            weight = next(self._final_norm.parameters(), None)
            normed = self._final_norm(row if weight is None else row.to(weight.dtype))
            if normed.shape[-1] != row.shape[-1]:  # OPT-350m's projection: the table is narrower
                return row.float().numpy().copy(), normed.float().numpy().copy()
            both = torch.cat([row.float(), normed.float()]).numpy().copy()
        return both[:1], both[1:]

    def input_parts(self, token_id: int, position: int, enters: np.ndarray) -> LayerInput:
        """The rows the model's embedding step adds for one token, their sum, and what enters layer 1."""
        import torch

        parts: list[tuple[str, np.ndarray]] = []
        with torch.inference_mode():
            token_rows = self.model.get_input_embeddings().weight
            parts.append(("token row", token_rows[token_id].float().numpy().copy()))
            position_table = submodule(self.model, ("wpe", "embeddings.position_embeddings"))
            if position_table is not None and position < position_table.weight.shape[0]:
                row = position_table.weight[position].float().numpy().copy()
                parts.append((row_name(position), row))
            type_table = submodule(self.model, ("embeddings.token_type_embeddings",))
            if type_table is not None:
                parts.append(("token type row 0", type_table.weight[0].float().numpy().copy()))
            total = np.asarray(np.sum([p for _, p in parts], axis=0, dtype=np.float32))
            norm = submodule(self.model, ("embeddings.LayerNorm", "embeddings.layer_norm"))
            normed = None if norm is None else norm(torch.from_numpy(total)[None]).float().numpy()[0]
        names = " + ".join(n.split(" row")[0] + " row" for n, _ in parts)
        scale = max(1.0, float(np.abs(enters).max()))
        same_width = total.shape == np.shape(enters)  # OPT-350m projects the token row to the layers' width
        if same_width and np.allclose(total, enters, rtol=0, atol=1e-5 * scale):
            note = f"{names}: this sum enters layer 1."
        elif same_width and normed is not None and np.allclose(normed, enters, rtol=0, atol=1e-4 * scale):
            note = f"{names}, then LayerNorm: that is what enters layer 1."
        else:
            note = (
                f"{names}, then the model's own embedding step changes the sum (it scales, normalises or projects "
                "it, or marks positions inside the layers): what enters layer 1 is shown as computed by the model."
            )
        return LayerInput(tuple(parts), total, np.array(enters, dtype=np.float32), note)


def _hidden_of(found: Any) -> Any:
    """A block's input or output as the hooks see it, when it is the hidden states (batch x positions x
    width); None when a block takes or gives them another way: that layer is then taken from the
    pass's hidden states when it ends, not handed over as it is computed."""
    import torch

    return found if isinstance(found, torch.Tensor) and found.dim() == 3 else None


def submodule(model: Any, paths: tuple[str, ...]) -> Any:
    """The first submodule found at one of the dotted ``paths``, or None."""
    for path in paths:
        found = model
        for part in path.split("."):
            found = getattr(found, part, None)
            if found is None:
                break
        if found is not None:
            return found
    return None
