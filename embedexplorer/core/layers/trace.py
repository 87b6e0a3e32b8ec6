"""The model run forward: one token of a text through every layer, compared with the table.

The table alone is the token before it has seen its sentence. Here the whole model is
loaded on demand, from the same folder as the table, with transformers' own class for
the architecture (never a model's own code, never a pickle), and a text is run through
it once. For one token of that text we report, for the input and after each layer, the
vector's length, its cosine to the token's own table row, its cosine to a second token's
vector (the chapter's two "bank"s) and the table rows nearest to it.

torch and transformers are imported only when a model is loaded: opening a table and
asking the quick questions never pays for them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..common.blas import cores_but_one
from ..common.errors import (
    EmbedExplorerError,
    IncompleteModelError,
    Interrupted,
    PlaceError,
    QueryError,
    TextTooLongError,
    UnsupportedModelError,
)
from ..common.files import TOKENIZER_FILE_LIMIT, read_json
from ..common.progress import ProgressCallback
from ..formats.safetensors_io import FLOAT_DTYPES, PICKLE_PATTERNS, read_all_headers, weight_files
from ..readers.safetensors import BUFFER_NAMES, _named
from ..search import neighbours as nb
from ..search.scan_threads import own_thread_only
from ..tables.embedding_table import EmbeddingTable, Neighbour
from ..text.texts import Token
from . import output_head as oh
from .layer_schedule import SearchSchedule
from .model_config import built_in_attention, read_model_config

StopCheck = Callable[[], bool]
# Called with a layer's number (0 for the input) and every position's vector after it, as soon as it is computed.
LayerCallback = Callable[[int, Any], None]

DEFAULT_K = 8
# Texts whose layers are remembered, so picking another token of the same text runs nothing.
_REMEMBERED_TEXTS = 8
# A checkpoint holding less than this share of the model's weights lacks some of them.
# (1 % of slack: a checkpoint may leave out a pooler the layers never use.)
_COMPLETE_SHARE = 0.99
# Above this many weights a bfloat16 or float16 checkpoint stays in bfloat16: float32 would double its memory.
_FLOAT32_UP_TO = 1 << 30
# Names the final norm goes by in the base models transformers builds.
_FINAL_NORMS = ("ln_f", "norm", "final_layernorm", "final_layer_norm")
_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1}

log = logging.getLogger(__name__)


def default_threads() -> int:
    """Threads torch may use: every core but one, so the window always keeps one."""
    return cores_but_one()


# ----- answers ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class LayerStep:
    """One token after one layer (layer 0 is what enters layer 1).

    Attributes
    ----------
    layer:
        0 for the input, then 1 .. n.
    length:
        Length of the token's vector after this layer (the numbers the next layer receives).
    cosine_to_row:
        Cosine of the vector compared with the table (see ``LayersAnswer.head_note``) and the token's own row.
    cosine_to_compare:
        Cosine between this token's vector and the compared token's vector after the same layer, or None.
    nearest:
        The table rows nearest to the vector compared with the table, best first (cosine: which rows
        it points like).
    guess:
        The model's own guess after this layer, most likely first: its output head applied to the
        vector (final norm, dot product with every head row, bias, softmax). Empty without a head.
    """

    layer: int
    length: float
    cosine_to_row: float
    cosine_to_compare: float | None
    nearest: tuple[Neighbour, ...]
    guess: tuple[Guess, ...] = ()


@dataclass(frozen=True)
class Guess:
    """One token the model's output head ranks high, with its probability."""

    id: int
    token: str
    prob: float


@dataclass(frozen=True)
class PlacedToken:
    """A token at a place of a text: places count from 1, as the chapter counts them."""

    text: str
    place: int
    token: Token
    position: int  # the model's input position (BERT's [CLS] takes position 0)
    count: int  # tokens in the text, special tokens not counted


@dataclass(frozen=True)
class LayerInput:
    """What really enters layer 1 for one token, from the model's own embedding step.

    ``parts`` are the rows the model adds (token, position, token type), ``total`` their
    sum, and ``enters`` what the first layer receives: the same as ``total`` for GPT-2,
    the sum after LayerNorm for BERT, the token row scaled or alone for others.
    """

    parts: tuple[tuple[str, np.ndarray], ...]
    total: np.ndarray
    enters: np.ndarray
    note: str


