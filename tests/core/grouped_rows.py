"""Rows and float64 answers shared by the tests of the quantised scans (the oracle is gguf's ``dequantize``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gguf.constants import GGMLQuantizationType as Q
from gguf.quants import dequantize

from embedexplorer import open_table

from ..gguf_fixture import float64_top_k, write_gguf


def zero_ids(count: int) -> list[int]:
    """The rows ``varied_rows`` leaves all zero: the middle one, and the first and last of larger tables."""
    return [count // 2] if count < 15 else [0, count // 2, count - 1]


def varied_rows(count: int, width: int, seed: int, shifted: bool = False) -> np.ndarray:
    """Random rows of lengths 0.3 to 3 with a few all zero (``zero_ids``); ``shifted`` moves each row by its own
    offset too (so the mins of Q4_1 and Q5_1 matter)."""
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((count, width)).astype(np.float32)
    if shifted:
        rows += rng.uniform(-1.5, 1.5, (count, 1)).astype(np.float32)
    rows *= np.exp(rng.uniform(-1.2, 1.1, (count, 1))).astype(np.float32)
    rows[zero_ids(count)] = 0.0
    return rows


def exact_cosines(numbers: np.ndarray, lengths: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's cosine with ``query`` times |query| in float64, 0 for rows pointing nowhere."""
    live = np.isfinite(lengths) & (lengths > 0)
    with np.errstate(invalid="ignore", over="ignore"):
        dots = np.where(live[:, None], numbers, 0.0) @ query.astype(np.float64)
    return np.where(live, dots / np.where(live, lengths, 1.0), 0.0)


def assert_within_the_bound_at_any_scale(screen: Any, numbers: np.ndarray, query: np.ndarray, count: int) -> None:
    """``screen``'s scores of ``query`` are within its bound of the float64 ones, and stay so for queries far
    from 1 and very uneven (other powers of two for the runs' steps); all-zero rows score 0."""
    scores = screen.scores(query)
    error = np.abs(scores - exact_cosines(numbers, screen.lengths, query)).max()
    assert 0 < error <= screen.error_bound(float(np.linalg.norm(query.astype(np.float64))))
    assert (scores[zero_ids(count)] == 0).all()  # all-zero rows point nowhere
    for size in (1e-20, 1e20):
        far = query * np.float32(size)
        far[:32] *= np.float32(1e-6)
        error = np.abs(screen.scores(far) - exact_cosines(numbers, screen.lengths, far)).max()
        assert error <= screen.error_bound(float(np.linalg.norm(far.astype(np.float64))))


def assert_gpt2_rows_answer_as_float64(
    folder: Path, gpt2_table: Any, qtype: Q, quantise: Callable[[np.ndarray], np.ndarray]
) -> None:
    """GPT-2's first 20,003 rows (1,250 groups and 3 rows, two of them zero) as ``quantise`` stores them answer
    as a float64 search over gguf's numbers, at the first query (the blocks as stored) and the later ones (their
    copy sixteen rows at a time), for a token and for a vector."""
    rows = np.array(gpt2_table.rows[:20_003], dtype=np.float32)
    rows[[5, 20_002]] = 0.0
    stored = quantise(rows)
    numbers = dequantize(stored, qtype).astype(np.float64)
    table = open_table(str(write_gguf(folder / f"gpt2-{qtype.name.lower()}.gguf", stored, qtype)))
    try:
        for token_id in (1000, 0, 20_001, 19_999):
            ids, cosines = float64_top_k(numbers, numbers[token_id], 11, (token_id,))
            # The first answer reads the blocks as stored, the later ones the groups (another k: not remembered).
            for k in (10, 11):
                result = table.neighbours(token_id, k=k)
                assert [n.id for n in result.neighbours] == ids[:k]
                np.testing.assert_allclose([n.cosine for n in result.neighbours], cosines[:k], rtol=0, atol=1e-6)
        assert table.screen.groups is not None
        assert "sixteen rows at a time" in table.search_method()
        vector = numbers[7] + 0.02 * np.random.default_rng(3).standard_normal(768)
        ids, _ = float64_top_k(numbers, vector, 10, ())
        assert [n.id for n in table.neighbours_of_vector(vector.astype(np.float32), k=10).neighbours] == ids
        assert not {5, 20_002} & {n.id for n in table.neighbours(3, k=50).neighbours}
    finally:
        table.close()
