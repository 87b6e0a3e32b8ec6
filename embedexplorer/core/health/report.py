"""A table's health as one object: the score and indicators of every token, ranked, and its plain forms.

The JSON form is what ``embedexplorer health --json`` prints and the window exports; the
CSV form's cells are neutralised (``common.csv_cells.csv_cell``) before they are written.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .repeat_check import RepeatCheck
from .scoring import REASONS, RULE

# Indicators every token carries, by name, in the order tables show them.
INDICATOR_NAMES = (
    "length", "length_z", "cosine", "cosine_z", "head_length", "head_cosine", "head_cosine_z", "partner",
)  # fmt: skip


@dataclass
class HealthReport:
    """Every token's score, reasons and indicators; ``order`` ranks the ids, most suspicious first."""

    model: str
    tokens: Sequence[str]  # each token as the app shows it (plain text, invisible characters spelled out)
    score: np.ndarray
    threshold: float
    flags: dict[str, np.ndarray]  # reason -> bool per token
    indicators: dict[str, np.ndarray]  # name -> float per token (NaN where not computed)
    reference_count: int
    has_head: bool
    notes: list[str] = field(default_factory=list)
    # Where the report came from, for exports: model, source, table file and its SHA-256, storage, shape, app.
    provenance: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Highest score first; ties keep id order, so the ranking is the same every run.
        self.order = np.lexsort((np.arange(self.score.size), -self.score))

    @property
    def size(self) -> int:
        return int(self.score.size)

    @property
    def flagged(self) -> np.ndarray:
        return self.score >= self.threshold

    def reasons_of(self, token_id: int) -> list[str]:
        return [name for name in REASONS if name in self.flags and bool(self.flags[name][token_id])]

    def counts(self) -> dict[str, int]:
        """How many tokens carry each reason."""
        return {name: int(self.flags[name].sum()) for name in REASONS if name in self.flags}

    def top(self, count: int) -> np.ndarray:
        """The ``count`` most suspicious ids (every id when ``count`` is at least the vocabulary's size)."""
        return self.order[: max(0, int(count))]

    def summary(self) -> dict[str, object]:
        return {
            "tokens": self.size,
            "flagged": int(self.flagged.sum()),
            "threshold": self.threshold,
            "rule": RULE,
            "reference_tokens": self.reference_count,
            "output_head": self.has_head,
            "reasons": self.counts(),
            "notes": list(self.notes),
        }

    def token_entry(self, token_id: int) -> dict[str, object]:
        indicators: dict[str, float | int | None] = {
            name: _plain(self.indicators[name][token_id]) for name in INDICATOR_NAMES if name in self.indicators
        }
        partner = indicators.get("partner")
        if partner is not None:
            indicators["partner"] = int(partner)
        return {
            "id": int(token_id),
            "token": str(self.tokens[token_id]),
            "score": _plain(self.score[token_id]),
            "reasons": self.reasons_of(token_id),
            "indicators": indicators,
        }

    def as_json(self, top: int, repeat: RepeatCheck | None = None) -> dict[str, object]:
        """``{"model", "summary", "tokens": [...]}``, the ``top`` most suspicious tokens first.

        With ``repeat`` (the check with the model), every entry has ``repeat_probability`` (null where
        the token was not checked) and the summary says what was asked, or why nothing was."""
        summary = self.summary()
        tokens = [self.token_entry(int(i)) for i in self.top(top)]
        if repeat is not None:
            summary["repeat_check"] = repeat.summary()
            found = repeat.by_id
            for entry in tokens:
                entry["repeat_probability"] = found.get(int(str(entry["id"])))
        return {"model": self.model, "summary": summary, "tokens": tokens}

    def table_rows(self, top: int, repeat: RepeatCheck | None = None) -> list[list[str]]:
        """Rank, id, token, score, reasons and indicators as text, for a CSV file or a terminal table
        (and the repeat probability last, with ``repeat``; empty where not checked)."""
        found = {} if repeat is None else repeat.by_id
        rows = []
        for rank, token_id in enumerate(self.top(top), start=1):
            entry = self.token_entry(int(token_id))
            values = entry["indicators"]
            assert isinstance(values, dict)
            rows.append(
                [str(rank), str(entry["id"]), str(entry["token"]), _text(entry["score"]), " ".join(entry["reasons"])]  # type: ignore[arg-type]
                + [_text(values.get(name)) for name in INDICATOR_NAMES if name in self.indicators]
                + ([_text(found.get(int(token_id)))] if repeat is not None else [])
            )
        return rows

    def table_header(self, repeat: RepeatCheck | None = None) -> list[str]:
        names = [n for n in INDICATOR_NAMES if n in self.indicators]
        return ["rank", "id", "token", "score", "reasons", *names, *(["repeat_p"] if repeat is not None else [])]


def _plain(value: object) -> float | None:
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) or math.isinf(number) else round(number, 6)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