@dataclass(frozen=True)
class LayersAnswer:
    """One token of a text through every layer of the model, and how it compares with the table."""

    model: str
    token: PlacedToken
    compare: PlacedToken | None
    steps: tuple[LayerStep, ...]
    input: LayerInput
    head_note: str
    layers: int
    k: int
    head_kind: str = oh.NONE  # see ``output_head``: tied, own, masked or none
    guess_note: str = ""
    # Cosine between the token's input row and its row in an untied output head (None: tied or no head).
    head_row_cosine: float | None = None

    def as_rows(self) -> list[dict[str, object]]:
        """The per-layer rows as plain data (the CLI's JSON)."""
        return [
            {
                "layer": s.layer,
                "length": s.length,
                "cosine_to_row": s.cosine_to_row,
                "cosine_to_compare": s.cosine_to_compare,
                "nearest": [{"token": n.token, "id": n.id, "cosine": n.cosine} for n in s.nearest],
                "guess": [{"id": g.id, "token": g.token, "prob": g.prob} for g in s.guess],
            }
            for s in self.steps
        ]


class LayerRun(NamedTuple):
    """One text to run forward: the ids the model reads, the position to follow, the token
    whose input parts are wanted (None for a compared text, which needs only its vectors),
    and how many of the model's guesses to give after each layer (0: none)."""

    ids: tuple[int, ...]
    position: int
    token_id: int | None
    k: int = 0


@dataclass(frozen=True)
class LayerGuesses:
    """The model's guesses after the input and every layer of one run, from its own output head."""

    ids: np.ndarray  # (layers + 1, k) token ids, most likely first
    probs: np.ndarray  # (layers + 1, k) float32
    row_cosine: float | None  # the token's input row vs its output row (untied heads only)


@dataclass(frozen=True)
class LayerBatch:
    """Some layers of one run, as they become known: the vector at the run's position after each
    layer, the same vectors as the table is compared with them, and (once) what enters layer 1."""

    layers: tuple[int, ...]
    vectors: np.ndarray  # (len(layers), width), float32
    compared: np.ndarray  # (len(layers), width), float32
    input: LayerInput | None = None
    guesses: LayerGuesses | None = None  # sent once, after the last layer


