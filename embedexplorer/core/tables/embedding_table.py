"""EmbeddingTable: one model's token rows, unit rows, tokens and position rows.

Only the embedding tensors are read, memory-mapped by the reader that claims the
model (``readers/``); the model itself is never built, so opening GPT-2 takes a
fraction of a second.  float32 tables get a float32 unit copy; half-precision and
quantised ones are searched as stored (``stored_search``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path

import numpy as np

from ..common.errors import QueryError
from ..common.files import FileState
from ..common.progress import ProgressCallback
from ..formats.gguf_file import GGUF_ARCHITECTURE, is_gguf
from ..search import neighbours as nb
from ..search import raw_rows as raw_search
from ..search.bf16_rows import Bf16Rows, ScreenChoice, kernel_instructions, screen_for
from ..search.many_scores import vectorised
from ..search.raw_rows import RawRows
from ..search.stored_rows import StoredRows, UnitRows
from ..search.stored_search import StoredScreen, screen_for_stored
from ..text.texts import MAX_SHOWN_TOKENS, Token, TokenReport, token_report
from ..text.vocabulary import Vocabulary
from .answers import Neighbour, NeighbourResult, Query, ReadableTokens, TableFacts
from .pointing_nowhere import PointingNowhere, row_sentence

# The answer types were defined here; importers may still take them from this module.
__all__ = ["EmbeddingTable", "Neighbour", "NeighbourResult", "Query", "ReadableTokens", "TableFacts"]

ExactScores = Callable[[np.ndarray, np.ndarray], np.ndarray]
# How many looked-up words each table remembers.
QUERY_MEMORY = 4096
# How many neighbour answers each table remembers.
ANSWER_MEMORY = 64
# Largest bfloat16 copy of the unit rows made for searches of several vectors (GPT-2 small's is 77 MB).
_MANY_SCREEN_UP_TO = 1 << 30


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
    rows: np.ndarray | StoredRows
    vocabulary: Vocabulary
    model_weights: int
    dtype: str = "F32"
    positions: np.ndarray | StoredRows | None = None
    position_note: str = ""
    folder: Path | None = None
    config: dict[str, object] = field(default_factory=dict)
    # The memory-mapped files, as they were when opened: see check_files().
    mapped_files: tuple[FileState, ...] = ()
    # Where it came from ("bundled", "folder", "file", "ollama", "hub"; "" when built by hand): exports say so.
    source_kind: str = ""
    # Words already looked up, as gensim keeps key_to_index: a repeated query skips the tokenizer.
    _queries: dict[str, Query] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Neighbour searches run so far: a float32 table chooses its first pass when the second comes.
    _searches: int = field(default=0, init=False, repr=False, compare=False)
    # The last few neighbour answers: the list and the map ask for the same token's neighbours,
    # and the search runs once for both.
    _answers: dict[tuple[int, int], NeighbourResult] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def close(self) -> None:
        """Let go of what the table holds outside this process (a tokenizer process)."""
        self.vocabulary.close()

    @property
    def from_gguf(self) -> bool:
        """True when the table was read from a GGUF file (whose layers this program does not run)."""
        return GGUF_ARCHITECTURE in self.config

    @property
    def gguf_file(self) -> Path | None:
        """The GGUF file the table was read from (the part holding it, for a split model), or None."""
        return next((state.path for state in self.mapped_files if is_gguf(state.path)), None)

    def check_files(self) -> None:
        """Raise FileChangedError if a memory-mapped file changed since the table was opened.

        Called before rows are read from the map: a file truncated by another program
        would otherwise end the process (SIGBUS) on the next read past its new end.
        """
        for state in self.mapped_files:
            state.check()

    # ----- derived tables, computed once -------------------------------------------------
    @property
    def stored(self) -> bool:
        """True when the rows stay as the file stores them (half precision, quantised)."""
        return isinstance(self.rows, StoredRows)

    @cached_property
    def unit(self) -> np.ndarray | UnitRows:
        """Rows scaled to length 1, so a cosine is a dot product.

        A float32 table gets a float32 copy; a stored table a view that scales the
        rows it is asked for, from the first pass's lengths (no copy of the table).
        """
        if isinstance(self.rows, StoredRows):
            return UnitRows(self.rows, self.stored_screen)
        return nb.unit_rows(self.rows)

    @cached_property
    def screen(self) -> Bf16Rows | StoredScreen | None:
        """The first pass of a query: a stored table's own 16-bit rows, or for a float32
        table its unit rows in bfloat16 when that is faster here (else None)."""
        if isinstance(self.rows, StoredRows):
            return self.stored_screen
        return screen_for(self._unit32)

    @cached_property
    def raw_rows(self) -> RawRows:
        """A float32 table's rows with their lengths: the exact scores of its searches (one read to make)."""
        assert not isinstance(self.rows, StoredRows)
        self.check_files()  # a file cut short since it opened is named, not a SIGBUS
        return RawRows(self.rows)

    @cached_property
    def stored_screen(self) -> StoredScreen:
        """A stored table's first pass (rows and reciprocal lengths); ``prepare`` builds it with progress."""
        assert isinstance(self.rows, StoredRows)
        return screen_for_stored(self.rows)

    @cached_property
    def pointing_nowhere(self) -> PointingNowhere:
        """The rows holding NaN or infinity and the all-zero rows (see ``pointing_nowhere``)."""
        if isinstance(self.rows, StoredRows):
            return PointingNowhere.from_lengths(self.stored_screen.lengths)
        # The lengths the first search reads anyway: one pass over the table serves both.
        return PointingNowhere.from_lengths(self.raw_rows.lengths)

    @cached_property
    def many_screen(self) -> Bf16Rows | None:
        """bfloat16 unit rows for searching several vectors in one pass (a token after each layer), or None.

        Several queries read the rows once, so halving the bytes read pays even where a
        single query's bfloat16 scan lost to BLAS: on GPT-2's table one query takes 9 ms
        instead of 14 ms, three take 11 ms instead of 19 ms (one core). A table whose
        bfloat16 copy would be larger than ``_MANY_SCREEN_UP_TO`` searches its float32 rows.
        """
        screen = self.screen
        if isinstance(screen, Bf16Rows):
            return screen
        unit = self._unit32
        if not vectorised() or unit.size * 2 > _MANY_SCREEN_UP_TO or unit.size == 0:
            return None
        return Bf16Rows(unit)

    def prepare(self, progress: ProgressCallback | None = None) -> None:
        """Do now, with progress, what the first query would otherwise wait for.

        Not the baseline cosine: no neighbour query needs it, and it reads 20,000 rows
        (nearly a second for a 152,064-row bfloat16 table on a busy machine); it is
        computed when first asked for (the window's load asks at once).
        """
        if isinstance(self.rows, StoredRows) and "stored_screen" not in self.__dict__:
            self.__dict__["stored_screen"] = screen_for_stored(self.rows, progress)
        _ = self.screen, self.tokens

    @property
    def _unit32(self) -> np.ndarray:
        unit = self.unit
        assert isinstance(unit, np.ndarray)
        return unit

    def search_method(self) -> str:
        """How a neighbour query reads this table here, in a sentence (for ``info``)."""
        screen = self.screen if self.stored else self._screen_choice.screen
        if isinstance(screen, StoredScreen):
            what = "its rows as stored" if screen.rounding == 0 else f"bfloat16 roundings of its {self.dtype} rows"
            what = f"its {self.dtype} blocks as stored" if screen.quantised else what
            if screen.groups_at_open:
                what = f"a copy of its {self.dtype} blocks sixteen rows at a time, made at open"
            elif screen.groups is not None:
                what += " (from the second query on, a copy of them sixteen rows at a time)"
            if screen.query_in_bytes:
                what += ", against the query in single bytes"
            elif screen.query_in_bf16:
                what += ", against the query in bfloat16"
            first = f"one pass over {what}, each score scaled by the row's stored reciprocal length"
        elif screen is None:
            first = "one float32 pass over the unit rows"
        else:
            first = f"one bfloat16 pass over the unit rows ({kernel_instructions()} build, half the bytes)"
        return f"{first}, then exact scores for every row that could be among the best"

    def memory_bytes(self) -> int:
        """Bytes this table's rows and first pass take, mapped or copied (what ``info`` reports)."""
        rows = self.rows.nbytes
        if isinstance(self.rows, StoredRows):
            screen = self.stored_screen
            own_bits = screen.bits is self.rows.raw
            own = screen.scale.nbytes + screen.lengths.nbytes + screen.groups_bytes
            return int(rows + own + (0 if own_bits else screen.bits.nbytes))
        total = rows + self._unit32.nbytes
        screens = {id(s): s for s in (self.screen, self.__dict__.get("many_screen")) if isinstance(s, Bf16Rows)}
        return int(total + sum(s.bits.nbytes for s in screens.values()))

    @cached_property
    def tokens(self) -> ReadableTokens:
        """The readable form of every row's token ("<row N>" for rows the tokenizer never uses).

        Each is made when first asked for: a 152,000-token vocabulary took seconds to
        make readable at once, and a query shows eight of them.
        """
        return ReadableTokens(self.vocabulary, int(self.rows.shape[0]))

    @cached_property
    def baseline_cosine(self) -> float:
        """Mean cosine of random pairs of tokens, rows pointing nowhere left out; a float32 table's from its
        rows and lengths (no unit table)."""
        rows_with_tokens = min(self.vocabulary.size, self.rows.shape[0])
        left_out = self.pointing_nowhere.ids
        if isinstance(self.rows, StoredRows):
            return nb.baseline_cosine(self.unit, rows_with_tokens, left_out=left_out)  # type: ignore[arg-type]
        return raw_search.baseline_cosine(self.rows, rows_with_tokens, left_out=left_out)


    # ----- text ------------------------------------------------------------------------
    def encode(self, text: str) -> list[Token]:
        """Tokens of ``text`` exactly as the model sees it (no special tokens added)."""
        _check_text(text)
        ids = self.vocabulary.encode(text)
        self.vocabulary.prefetch(ids)  # one request to the tokenizer's process for all of them
        return [self.token(i) for i in ids]

    def tokenize(
        self, text: str, *, only_fitting: bool = True, max_shown: int | None = MAX_SHOWN_TOKENS
    ) -> TokenReport:
        """Tokens of ``text`` for display: how many there are, how many have a position row.

        Never raises for any text. At most ``texts.MAX_TEXT_CHARS`` characters are read;
        the tokens returned are those with a position row (all, when ``only_fitting`` is
        False), at most ``max_shown`` (None: no limit). The note says what was left out.
        """
        _check_text(text)
        return token_report(self, text, max_shown=max_shown, only_fitting=only_fitting)

    def token(self, token_id: int) -> Token:
        """Token ``token_id`` with its readable form and the characters it stands for."""
        return Token(int(token_id), self.tokens[token_id], self.vocabulary.text_of(token_id))

    def query(self, word: str | int) -> Query:
        """The token that answers for ``word``: an id as given, or the word's first token."""
        if isinstance(word, bool):
            raise QueryError(f"A word must be a str or a token id, not {word!r}.")
        if isinstance(word, (int, np.integer)):
            token_id = self._check_id(int(word))
            token = self.token(token_id)
            return Query(token.id, token.token, (token,))
        _check_text(word)
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
        token_id = self._check_id(token_id)
        self.check_files()
        return np.array(self.rows[token_id], dtype=np.float32)

    def rows_at(self, ids: list[int]) -> np.ndarray:
        """Copies of several rows, read from the file right after checking it has not changed."""
        self.check_files()
        return np.array(self.rows[ids], dtype=np.float32)

    def position_row(self, position: int) -> np.ndarray | None:
        """Row of the 0-based ``position``, or None when the model has no such row."""
        if self.positions is None or not 0 <= position < self.positions.shape[0]:
            return None
        self.check_files()
        return np.array(self.positions[position], dtype=np.float32)

    def _check_id(self, token_id: int) -> int:
        if not 0 <= token_id < self.rows.shape[0]:
            raise QueryError(f"Token id {token_id} is outside the table (0 to {self.rows.shape[0] - 1}).")
        return token_id

    # ----- questions -------------------------------------------------------------------
    def neighbours(self, query: str | int, k: int = 8) -> NeighbourResult:
        """The k tokens whose rows point most nearly the same way, the query itself left out."""
        k = _check_k(k)
        answer = self.query(query)
        # Stored rows are read from the mapped file during the search, and callers go on to
        # read the neighbours' raw rows (the window places them on its map).
        self.check_files()
        self._check_finite(answer)
        remembered = self._answers.get((answer.id, k))
        if remembered is not None and remembered.query == answer:
            return remembered
        ids, cosines = self._top_k(self._unit_row(answer.id), k, (answer.id,))
        result = NeighbourResult(answer, self._neighbours(ids, cosines), answer.note)
        if len(self._answers) >= ANSWER_MEMORY:
            self._answers.pop(next(iter(self._answers)), None)  # forget the oldest answer
        self._answers[(answer.id, k)] = result
        return result

    def neighbours_of_vector(
        self, vector: np.ndarray, k: int = 8, exclude: tuple[int, ...] = ()
    ) -> NeighbourResult:
        k = _check_k(k)
        try:
            vector = np.asarray(vector, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise QueryError(f"A vector to search with must be {self.width} numbers: {exc}") from exc
        if vector.shape != (self.width,):
            raise QueryError(f"A vector for this table needs {self.width} numbers, not {vector.shape}.")
        # One product finds a NaN or an infinity (float32's squares cannot overflow float64) and gives the length
        # the search needs: a numpy call fewer each, some 10 us each after the last query's scan.
        query64 = vector.astype(np.float64)
        squares = float(query64 @ query64)
        if not math.isfinite(squares):
            raise QueryError("A vector to search with must hold only finite numbers (no NaN or infinity).")
        self.check_files()
        ids, cosines = self._top_k(vector, k, exclude, (query64, math.sqrt(squares)))
        return NeighbourResult(None, self._neighbours(ids, cosines))

    def neighbours_of_vectors(self, vectors: np.ndarray, k: int = 8) -> list[NeighbourResult]:
        """``neighbours_of_vector`` for each row of ``vectors``, the table read once for all of them."""
        k = _check_k(k)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.width:
            raise QueryError(f"Vectors for this table need {self.width} numbers each, not {vectors.shape}.")
        if not np.isfinite(vectors).all():
            raise QueryError("A vector to search with must hold only finite numbers (no NaN or infinity).")
        # Tables stored in half precision have no float32 copy to read: one pass each.
        if isinstance(self.rows, StoredRows):
            return [self.neighbours_of_vector(v, k) for v in vectors]
        self.check_files()
        answers = nb.top_k_many(self._unit32, vectors, k, self.many_screen, exact=self.raw_rows.exact_scores)
        return [NeighbourResult(None, self._neighbours(ids, cosines)) for ids, cosines in answers]

    def cosine(self, a: str | int, b: str | int) -> float:
        first, second = self.query(a), self.query(b)
        self.check_files()
        self._check_finite(first, second)
        return float(self._unit_row(first.id) @ self._unit_row(second.id))

    def analogy(
        self, a: str | int, b: str | int, c: str | int, k: int = 8, include_inputs: bool = False
    ) -> NeighbourResult:
        """Tokens nearest to a - b + c (3CosAdd); the three inputs are left out unless ``include_inputs``."""
        k = _check_k(k)
        qa, qb, qc = self.query(a), self.query(b), self.query(c)
        self.check_files()
        self._check_finite(qa, qb, qc)
        vector = self._unit_row(qa.id) - self._unit_row(qb.id) + self._unit_row(qc.id)
        ids, cosines = self._top_k(vector, k, () if include_inputs else (qa.id, qb.id, qc.id))
        notes = " ".join(q.note for q in (qa, qb, qc) if q.note)
        label = f"{qa.token} - {qb.token} + {qc.token}"
        query = Query(qa.id, label, qa.pieces + qb.pieces + qc.pieces, notes)
        return NeighbourResult(query, self._neighbours(ids, cosines), notes)

    def _check_finite(self, *queries: Query) -> None:
        """A row holding infinity or NaN (a damaged file, a quantised block with such a scale) or all
        zero points nowhere: its cosines would all be 0 and its "neighbours" arbitrary, so say which row it is."""
        for query in queries:
            row = np.asarray(self.rows[query.id], dtype=np.float32)
            why = row_sentence(query.id, query.token, row, "has no neighbours or cosines")
            if why is not None:
                raise QueryError(why)

    def _unit_row(self, token_id: int) -> np.ndarray:
        """A unit row as the search takes it, in float64 from the stored numbers."""
        if isinstance(self.rows, StoredRows):
            return self.stored_screen.unit_rows(self.rows, token_id)
        if "raw_rows" in self.__dict__:
            return self.raw_rows.unit_row(token_id)
        return raw_search.unit_row(self.rows, token_id)  # a cosine reads its two rows, not the table

    def _top_k(
        self, vector: np.ndarray, k: int, exclude: Iterable[int], measured: tuple[np.ndarray, float] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The search of the table's own questions, each of which has checked the mapped files just before;
        ``measured``: ``vector`` in float64 and its length, where the caller has them (``search_bounded``)."""
        if isinstance(self.rows, StoredRows):
            bounded, stored_exact, finish, whole = self._stored_search
            return nb.search_bounded(
                self.rows.shape[0], vector, k, exclude, bounded, stored_exact, finish, whole, measured
            )
        first_pass, error_bound, exact = self.search_passes()
        return nb.search(self.rows.shape[0], vector, k, exclude, first_pass, error_bound, exact)

    @cached_property
    def _stored_search(self) -> tuple[nb.BoundedPass, ExactScores, nb.Finish, nb.WholeSearch]:
        """A stored table's first pass with its margin for each query (``StoredScreen.bounded_scores``), its exact
        scores, the call that finishes a quantised table's search (``StoredScreen.best_of``: its candidates
        picked, scored and ordered in one call) and the one that does it all (``StoredScreen.whole_search``, a
        table whose query is in bytes), made once.  The passes leave their file check out where the table's own
        check covers the file they read (a GGUF file, a safetensors file read as stored): each check is a stat
        call of a few microseconds, in a query of a few hundred."""
        assert isinstance(self.rows, StoredRows)
        screen = self.stored_screen
        checked_here = screen.cache_file is None or screen.cache_file.path in {s.path for s in self.mapped_files}
        rows = self.rows
        return (
            partial(screen.bounded_scores, check=not checked_here),
            partial(screen.exact_scores, rows),
            partial(screen.best_of, rows),
            partial(screen.whole_search, rows, check=not checked_here),
        )

    def search_passes(self) -> tuple[Callable[[np.ndarray], np.ndarray], Callable[[float], float], ExactScores]:
        """The next search's first pass, its error bound and the exact scores (float64 from the stored numbers).

        A float32 table's first search reads its rows once (times the reciprocal lengths): a
        one-shot command needs no unit table, no bfloat16 copy and no timing of passes. The
        bfloat16 pass is chosen, by timing, when a second search comes (or at once when the
        window has made it already). Every pass's bound covers the exact float64 cosines of
        the stored rows: the unit rows' own float32 rounding (2^-24) is inside each bound.
        """
        rows = self.rows
        if isinstance(rows, StoredRows):
            screen = self.stored_screen
            return screen.scores, screen.error_bound, partial(screen.exact_scores, rows)
        raw = self.raw_rows
        chosen = self._searches > 0 or "screen" in self.__dict__
        self._searches += 1
        timed = self._screen_choice.current() if chosen else None
        if timed is not None:
            return timed.scores, timed.error_bound, raw.exact_scores
        if raw.safe:
            return raw.scores, raw.error_bound, raw.exact_scores
        # Rows near float32's limits: their unit rows are the safe first pass.
        return self._unit32.__matmul__, partial(nb.float32_error_bound, self.width), raw.exact_scores

    @cached_property
    def _screen_choice(self) -> ScreenChoice:
        screen = self.screen
        return ScreenChoice(screen if isinstance(screen, Bf16Rows) else None, self._unit32)

    def _neighbours(self, ids: np.ndarray, cosines: np.ndarray) -> tuple[Neighbour, ...]:
        # tolist() converts every number in one C call instead of one numpy scalar at a time.
        listed = ids.tolist()
        self.vocabulary.prefetch(listed)
        tokens = self.tokens.many(listed)
        if len(tokens) != len(listed) or cosines.shape != (len(listed),):
            raise ValueError("one token and one cosine for each id")
        return tuple(map(Neighbour, listed, tokens, cosines.tolist()))  # map: a third quicker than a generator

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
            storage=self.storage_note(),
            memory_bytes=self.memory_bytes(),
            pointing_nowhere=self.pointing_nowhere.sentence(),
        )

    def storage_note(self) -> str:
        """The stored type in words: "F32", "BF16", or "Q4_K, dequantised" for a quantised table."""
        if isinstance(self.rows, StoredRows) and self.rows.half_kind is None:
            return f"{self.dtype}, dequantised"
        return self.dtype


def _check_text(text: object) -> None:
    """Questions take text (or a token id where the method says so): anything else is a QueryError."""
    if not isinstance(text, str):
        raise QueryError(f"A word or text must be a str, not {type(text).__name__} ({text!r:.60}).")


def _check_k(k: object) -> int:
    """A neighbour count must be a whole number of at least 1."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise QueryError(f"The number of neighbours must be a whole number of at least 1, not {k!r}.")
    return int(k)
