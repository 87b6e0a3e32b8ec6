"""EmbeddingTable: one model's token rows, unit rows, tokens and position rows.

Only the embedding tensors are read, memory-mapped straight from safetensors;
the model itself is never built, so opening GPT-2 takes a fraction of a second.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from . import neighbours as nb
from .bf16_rows import Bf16Rows, kernel_instructions, screen_for
from .errors import EmbedExplorerError, QueryError, TableNotFoundError, TokenizerMismatchError
from .safetensors_io import FLOAT_DTYPES, TensorEntry, map_tensor, read_all_headers, weight_files
from .sources import ModelSource, ProgressCallback, resolve_source
from .texts import MAX_SHOWN_TOKENS, Token, TokenReport, fixed, token_report
from .vocabulary import Vocabulary

# Suffixes of the token table's name in the common architectures, most specific first.
TOKEN_TABLE_NAMES = (
    "wte.weight",  # GPT-2 (GPT2Model) and transformer.wte.weight (GPT2LMHeadModel)
    "embeddings.word_embeddings.weight",  # BERT, RoBERTa, MiniLM
    "embed_tokens.weight",  # Llama, Qwen, Mistral, OPT, T5 decoders
    "embed_in.weight",  # GPT-NeoX, Pythia
    "word_embeddings.weight",  # BLOOM
    "tok_embeddings.weight",
    "shared.weight",  # T5
)
POSITION_TABLE_NAMES = (
    "wpe.weight",
    "embeddings.position_embeddings.weight",
    "embed_positions.weight",
    "position_embeddings.weight",
)
# How many looked-up words each table remembers.
QUERY_MEMORY = 4096
# Saved buffers that are not learned weights and must not count towards the model size.
BUFFER_NAMES = ("attn.bias", "attn.masked_bias", "position_ids", "inv_freq", "_float_tensor")
TIED_HEAD_NAMES = ("lm_head.weight", "cls.predictions.decoder.weight")


@dataclass(frozen=True, slots=True)
class Neighbour:
    id: int
    token: str
    cosine: float


@dataclass(frozen=True)
class Query:
    """The token that answers for what the user typed, and why."""

    id: int
    token: str
    pieces: tuple[Token, ...]
    note: str = ""


@dataclass(frozen=True)
class NeighbourResult:
    query: Query | None
    neighbours: tuple[Neighbour, ...]
    note: str = ""


@dataclass(frozen=True)
class TableFacts:
    model: str
    rows: int
    width: int
    table_weights: int
    model_weights: int
    share: float
    position_rows: int | None
    position_note: str
    baseline_cosine: float
    vocabulary_size: int
    dtype: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> str:
        """The chapter's sentences about a table: rows x width = weights, share of the model."""
        positions = f"{self.position_rows:,} position rows" if self.position_rows else self.position_note
        return (
            f"model: {self.model}\n"
            f"{self.rows:,} rows x {self.width:,} numbers = {self.table_weights:,} weights\n"
            f"share of the whole model: {self.table_weights:,} / {self.model_weights:,} = {self.share:.1%}\n"
            f"{positions}\n"
            f"mean cosine of unrelated tokens (baseline): {fixed(self.baseline_cosine, 3)}"
        )