class LayerRunner(Protocol):
    """What ``trace`` needs of a model: ``LayerModel`` in this process, or one in a child process."""

    name: str
    layers: int
    max_positions: int | None
    head_note: str
    head_kind: str

    def model_input(self, text_ids: list[int]) -> tuple[list[int], list[int]]: ...

    def layer_runs(self, runs: Sequence[LayerRun], should_stop: StopCheck | None) -> Iterator[tuple[int, LayerBatch]]:
        """Batches of layers, each tagged with its run's index, in the order the runs were given."""
        ...


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
        _check(should_stop)
        import torch

        with torch.inference_mode(), self._stoppable(should_stop, on_layer):
            output = self.model(torch.tensor([ids], dtype=torch.long), output_hidden_states=True)
            states = torch.stack([h[0] for h in output.hidden_states]).float().numpy().copy()
        _check(should_stop)
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
        blocks = _module(self.model, ("h", "layers", "encoder.layer", "layer"))
        if (should_stop is None and on_layer is None) or blocks is None:
            yield
            return
        blocks = list(blocks)

        def before(index: int) -> Callable[[Any, tuple[Any, ...], dict[str, Any]], None]:
            def hook(_module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
                _check(should_stop)
                if on_layer is not None:
                    hidden = args[0] if args else kwargs["hidden_states"]
                    on_layer(index, hidden[0])

            return hook

        def after(_module: Any, _args: tuple[Any, ...], output: Any) -> None:
            if on_layer is not None:
                hidden = output[0] if isinstance(output, tuple) else output
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
            both = torch.cat([row.float(), normed.float()]).numpy().copy()
        return both[:1], both[1:]

    def input_parts(self, token_id: int, position: int, enters: np.ndarray) -> LayerInput:
        """The rows the model's embedding step adds for one token, their sum, and what enters layer 1."""
        import torch

        parts: list[tuple[str, np.ndarray]] = []
        with torch.inference_mode():
            token_rows = self.model.get_input_embeddings().weight
            parts.append(("token row", token_rows[token_id].float().numpy().copy()))
            position_table = _module(self.model, ("wpe", "embeddings.position_embeddings"))
            if position_table is not None and position < position_table.weight.shape[0]:
                # Rows counted from 1, as the chapter counts them (BERT's [CLS] takes row 1).
                row = position_table.weight[position].float().numpy().copy()
                parts.append((f"position row {position + 1}", row))
            type_table = _module(self.model, ("embeddings.token_type_embeddings",))
            if type_table is not None:
                parts.append(("token type row 0", type_table.weight[0].float().numpy().copy()))
            total = np.asarray(np.sum([p for _, p in parts], axis=0, dtype=np.float32))
            norm = _module(self.model, ("embeddings.LayerNorm", "embeddings.layer_norm"))
            normed = None if norm is None else norm(torch.from_numpy(total)[None]).float().numpy()[0]
        names = " + ".join(n.split(" row")[0] + " row" for n, _ in parts)
        scale = max(1.0, float(np.abs(enters).max()))
        if np.allclose(total, enters, rtol=0, atol=1e-5 * scale):
            note = f"{names}: this sum enters layer 1."
        elif normed is not None and np.allclose(normed, enters, rtol=0, atol=1e-4 * scale):
            note = f"{names}, then LayerNorm: that is what enters layer 1."
        else:
            note = (
                f"{names}, then the model's own embedding step changes the sum (it scales or normalises "
                "it, or marks positions inside the layers): what enters layer 1 is shown as computed by the model."
            )
        return LayerInput(tuple(parts), total, np.array(enters, dtype=np.float32), note)


def _module(model: Any, paths: tuple[str, ...]) -> Any:
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


def _check(should_stop: StopCheck | None) -> None:
    if should_stop is not None and should_stop():
        raise Interrupted("Stopped: a newer question replaced this one.")


# ----- loading ---------------------------------------------------------------------------------
def load_layer_model(
    folder: Path | str,
    *,
    name: str | None = None,
    progress: ProgressCallback | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
    design: ModelDesign | None = None,
) -> LayerModel:
    """Load the whole model in ``folder`` with transformers' own class for its architecture.

    Weights come from safetensors only (a folder with only pickled weights is refused),
    no code from the folder runs, and a folder that holds the embedding table but not
    the rest of the model raises ``IncompleteModelError`` with the whole model's size.
    ``design`` is ``read_design(folder)`` done ahead of need; it is used only while the
    folder's config and tokenizer files are the ones it read.
    """
    report = progress or (lambda done, total, message: None)
    folder = Path(folder)
    report(0, 4, "Reading the model's design")
    files = weight_files(folder)  # refuses pickle-only folders, reports missing shards
    _check(should_stop)
    import torch

    torch.set_num_threads(threads or default_threads())
    config = _config(folder)
    if design is None or design.folder != folder or design.stamp != _stamp(folder):
        design = read_design(folder, config)
    expected = design.expected
    entries = read_all_headers(files)
    dtypes = {e.dtype for e in entries.values() if e.dtype in FLOAT_DTYPES}
    stored = "F32" if not dtypes or "F32" in dtypes else sorted(dtypes)[0]
    have = sum(e.numel for n, e in entries.items() if e.dtype in FLOAT_DTYPES and not _named(n, BUFFER_NAMES))
    model_bytes = expected * _BYTES.get(stored, 4)
    if have < _COMPLETE_SHARE * expected:
        message = _incomplete_message(folder, have, expected, model_bytes, stored)
        raise IncompleteModelError(message, model_bytes, expected)
    _check(should_stop)

    dtype = torch.float32 if stored == "F32" or expected <= _FLOAT32_UP_TO else torch.bfloat16
    loaded_bytes = expected * (4 if dtype == torch.float32 else 2)
    report(1, 4, f"Loading the whole model: {expected:,} weights ({_size(loaded_bytes)})")
    kind = oh.head_kind(_head_config(config), entries)
    with _quiet_transformers():
        try:
            full, info = oh.head_class(kind).from_pretrained(
                str(folder),
                config=config,
                use_safetensors=True,
                local_files_only=True,
                trust_remote_code=False,
                attn_implementation=built_in_attention(config),
                dtype=dtype,
                output_loading_info=True,
            )
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            raise UnsupportedModelError(f"transformers cannot load the model in {folder}: {_first_line(exc)}") from exc
    model, output = oh.split(full, kind, config, _final_norm_of)
    prefix_of_base = "" if model is full else f"{full.base_model_prefix}."
    missing = sorted(
        k.removeprefix(prefix_of_base)
        for k in info.get("missing_keys", ())
        if k.startswith(prefix_of_base) and "pooler." not in k
    )
    if missing:
        raise IncompleteModelError(
            _incomplete_message(folder, have, expected, model_bytes, stored, missing), model_bytes, expected
        )
    if any(not k.startswith(prefix_of_base) for k in info.get("missing_keys", ())):
        kind, output = oh.NONE, None  # the head's own weights are not in the folder: no guess, never a random one
    _check(should_stop)
    model.eval()
    full.eval()
    # The last hidden state is the last block's own output, as for every other layer;
    # the final norm is applied where the table is compared, and said so.
    model.config.tie_last_hidden_states = False
    report(2, 4, "Reading the tokenizer's special tokens")
    prefix, suffix = design.prefix, design.suffix
    final_norm, head_is_table, head_note = _head(model, config)
    kept = model if output is None else full
    weights = sum(p.numel() for p in kept.parameters())
    memory = sum(p.numel() * p.element_size() for p in kept.parameters())
    report(4, 4, "Model ready")
    return LayerModel(
        name=name or str(folder),
        folder=str(folder),
        model=model,
        prefix=prefix,
        suffix=suffix,
        layers=int(getattr(config, "num_hidden_layers", 0) or _count_layers(model)),
        max_positions=_max_positions(config),
        head_is_table=head_is_table,
        head_note=head_note,
        head_kind=kind if output is not None else oh.NONE,
        weights=int(weights),
        memory_bytes=int(memory),
        dtype=str(dtype).removeprefix("torch."),
        _final_norm=final_norm if head_is_table else None,
        _output=output,
    )


def _head_config(config: Any) -> dict[str, Any]:
    """What ``output_head.head_kind`` reads of a config, from transformers' config object."""
    return {
        "is_encoder_decoder": bool(getattr(config, "is_encoder_decoder", False)),
        "tie_word_embeddings": bool(getattr(config, "tie_word_embeddings", True)),
        "model_type": str(getattr(config, "model_type", "")),
    }


def _final_norm_of(model: Any) -> Any:
    return next((getattr(model, n) for n in _FINAL_NORMS if getattr(model, n, None) is not None), None)


@dataclass(frozen=True)
class ModelDesign:
    """What a load reads besides the weights, which can be read ahead of need (the window's
    model process does it as soon as it starts): how many weights the model has, counted on
    a model built without memory, and the special tokens around a text."""

    folder: Path
    stamp: tuple[tuple[int, int], ...]  # size and modification time of config.json and tokenizer.json
    expected: int
    prefix: tuple[int, ...]
    suffix: tuple[int, ...]


def read_design(folder: Path | str, config: Any = None) -> ModelDesign:
    """The design of the model in ``folder``; raises as ``load_layer_model`` would for a design it cannot run."""
    folder = Path(folder)
    stamp = _stamp(folder)
    config = config if config is not None else _config(folder)
    expected, _shell = _expected_weights(config)
    prefix, suffix = special_tokens(folder)
    rows = getattr(config.get_text_config(), "vocab_size", None)
    if isinstance(rows, int):
        outside = [i for i in prefix + suffix if not 0 <= i < rows]
        if outside:
            # The model would index its table past the end.
            raise EmbedExplorerError(
                f"The tokenizer in {folder} puts token id {outside[0]:,} around every text, but the model's "
                f"table has {rows:,} rows (0 to {rows - 1:,}): the tokenizer belongs to another model."
            )
    return ModelDesign(folder, stamp, expected, prefix, suffix)


def _stamp(folder: Path) -> tuple[tuple[int, int], ...]:
    stamps = []
    for name in ("config.json", "tokenizer.json"):
        try:
            found = (folder / name).stat()
            stamps.append((found.st_size, found.st_mtime_ns))
        except OSError:
            stamps.append((-1, -1))
    return tuple(stamps)


def special_tokens(folder: Path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids a tokenizer puts before and after a single text, read from tokenizer.json's post-processor.

    Reading the JSON is enough: building the tokenizer itself would hold Python's lock for
    tens of milliseconds in the window's process (see ``tokenizer_process``).
    """
    file = folder / "tokenizer.json"
    if not file.is_file():
        return _special_tokens_from_transformers(folder)
    data = read_json(file, "tokenizer file", TOKENIZER_FILE_LIMIT, EmbedExplorerError)
    try:
        return _template(data.get("post_processor") if isinstance(data, dict) else None)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as exc:
        raise EmbedExplorerError(
            f"The tokenizer file {file} has a post-processor that cannot be read ({exc!r})."
        ) from exc


def _template(processor: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if not isinstance(processor, dict):
        return (), ()
    kind = processor.get("type")
    if kind == "Sequence":
        prefix: tuple[int, ...] = ()
        suffix: tuple[int, ...] = ()
        for inner in processor.get("processors") or []:
            inner_prefix, inner_suffix = _template(inner)
            prefix, suffix = prefix + inner_prefix, suffix + inner_suffix
        return prefix, suffix
    if kind in ("BertProcessing", "RobertaProcessing"):
        return (int(processor["cls"][1]),), (int(processor["sep"][1]),)
    if kind == "TemplateProcessing":
        specials = processor.get("special_tokens") or {}
        before: list[int] = []
        after: list[int] = []
        seen_text = False
        for piece in processor.get("single") or []:
            if "Sequence" in piece:
                seen_text = True
            elif "SpecialToken" in piece:
                ids = [int(i) for i in specials[piece["SpecialToken"]["id"]]["ids"]]
                (after if seen_text else before).extend(ids)
        return tuple(before), tuple(after)
    return (), ()  # ByteLevel and the like add no tokens


def _special_tokens_from_transformers(folder: Path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Folders without tokenizer.json: ask the fast tokenizer transformers builds (never custom code)."""
    from ..text.vocabulary import load_tokenizer

    tokenizer = load_tokenizer(folder)
    marker = tokenizer.encode("a", add_special_tokens=True)
    mask = list(marker.special_tokens_mask)
    first = mask.index(0) if 0 in mask else len(mask)
    last = len(mask) - mask[::-1].index(0) if 0 in mask else len(mask)
    return tuple(marker.ids[:first]), tuple(marker.ids[last:])


def model_size(folder: Path | str) -> tuple[int, int] | None:
    """The whole model's weights and bytes, from its config alone; None when it cannot be told."""
    try:
        config = _config(Path(folder))
        expected, _ = _expected_weights(config)
    except EmbedExplorerError:
        return None
    return expected, expected * 4


def _config(folder: Path) -> Any:
    """config.json through the allow-list of ``model_config`` (no key there can choose code to run)."""
    with _quiet_transformers():
        return read_model_config(folder)


def _expected_weights(config: Any) -> tuple[int, Any]:
    """How many learned weights the base model has, counted on a model built without memory."""
    import torch

    with _quiet_transformers(), torch.device("meta"):
        from transformers import AutoModel

        try:
            shell = AutoModel.from_config(
                config, trust_remote_code=False, attn_implementation=built_in_attention(config)
            )
        except (ValueError, KeyError, TypeError, RuntimeError) as exc:
            raise UnsupportedModelError(
                f"transformers has no model class of its own for '{config.model_type}': {_first_line(exc)}"
            ) from exc
    return int(sum(p.numel() for p in shell.parameters())), shell


def _incomplete_message(
    folder: Path, have: int, expected: int, model_bytes: int, dtype: str, missing: list[str] | None = None
) -> str:
    pickles = sorted({f.name for pattern in PICKLE_PATTERNS for f in folder.glob(pattern)})
    what = (
        f"{len(missing)} of the model's weights are missing ({missing[0]}, ...)"
        if missing
        else f"it holds {have:,} of the {expected:,} weights the whole model needs"
    )
    text = (
        f"{folder} has the embedding table but not the whole model: {what}. Running a text through the "
        f"layers needs the whole model, {_size(model_bytes)} as {dtype}: download it (File > Download model, "
        "or the CLI's --download=full) or open a folder that has all its weights."
    )
    if pickles:
        text += f" The rest is only in pickled files ({pickles[0]}), which EmbedExplorer refuses to load."
    return text


def _head(model: Any, config: Any) -> tuple[Any, bool, str]:
    """The final norm the nearest rows are compared after (tied heads only), and what they mean."""
    final_norm = _final_norm_of(model)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    if final_norm is not None and tied and not getattr(config, "is_encoder_decoder", False):
        name = next(n for n in _FINAL_NORMS if getattr(model, n, None) is final_norm)
        return final_norm, True, (
            f"Nearest rows: the vector after the final norm ({name}) against every table row by cosine, "
            "length ignored: rows it points like, not the model's guess."
        )
    return None, False, (
        "Nearest rows: the vector against the table's input rows by cosine, length ignored: rows it "
        "points like, not the model's guess."
    )


def _max_positions(config: Any) -> int | None:
    for key in ("n_positions", "max_position_embeddings"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _count_layers(model: Any) -> int:
    found = _module(model, ("h", "layers", "encoder.layer", "layer"))
    return len(found) if found is not None and hasattr(found, "__len__") else 0


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No progress bars or load reports on stderr: progress and errors are ours to tell."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    level = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def _size(n_bytes: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:,.1f} {unit}"
    return f"{n_bytes} bytes"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


# ----- questions -------------------------------------------------------------------------------
def check_place(table: EmbeddingTable, text: str, place: int) -> list[Token]:
    """The text's tokens, once ``place`` is known to be one of them and the text not too long.

    Needs only the table, so a mistake is reported before the whole model is loaded;
    ``place_token`` checks again with the model's special tokens counted.
    """
    tokens = table.encode(text)
    if not tokens:
        shown = "an empty text" if not text.strip() else repr(text)
        raise QueryError(f"There is no token in {shown}; type a word.")
    limit = _max_positions_in(table.config)
    if limit is not None and len(tokens) > limit:
        raise TextTooLongError(
            f"The text is {len(tokens):,} tokens, but the model has positions for only {limit:,}: "
            f"there is no row for position {limit + 1:,}. Shorten the text."
        )
    if not 1 <= place <= len(tokens):
        raise PlaceError(
            f"Place {place} is outside the text: {text!r} has {len(tokens)} token(s), places 1 to {len(tokens)}."
        )
    return tokens


def _max_positions_in(config: dict[str, object]) -> int | None:
    for key in ("n_positions", "max_position_embeddings"):
        value = config.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def place_token(table: EmbeddingTable, model: LayerRunner, text: str, place: int) -> tuple[PlacedToken, list[int]]:
    """The token at ``place`` (from 1) of ``text`` and the ids the model reads for the text."""
    tokens = check_place(table, text, place)
    ids, places = model.model_input([t.id for t in tokens])
    limit = model.max_positions
    if limit is not None and len(ids) > limit:
        extra = len(ids) - len(places)
        with_specials = f" ({len(ids):,} with the model's {extra} special token(s))" if extra else ""
        raise TextTooLongError(
            f"The text is {len(tokens):,} tokens{with_specials}, but the model has positions for only "
            f"{limit:,}: there is no row for position {limit + 1:,}. Shorten the text."
        )
    position = places[place - 1]
    return PlacedToken(text, place, tokens[place - 1], position, len(tokens)), ids


def trace(
    table: EmbeddingTable,
    model: LayerRunner,
    text: str,
    place: int,
    *,
    compare: tuple[str, int] | None = None,
    k: int = DEFAULT_K,
    should_stop: StopCheck | None = None,
    progress: ProgressCallback | None = None,
) -> LayersAnswer:
    """The token at ``place`` of ``text`` through every layer: lengths, cosines and nearest rows.

    ``compare`` is a second text and place: its token's vector is compared with this one
    after every layer (the chapter's "bank" in two sentences). Layers are compared with
    the table as they arrive: a model in a child process sends each layer as soon as it
    is computed, so the table is searched for layer i while the model computes layer i + 1.
    """
    report = progress or (lambda done, total, message: None)
    placed, ids = place_token(table, model, text, place)
    other = None if compare is None else place_token(table, model, compare[0], compare[1])
    runs = [LayerRun(tuple(ids), placed.position, placed.token.id, k)]
    if other is not None:
        runs.append(LayerRun(tuple(other[1]), other[0].position, None))
    report(0, 2, "Running the text through the layers")
    found: list[dict[int, tuple[np.ndarray, np.ndarray]]] = [{} for _ in runs]
    nearest: dict[int, tuple[Neighbour, ...]] = {}
    pending: list[int] = []  # layers that arrived but are not compared with the table yet
    schedule = SearchSchedule(model.layers + 1)
    layer_input: LayerInput | None = None
    guesses: LayerGuesses | None = None
    for index, batch in model.layer_runs(runs, should_stop):
        for layer, vector, compared in zip(batch.layers, batch.vectors, batch.compared, strict=True):
            found[index][layer] = (vector, compared)
        if index != 0:
            continue
        layer_input = batch.input or layer_input
        guesses = batch.guesses or guesses
        pending += batch.layers
        schedule.arrived(len(batch.layers))
        if k and schedule.search_now(len(pending)):
            _check(should_stop)
            if not nearest:
                report(1, 2, "Comparing every layer with the table")
            vectors_now = np.stack([found[0][layer][1] for layer in pending])
            _check_model_numbers(pending, vectors_now)
            # While the model still runs it needs the other cores; once it is done the search takes them all.
            running = sum(map(len, found)) < (model.layers + 1) * len(runs)
            began = time.perf_counter()
            with own_thread_only(running):
                results = table.neighbours_of_vectors(vectors_now, k)
            schedule.searched(len(pending), time.perf_counter() - began)
            for layer, result in zip(pending, results, strict=True):
                nearest[layer] = result.neighbours
            pending = []
    vectors, compared_all = _stacked(found[0])
    other_vectors = None if other is None else _stacked(found[1])[0]
    has_guess = model.head_kind != oh.NONE and k > 0
    if layer_input is None or (k and len(nearest) != vectors.shape[0]):
        raise EmbedExplorerError("The model's answer was incomplete; ask again.")
    if has_guess and (guesses is None or guesses.ids.shape[0] != vectors.shape[0]):
        raise EmbedExplorerError("The model's guesses were incomplete; ask again.")
    row = table.row(placed.token.id)
    _check(should_stop)
    steps = []
    for layer in range(vectors.shape[0]):
        steps.append(
            LayerStep(
                layer=layer,
                length=float(np.linalg.norm(vectors[layer].astype(np.float64))),
                cosine_to_row=nb.cosine(compared_all[layer], row),
                cosine_to_compare=None if other_vectors is None else nb.cosine(vectors[layer], other_vectors[layer]),
                nearest=nearest.get(layer, ()),
                guess=() if guesses is None else _guesses_of(table, guesses, layer),
            )
        )
    report(2, 2, "Layers ready")
    return LayersAnswer(
        model=model.name,
        token=placed,
        compare=None if other is None else other[0],
        steps=tuple(steps),
        input=layer_input,
        head_note=model.head_note,
        layers=model.layers,
        k=k,
        head_kind=model.head_kind,
        guess_note=oh.guess_note(model.head_kind),
        head_row_cosine=None if guesses is None else guesses.row_cosine,
    )


def _guesses_of(table: EmbeddingTable, guesses: LayerGuesses, layer: int) -> tuple[Guess, ...]:
    """One layer's guesses with their tokens' readable forms (an id past the table's rows shows as its id)."""
    found = []
    for token_id, prob in zip(guesses.ids[layer].tolist(), guesses.probs[layer].tolist(), strict=True):
        token = table.tokens[token_id] if 0 <= token_id < len(table.tokens) else f"[id {token_id}]"
        found.append(Guess(int(token_id), token, float(prob)))
    return tuple(found)


def _check_model_numbers(layers: list[int], vectors: np.ndarray) -> None:
    """Refuse, naming the layer, a model whose own numbers went NaN or infinite (the user gave no vector)."""
    finite = np.isfinite(vectors).all(axis=1)
    if finite.all():
        return
    layer = layers[int(np.argmin(finite))]
    where = "what enters layer 1" if layer == 0 else f"the output of layer {layer}"
    raise EmbedExplorerError(
        f"The model's own numbers are not finite (NaN or infinity) in {where}: its weights hold such numbers or "
        "overflow there, so its layers cannot be compared with the table. The model file may be damaged."
    )


def _stacked(layers: dict[int, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The vectors and compared vectors of layers 0 .. n in order; every layer must be there."""
    if sorted(layers) != list(range(len(layers))) or not layers:
        raise EmbedExplorerError("The model's answer was incomplete; ask again.")
    return (
        np.stack([layers[i][0] for i in range(len(layers))]),
        np.stack([layers[i][1] for i in range(len(layers))]),
    )


def find_place(table: EmbeddingTable, text: str, token_id: int) -> int | None:
    """The first place (from 1) of ``token_id`` in ``text``, or None."""
    for place, token in enumerate(table.encode(text), start=1):
        if token.id == token_id:
            return place
    return None
