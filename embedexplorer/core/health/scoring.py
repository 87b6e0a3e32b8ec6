"""One score per token from the indicators, by a rule written down once.

Each continuous indicator becomes a robust z-score: how many robust standard deviations
(1.4826 x the median absolute deviation) a row sits from the table's median, in the
direction that means untrained:

* ``like-unreachable``: the row's cosine to the mean of the unreachable tokens' rows,
  after removing the table's first principal component (Land & Bartolo 2024), high;
  from the input table and, where the model has its own, the output head;
* ``short``: the logarithm of the row's length, low.

score = the largest of these z-scores; a row that equals another row (exactly, or at a
cosine of at least 0.999) scores at least the threshold; a row that is not finite or is
all zeros scores ``BROKEN``. A token is flagged when its score reaches ``THRESHOLD``
(4: a normal distribution puts 3 in 100,000 rows that far out on one side, so a table of
random rows flags next to none). The tokenizer's findings (unreachable, partial UTF-8,
special, byte) are reasons shown beside the score; they choose the reference rows but
add nothing to the score, so the ranking is the rows' own evidence.
"""

from __future__ import annotations

import numpy as np

THRESHOLD = 4.0
BROKEN = 100.0
# Reasons, in the order chips are shown: what the numbers say, then what the tokenizer says.
SCORE_REASONS = ("non-finite", "all-zero", "duplicate", "near-duplicate", "like-unreachable", "short")
TOKENIZER_REASONS = ("unreachable", "partial-utf8", "special", "byte", "tokenizer-failed", "not-checked")
REASONS = SCORE_REASONS + TOKENIZER_REASONS
RULE = (
    "score = max(robust z of the cosine to the unreachable tokens' mean without the first principal component "
    "(input table and own output head), robust z of a short row length); duplicates score at least the "
    f"threshold; non-finite or all-zero rows score {BROKEN:g}; flagged at score >= {THRESHOLD:g}"
)


def robust_z(values: np.ndarray, among: np.ndarray, high_is_bad: bool = True) -> np.ndarray:
    """(value - median) / (1.4826 MAD) over the rows in ``among``, signed so that larger means worse.

    NaN everywhere when fewer than two rows count or they do not vary (no spread to measure against).
    """
    out = np.full(values.shape, np.nan)
    picked = values[among & np.isfinite(values)]
    if picked.size < 2:
        return out
    median = float(np.median(picked))
    spread = 1.4826 * float(np.median(np.abs(picked - median)))
    if not spread > 0:
        return out
    z = (values - median) / spread
    out[:] = z if high_is_bad else -z
    out[~among] = np.nan
    return out


def combine(z_scores: list[np.ndarray], duplicate: np.ndarray, broken: np.ndarray) -> np.ndarray:
    """The score of every row by the rule above (NaN z-scores count as no evidence)."""
    stacked = np.vstack([np.where(np.isfinite(z), z, -np.inf) for z in z_scores]) if z_scores else None
    score = np.max(stacked, axis=0) if stacked is not None else np.full(broken.shape, -np.inf)
    score = np.where(np.isfinite(score), score, 0.0)
    score = np.where(duplicate, np.maximum(score, THRESHOLD), score)
    return np.where(broken, BROKEN, np.minimum(score, BROKEN))