@dataclass
class EmbeddingTable:
    """A model's embedding tables and tokenizer, ready to answer questions.

    Parameters
    ----------
    name:
        What outputs call the model (Hub id, folder or "bundled").
    rows:
        The token table, ``(vocabulary rows, width)`` float32, usually memory-mapped.
    vocabulary:
        The tokenizer that turns text into row ids.
    positions:
        The learned position table ``(positions, width)``, or None.
    """

    name: str
    rows: np.ndarray
    vocabulary: Vocabulary
    model_weights: int
    dtype: str = "F32"
    positions: np.ndarray | None = None
    position_note: str = ""
    folder: Path | None = None
    config: dict[str, object] = field(default_factory=dict)
    # Words already looked up, as gensim keeps key_to_index: a repeated query skips the tokenizer.
    _queries: dict[str, Query] = field(default_factory=dict, init=False, repr=False, compare=False)

    def close(self) -> None:
        """Let go of what the table holds outside this process (a tokenizer process)."""
        self.vocabulary.close()

    # ----- derived tables, computed once -------------------------------------------------
    @cached_property
    def unit(self) -> np.ndarray:
        """Rows scaled to length 1, so a cosine is a dot product."""
        return nb.unit_rows(self.rows)

    @cached_property
    def screen(self) -> Bf16Rows | None:
        """The unit rows in bfloat16 for a query's first pass, when that is faster here (else None)."""
        return screen_for(self.unit)

    def search_method(self) -> str:
        """How a neighbour query reads this table here, in a sentence (for ``info``)."""
        if self.screen is None:
            first = "one float32 pass over the unit rows"
        else:
            first = f"one bfloat16 pass over the unit rows ({kernel_instructions()} build, half the bytes)"
        return f"{first}, then exact scores for every row that could be among the best"

    @cached_property
    def tokens(self) -> list[str]:
        """The readable form of every row's token ("<row N>" for rows the tokenizer never uses)."""
        known = self.vocabulary.size
        return [self.vocabulary.readable(i) if i < known else f"<row {i}>" for i in range(self.rows.shape[0])]

    @cached_property
    def baseline_cosine(self) -> float:
        return nb.baseline_cosine(self.unit, min(self.vocabulary.size, self.rows.shape[0]))

    # ----- text ------------------------------------------------------------------------
    def encode(self, text: str) -> list[Token]:
        """Tokens of ``text`` exactly as the model sees it (no special tokens added)."""
        return [self.token(i) for i in self.vocabulary.encode(text)]

    def tokenize(
        self, text: str, *, only_fitting: bool = True, max_shown: int | None = MAX_SHOWN_TOKENS
    ) -> TokenReport:
        """Tokens of ``text`` for display: how many there are, how many have a position row.

        Never raises for any text. At most ``texts.MAX_TEXT_CHARS`` characters are read;
        the tokens returned are those with a position row (all, when ``only_fitting`` is
        False), at most ``max_shown`` (None: no limit). The note says what was left out.
        """
        return token_report(self, text, max_shown=max_shown, only_fitting=only_fitting)

    def token(self, token_id: int) -> Token:
        """Token ``token_id`` with its readable form and the characters it stands for."""
        return Token(int(token_id), self.tokens[token_id], self.vocabulary.text_of(token_id))

    def query(self, word: str | int) -> Query:
        """The token that answers for ``word``: an id as given, or the word's first token."""
        if isinstance(word, (int, np.integer)):
            token_id = self._check_id(int(word))
            token = self.token(token_id)
            return Query(token.id, token.token, (token,))
        known = self._queries.get(word)
        if known is not None:
            return known
        answer = self._query_text(word)
        if len(self._queries) >= QUERY_MEMORY:
            self._queries.pop(next(iter(self._queries)))  # forget the oldest word
        self._queries[word] = answer
        return answer

    def _query_text(self, word: str) -> Query:
        pieces = tuple(self.encode(word))
        if not pieces:
            shown = "an empty text" if not word.strip() else repr(word)
            raise QueryError(f"There is no token in {shown}; type a word.")
        first = pieces[0]
        notes = []
        if self.vocabulary.unknown_id is not None and first.id == self.vocabulary.unknown_id:
            notes.append(f"The vocabulary has no token for {word.strip()!r}; it became {first.token}.")
        if len(pieces) > 1:
            shown = " ".join(p.token for p in pieces)
            notes.append(
                f"{word!r} is {len(pieces)} tokens ({shown}); the first, {first.token}, answers for it."
            )
        return Query(first.id, first.token, pieces, " ".join(notes))

    def row(self, token_id: int) -> np.ndarray:
        """A copy of one token's row (copies keep callers from writing into the mapped file)."""
        return np.array(self.rows[self._check_id(token_id)], dtype=np.float32)

    def position_row(self, position: int) -> np.ndarray | None:
        """Row of the 0-based ``position``, or None when the model has no such row."""
        if self.positions is None or not 0 <= position < self.positions.shape[0]:
            return None
        return np.array(self.positions[position], dtype=np.float32)

    def _check_id(self, token_id: int) -> int:
        if not 0 <= token_id < self.rows.shape[0]:
            raise QueryError(f"Token id {token_id} is outside the table (0 to {self.rows.shape[0] - 1}).")
        return token_id

    # ----- questions -------------------------------------------------------------------
    def neighbours(self, query: str | int, k: int = 8) -> NeighbourResult:
        """The k tokens whose rows point most nearly the same way, the query itself left out."""
        answer = self.query(query)
        ids, cosines = nb.top_k(self.unit, self.unit[answer.id], k, exclude=(answer.id,), screen=self.screen)
        return NeighbourResult(answer, self._neighbours(ids, cosines), answer.note)

    def neighbours_of_vector(
        self, vector: np.ndarray, k: int = 8, exclude: tuple[int, ...] = ()
    ) -> NeighbourResult:
        vector = np.asarray(vector, dtype=np.float32)
        if vector.shape != (self.width,):
            raise QueryError(f"A vector for this table needs {self.width} numbers, not {vector.shape}.")
        if not np.isfinite(vector).all():
            raise QueryError("A vector to search with must hold only finite numbers (no NaN or infinity).")
        ids, cosines = nb.top_k(self.unit, vector, k, exclude=exclude, screen=self.screen)
        return NeighbourResult(None, self._neighbours(ids, cosines))

    def cosine(self, a: str | int, b: str | int) -> float:
        first, second = self.query(a), self.query(b)
        return float(self.unit[first.id] @ self.unit[second.id])

    def analogy(self, a: str | int, b: str | int, c: str | int, k: int = 8) -> NeighbourResult:
        """Tokens nearest to a - b + c (3CosAdd); the three inputs are left out."""
        qa, qb, qc = self.query(a), self.query(b), self.query(c)
        vector = nb.analogy_vector(self.unit, qa.id, qb.id, qc.id)
        ids, cosines = nb.top_k(self.unit, vector, k, exclude={qa.id, qb.id, qc.id}, screen=self.screen)
        notes = " ".join(q.note for q in (qa, qb, qc) if q.note)
        label = f"{qa.token} - {qb.token} + {qc.token}"
        query = Query(qa.id, label, qa.pieces + qb.pieces + qc.pieces, notes)
        return NeighbourResult(query, self._neighbours(ids, cosines), notes)

    def _neighbours(self, ids: np.ndarray, cosines: np.ndarray) -> tuple[Neighbour, ...]:
        tokens = self.tokens
        # tolist() converts every number in one C call instead of one numpy scalar at a time.
        return tuple(Neighbour(i, tokens[i], c) for i, c in zip(ids.tolist(), cosines.tolist(), strict=True))

    # ----- facts -----------------------------------------------------------------------
    @property
    def width(self) -> int:
        return int(self.rows.shape[1])

    @property
    def position_count(self) -> int | None:
        """Rows in the learned position table, or None when the model has none."""
        return None if self.positions is None else int(self.positions.shape[0])

    def facts(self) -> TableFacts:
        rows, width = (int(n) for n in self.rows.shape)
        table_weights = rows * width
        return TableFacts(
            model=self.name,
            rows=rows,
            width=width,
            table_weights=table_weights,
            model_weights=self.model_weights,
            share=table_weights / self.model_weights if self.model_weights else 0.0,
            position_rows=None if self.positions is None else int(self.positions.shape[0]),
            position_note=self.position_note,
            baseline_cosine=self.baseline_cosine,
            vocabulary_size=self.vocabulary.size,
            dtype=self.dtype,
        )


