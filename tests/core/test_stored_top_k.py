"""A quantised table's candidates picked, scored exactly and ordered in one C call (``quants_top.h``) give the
answer the step-by-step search gives: the same ids in the same order, the same float32 cosines bit for bit.

The tables hold exact ties (copies of a row, which only the order by id can settle), near ties (a copy with one
stored number moved by a step: below the first pass's bound), rows of zeros (pointing nowhere) and, for the
grid and ternary types, random blocks; each query is put with k from 1 to 300 and with 0, 1 or 3 rows left out,
in every build of the scan this CPU runs. The answers themselves are held to a float64 search over gguf's
dequantised numbers by test_quantised_scan and test_iq_grid_groups, which now go through this call.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer import open_table
from embedexplorer.core.search import neighbours as nb

from ..gguf_fixture import random_blocks, write_gguf
from .test_quantised_scan import COPIES, ORIGINAL, ROWS, WIDTH, near_tie_blocks

pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")

TYPES = [Q.Q8_0, Q.Q4_K, Q.Q6_K, Q.IQ2_XXS, Q.IQ1_S, Q.TQ1_0]
ZEROS = (200, 201, 202)


def stored_rows(qtype: Q) -> np.ndarray:
    if qtype in (Q.Q8_0, Q.Q4_K, Q.Q6_K):
        stored = near_tie_blocks(qtype, seed=int(qtype))
    else:
        stored = random_blocks(ROWS, WIDTH, qtype, np.random.default_rng(int(qtype)), (0.002, 0.05))
        for copy in COPIES:
            stored[copy] = stored[ORIGINAL]
    stored[list(ZEROS)] = 0  # every scale 0: rows of zeros
    return stored


@pytest.mark.parametrize("qtype", TYPES, ids=[t.name for t in TYPES])
def test_one_call_answers_as_the_steps_do(qtype: Q, build: str, tmp_path: Path) -> None:
    table = open_table(str(write_gguf(tmp_path / f"{qtype.name}.gguf", stored_rows(qtype), qtype)))
    try:
        rows, screen = table.rows, table.stored_screen
        unit = np.asarray(table.unit[[ORIGINAL, 7, 901]], dtype=np.float32)
        queries = [*unit, np.random.default_rng(3).standard_normal(WIDTH).astype(np.float32)]
        passes = (rows.shape[0], screen.scores, screen.error_bound, partial(screen.exact_scores, rows))
        fused = partial(screen.best_of, rows)
        ties_seen = False
        for query in queries:
            for k in (1, 3, 12, 300):
                for exclude in ((), (ORIGINAL,), (7, COPIES[0], 2999)):
                    count, first, bound, exact = passes
                    steps = nb.search(count, query, k, exclude, first, bound, exact)
                    one = nb.search(count, query, k, exclude, first, bound, exact, fused)
                    np.testing.assert_array_equal(one[0], steps[0])
                    assert one[1].dtype == steps[1].dtype == np.float32
                    assert one[1].tobytes() == steps[1].tobytes()
                    ties_seen |= {ORIGINAL, *COPIES} <= set(one[0].tolist())
        assert ties_seen  # the copies' exact ties were among the answers, ordered by id
        # The one call ran where the first pass reads the blocks (a build without VNNI scans the grid and ternary
        # types' bfloat16 copy, whose candidates go step by step), and a score that is NaN sends it to the steps.
        scores = screen.scores(queries[1])
        ran = screen.best_of(rows, scores, 5, 0.01, queries[1].astype(np.float64))
        assert (ran is not None) == screen.quantised
        scores[11] = np.nan
        assert screen.best_of(rows, scores, 5, 0.01, queries[1].astype(np.float64)) is None
    finally:
        table.close()


def test_the_ids_kept_on_the_way_fit_in_their_room(tmp_path: Path) -> None:
    """The one call keeps room for a few thousand ids: scores that rise row after row (each the best so far when
    read) make it drop the ids left below the bar and still find the steps' answer; six thousand scores within
    the window of the k-th best do not fit, and the steps decide."""
    count, width = 6000, 256
    stored = random_blocks(count, width, Q.IQ2_XXS, np.random.default_rng(9), (0.002, 0.05))
    table = open_table(str(write_gguf(tmp_path / "rising.gguf", stored, Q.IQ2_XXS)))
    try:
        rows, screen = table.rows, table.stored_screen
        if not screen.quantised:
            pytest.skip("this CPU scans IQ2_XXS through a bfloat16 copy (no VNNI): no one call")
        query = np.asarray(table.unit[5], dtype=np.float64)
        for k, window in ((1, 0.0), (10, 2e-3), (1000, 0.05)):
            rising = np.linspace(-1.0, 1.0, count, dtype=np.float32)
            candidates = nb._candidates(rising, k, window / 2)
            values = screen.exact_scores(rows, candidates, query)
            order = np.lexsort((candidates, -values))[:k]
            found = screen.best_of(rows, rising, k, window, query)
            assert found is not None
            np.testing.assert_array_equal(found[0], candidates[order])
            assert found[1].tobytes() == values[order].tobytes()
        flat = np.full(count, 0.25, dtype=np.float32)
        assert screen.best_of(rows, flat, 10, 1e-3, query) is None
    finally:
        table.close()
