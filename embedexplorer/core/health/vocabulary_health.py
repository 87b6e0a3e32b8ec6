"""Vocabulary health of an open table: the indicators, the tokenizer's round trip and the score, with progress.

The round trip runs in a tokenizer process while this thread reads the rows, so the
two costs overlap; the second pass over the rows needs the unreachable tokens and waits
for it. ``progress(done, total, message)`` may raise ``Interrupted`` (the worker's Stop).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from ..common.errors import EmbedExplorerError, Interrupted, TableNotFoundError
from ..compare.output_head import output_head_table
from ..search.stored_screen import StoredScreen
from ..tables.embedding_table import EmbeddingTable
from .duplicates import find_duplicates
from .reachability import Reachability, check_reachability
from .report import HealthReport
from .row_pass import RowFacts, Rows, dot_rows, first_component, read_rows, reference_mean
from .scoring import THRESHOLD, combine, robust_z

ProgressCallback = Callable[[int, int, str], None]
_STEPS = 1000  # progress units: rows 40%, head 20%, round trip waits 15%, second pass 25%


def vocabulary_health(
    table: EmbeddingTable,
    progress: ProgressCallback | None = None,
    *,
    output_head: bool = True,
    provenance: bool = False,
) -> HealthReport:
    """Every token's health indicators and score (see ``scoring``), most suspicious first in ``order``.

    ``provenance`` also hashes the table file (once per file) for the report's exports.
    """
    report = progress or (lambda done, total, message: None)
    trip = _RoundTripThread(table)
    trip.start()
    try:
        table.check_files()
        facts = read_rows(
            table.rows, lambda d, t: report(int(400 * d / max(t, 1)), _STEPS, "Reading the rows"), _screen(table)
        )
        head = _open_head(table) if output_head else None
        head_facts = None
        if head is not None:
            head_facts = read_rows(
                head.rows,
                lambda d, t: report(400 + int(200 * d / max(t, 1)), _STEPS, "Reading the output head"),
                _screen(head),
            )
        # The first principal components do not need the tokenizer: found while it works.
        components = [_component(facts)] + ([_component(head_facts)] if head_facts is not None else [])
        while not trip.done.wait(0.2):
            report(600 + int(150 * trip.fraction), _STEPS, "Decoding and encoding every token again")
        reach = trip.result()
        report(750, _STEPS, "Comparing rows")
        health = _assemble(table, facts, head, head_facts, reach, components, report)
        health.provenance = provenance_of(table, lambda: report(990, _STEPS, "Hashing the table file"), provenance)
        return health
    finally:
        trip.stop.set()
        trip.join()


def provenance_of(table: EmbeddingTable, check: Callable[[], None], hashed: bool) -> dict[str, object]:
    """Model, source, table file (and its SHA-256 when ``hashed``), storage, shape and app, as exports write them."""
    from ... import __version__
    from ..maps.map_origin import SOURCES, table_sha256

    file_name, digest = table_sha256(table, check) if hashed else ("", "")
    rows, width = (int(n) for n in table.rows.shape)
    return {
        "app": f"EmbedExplorer {__version__}",
        "model": table.name,
        "source": SOURCES.get(table.source_kind, table.source_kind or "opened by the program that called it"),
        "table_file": file_name or (table.mapped_files[0].path.name if table.mapped_files else ""),
        "table_sha256": digest,
        "storage": table.storage_note(),
        "table": f"{rows} rows x {width} numbers",
    }


def _screen(table: EmbeddingTable) -> StoredScreen | None:
    """A stored table's first-pass screen (row lengths and the C scan), made when it opened; None otherwise."""
    return table.stored_screen if table.stored else None


def _open_head(table: EmbeddingTable) -> EmbeddingTable | None:
    try:
        return output_head_table(table)
    except TableNotFoundError:
        return None