def open_table(
    spec: str | None = None,
    *,
    allow_download: bool = False,
    progress: ProgressCallback | None = None,
    separate_tokenizer: bool = False,
) -> EmbeddingTable:
    """Open a model's embedding table: a folder, a cached Hub id, "bundled" or the default.

    ``separate_tokenizer`` runs the tokenizer in a child process, for callers (the
    window) whose other threads must never wait on the tokenizer's hold of the GIL.

    >>> table = open_table("bundled")
    >>> [n.token for n in table.neighbours("monday", k=3).neighbours]  # doctest: +SKIP
    """
    report = progress or (lambda done, total, message: None)
    report(0, 4, "Finding the model")
    source = resolve_source(spec, allow_download=allow_download, progress=progress)
    return load_table(source, report, separate_tokenizer)


def load_table(source: ModelSource, report: ProgressCallback, separate_tokenizer: bool = False) -> EmbeddingTable:
    """Read the tokenizer and map the embedding tensors of a model folder."""
    folder = source.folder
    config = _read_config(folder)
    report(1, 4, "Reading the weights' index")
    entries = read_all_headers(weight_files(folder))
    token_entry = _find_token_table(entries, config)
    position_entry = _find_tensor(entries, POSITION_TABLE_NAMES, width=token_entry.shape[1])
    report(2, 4, "Reading the tokenizer")
    # A separate tokenizer process loads while the tables are mapped.
    finish_vocabulary = Vocabulary.start(folder, separate_process=separate_tokenizer)
    report(3, 4, "Mapping the embedding table")
    rows = map_tensor(token_entry)
    positions = None if position_entry is None else map_tensor(position_entry)
    vocabulary = finish_vocabulary()
    try:
        _check_vocabulary(config, vocabulary, rows.shape[0])
    except BaseException:
        vocabulary.close()
        raise
    table = EmbeddingTable(
        name=source.name,
        rows=rows,
        vocabulary=vocabulary,
        model_weights=count_model_weights(entries, config, token_entry),
        dtype=token_entry.dtype,
        positions=positions,
        position_note=_position_note(position_entry, config),
        folder=folder,
        config=config,
    )
    report(4, 4, "Ready")
    return table


def _check_vocabulary(config: dict[str, object], vocabulary: Vocabulary, rows_count: int) -> None:
    if vocabulary.max_id() >= rows_count:
        raise TokenizerMismatchError(
            f"The tokenizer has ids up to {vocabulary.max_id():,} but the table has only "
            f"{rows_count:,} rows: they do not belong to the same model."
        )
    _check_special_ids(config, vocabulary)


def _check_special_ids(config: dict[str, object], vocabulary: Vocabulary) -> None:
    """The ids config.json gives the start and end tokens must be tokens of the tokenizer.

    A tokenizer smaller than the table passes the row check above; this catches the
    common mix-up of a tokenizer copied from another model.
    """
    for key, role in (("bos_token_id", "start"), ("eos_token_id", "end")):
        value = config.get(key)
        ids = value if isinstance(value, list) else [value]
        for token_id in ids:
            if isinstance(token_id, int) and not 0 <= token_id < vocabulary.size:
                raise TokenizerMismatchError(
                    f"config.json says the {role}-of-text token is id {token_id:,}, but the tokenizer "
                    f"has only {vocabulary.size:,} tokens: the tokenizer belongs to another model."
                )


def count_model_weights(
    entries: dict[str, TensorEntry], config: dict[str, object], token_entry: TensorEntry
) -> int:
    """Learned weights in the checkpoint: buffers skipped, a tied output head counted once."""
    tied = bool(config.get("tie_word_embeddings", True))
    total = 0
    for name, entry in entries.items():
        if entry.dtype not in FLOAT_DTYPES or _named(name, BUFFER_NAMES):
            continue
        if tied and _named(name, TIED_HEAD_NAMES) and entry.shape == token_entry.shape:
            continue
        total += entry.numel
    return total


def _named(name: str, suffixes: tuple[str, ...]) -> bool:
    """True when ``name`` is one of ``suffixes`` or ends in "." + one (c_attn.bias is no attn.bias)."""
    return any(name == s or name.endswith("." + s) for s in suffixes)


def _read_config(folder: Path) -> dict[str, object]:
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise TableNotFoundError(f"{folder} has no config.json; it does not look like a model folder.")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbedExplorerError(f"{config_file} cannot be read: {exc}") from exc
    if not isinstance(config, dict):
        raise EmbedExplorerError(f"{config_file} is not a JSON object.")
    # Encoder-decoder and multimodal configs keep the language model's settings inside.
    text_config = config.get("text_config")
    return text_config if isinstance(text_config, dict) else config


def _find_tensor(
    entries: dict[str, TensorEntry], suffixes: tuple[str, ...], width: int | None = None
) -> TensorEntry | None:
    for suffix in suffixes:
        matches = [
            e
            for n, e in entries.items()
            if _named(n, (suffix,))
            and len(e.shape) == 2
            and e.dtype in FLOAT_DTYPES
            and (width is None or e.shape[1] == width)
        ]
        if matches:
            return min(matches, key=lambda e: len(e.name))
    return None


def _find_token_table(entries: dict[str, TensorEntry], config: dict[str, object]) -> TensorEntry:
    found = _find_tensor(entries, TOKEN_TABLE_NAMES)
    if found is not None:
        return found
    vocab_size = config.get("vocab_size")
    guesses = [
        e
        for n, e in entries.items()
        if "embed" in n and len(e.shape) == 2 and e.dtype in FLOAT_DTYPES and e.shape[0] == vocab_size
    ]
    if guesses:
        return min(guesses, key=lambda e: len(e.name))
    raise TableNotFoundError(
        "No token embedding table was found in the weights (looked for "
        + ", ".join(TOKEN_TABLE_NAMES[:3])
        + ", ...)."
    )


def _position_note(entry: TensorEntry | None, config: dict[str, object]) -> str:
    if entry is not None:
        return f"learned position table with {entry.shape[0]:,} rows"
    kind = str(config.get("position_embedding_type", ""))
    if "rope_theta" in config or "rope_scaling" in config or "rotary" in kind:
        return "no position table: the model marks positions by rotating rows (rotary embeddings)"
    if "alibi" in kind or config.get("model_type") in {"bloom", "mpt"}:
        return "no position table: the model marks positions with attention biases (ALiBi)"
    return "no position table in the weights: the model marks positions another way"