def _assemble(
    table: EmbeddingTable,
    facts: RowFacts,
    head: EmbeddingTable | None,
    head_facts: RowFacts | None,
    reach: Reachability,
    components: list[np.ndarray | None],
    report: ProgressCallback,
) -> HealthReport:
    size = int(table.rows.shape[0])
    notes = list(reach.notes)
    broken = ~facts.finite | facts.zero
    usable = ~broken
    reference = reach.unreachable & ~reach.special & usable
    indicators: dict[str, np.ndarray] = {"length": np.where(facts.finite, facts.length, np.nan)}
    with np.errstate(divide="ignore", invalid="ignore"):
        indicators["length_z"] = robust_z(np.log(np.where(usable, facts.length, np.nan)), usable, high_is_bad=False)
    cosine = _reference_cosine(
        table.rows,
        facts,
        components[0],
        reference,
        lambda d, t: report(750 + int(125 * d / t), _STEPS, "Comparing with the unreachable"),
        _screen(table),
    )
    indicators["cosine"] = cosine
    indicators["cosine_z"] = robust_z(cosine, usable)
    z_scores = [indicators["length_z"], indicators["cosine_z"]]
    if head is not None and head_facts is not None:
        head_usable = head_facts.finite & ~head_facts.zero
        head_reference = reach.unreachable & ~reach.special & head_usable
        head_cosine = _reference_cosine(
            head.rows,
            head_facts,
            components[1],
            head_reference,
            lambda d, t: report(875 + int(75 * d / t), _STEPS, "Comparing the output head's rows"),
            _screen(head),
        )
        indicators["head_length"] = np.where(head_facts.finite, head_facts.length, np.nan)
        indicators["head_cosine"] = head_cosine
        indicators["head_cosine_z"] = robust_z(head_cosine, head_usable)
        z_scores.append(indicators["head_cosine_z"])
        broken = broken | ~head_facts.finite
    dupes = find_duplicates(
        table.rows, facts.sketch, facts.length, usable, lambda: report(960, 1000, "Looking for duplicate rows")
    )
    indicators["partner"] = np.where(dupes.partner >= 0, dupes.partner.astype(np.float64), np.nan)
    score = combine(z_scores, dupes.near, broken)
    head_z = indicators.get("head_cosine_z", np.full(size, np.nan))
    flags = {
        "non-finite": ~facts.finite,
        "all-zero": facts.zero,
        "duplicate": dupes.exact,
        "near-duplicate": dupes.near & ~dupes.exact,
        "like-unreachable": np.fmax(indicators["cosine_z"], head_z) >= THRESHOLD,
        "short": indicators["length_z"] >= THRESHOLD,
        "unreachable": reach.unreachable,
        "partial-utf8": reach.partial,
        "special": reach.special,
        "byte": reach.byte,
        "tokenizer-failed": reach.failed,
        "not-checked": reach.unchecked,
    }
    notes.extend(_bad_input_notes(size, facts, int(reference.sum())))
    return HealthReport(
        model=table.name,
        tokens=table.tokens,
        score=score,
        threshold=THRESHOLD,
        flags=flags,
        indicators=indicators,
        reference_count=int(reference.sum()),
        has_head=head is not None,
        notes=notes,
    )


def _component(facts: RowFacts) -> np.ndarray | None:
    """The table's first principal component, from the usable rows of the pass's sample; None when fewer than two."""
    usable = (facts.finite & ~facts.zero)[facts.sample_ids]
    return first_component(facts.sample[usable]) if int(usable.sum()) >= 2 else None


def _reference_cosine(
    rows: Rows,
    facts: RowFacts,
    component: np.ndarray | None,
    reference: np.ndarray,
    progress: Callable[[int, int], None],
    screen: StoredScreen | None = None,
) -> np.ndarray:
    """Each row's cosine to the mean reference row, both without the first principal component.

    The paper's recipe (Land & Bartolo 2024, ``embedding_distance_metrics``): the first
    principal component of the whole table, removed from every row; then the mean of the
    reference rows; a reference row is compared with the mean of the others (leave one out),
    so a small reference set does not find itself.
    """
    size = facts.length.size
    count = int(reference.sum())
    if count < 2 or component is None:
        return np.full(size, np.nan)
    usable = facts.finite & ~facts.zero
    reference_ids = np.flatnonzero(reference)
    # The mean of the rows without the component is the mean without the component (it is linear).
    raw_mean = reference_mean(rows, reference)
    mean = raw_mean - (raw_mean @ component) * component
    dots = dot_rows(rows, np.vstack([component, mean]), facts.finite, progress, screen)
    along, with_mean = dots[:, 0], dots[:, 1]
    residual_sq = np.maximum(facts.length**2 - along**2, 0.0)
    mean_sq = float(mean @ mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        cosine = with_mean / np.sqrt(residual_sq * mean_sq)
        # Leave one out: the mean of the other references, from the same sums.
        k = float(count)
        mine = with_mean[reference_ids]
        own_sq = residual_sq[reference_ids]
        others_dot = (k * mine - own_sq) / (k - 1)
        others_sq = (k * k * mean_sq - 2 * k * mine + own_sq) / (k - 1) ** 2
        cosine[reference_ids] = others_dot / np.sqrt(own_sq * np.maximum(others_sq, 0.0))
    cosine[~usable] = np.nan
    return np.clip(cosine, -1.0, 1.0)


def _bad_input_notes(size: int, facts: RowFacts, references: int) -> list[str]:
    notes = []
    bad = int((~facts.finite).sum())
    if size == 1:
        notes.append("A vocabulary of one token has nothing to compare its row with: only its length is shown.")
    elif bad == size:
        notes.append(
            "Every row holds a number that is not finite (NaN or infinity): the table is broken, "
            "so no row can be compared."
        )
    elif references < 2:
        notes.append(
            "Fewer than two usable tokens are unreachable, so there is no reference set: "
            "the cosine indicator is left out and the score rests on length and duplicates."
        )
    return notes


class _RoundTripThread(threading.Thread):
    """The round trip, waiting on its tokenizer process while the caller reads rows."""

    def __init__(self, table: EmbeddingTable) -> None:
        super().__init__(name="embedexplorer-round-trip", daemon=True)
        self.table = table
        self.done = threading.Event()
        self.stop = threading.Event()
        self.fraction = 0.0
        self._result: Reachability | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._result = check_reachability(self.table, self._progress)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            self._error = exc
        finally:
            self.done.set()

    def _progress(self, done: int, total: int) -> None:
        if self.stop.is_set():
            raise Interrupted("Stopped.")
        self.fraction = done / max(total, 1)

    def result(self) -> Reachability:
        if self._error is not None:
            if isinstance(self._error, EmbedExplorerError):
                raise self._error
            raise EmbedExplorerError(f"The round trip failed: {self._error}") from self._error
        assert self._result is not None
        return self._result
