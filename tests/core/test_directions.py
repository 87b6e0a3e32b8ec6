"""Directions against plain numpy: every row's score, the two ends, the percentiles, the baseline, the best number.

The oracle is a float64 numpy computation from the table's own stored numbers:
unit rows, d = mean unit(B) - mean unit(A), scores = unit @ d / |d|.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from embedexplorer import open_table
from embedexplorer.core.common import cache
from embedexplorer.core.common.errors import QueryError
from embedexplorer.core.directions.baseline import RandomScores, random_directions
from embedexplorer.core.directions.coordinates import CoordinateSpread
from embedexplorer.core.directions.direction import (
    DEFAULT_PAIRS,
    DirectionSpec,
    make_direction,
    parse_pairs,
    side_token,
)
from embedexplorer.core.directions.report import direction_report
from embedexplorer.core.directions.scores import END_SIZE, direction_scores
from embedexplorer.core.maps.direction_axes import direction_layout
from embedexplorer.core.maps.word_maps import word_map
from embedexplorer.core.maps.word_sets import matching
from embedexplorer.jobs.base import JobContext, Session
from embedexplorer.jobs.direction_jobs import DirectionRequest, score_direction

from .test_half_precision import half_folder

WORDS = ("nurse", "doctor", "actress")


def float64_rows(table) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The table's stored numbers in float64 (all of them: the oracle reads the whole table)."""
    return np.asarray(table.rows[:], dtype=np.float64)


def numpy_unit(rows: np.ndarray) -> np.ndarray:
    lengths = np.linalg.norm(rows, axis=1)
    live = np.isfinite(lengths) & (lengths > 0)
    unit = np.zeros_like(rows)
    unit[live] = rows[live] / lengths[live, None]
    return unit


def numpy_direction(unit: np.ndarray, ids_a: list[int], ids_b: list[int]) -> tuple[np.ndarray, np.ndarray]:
    difference = unit[ids_b].mean(axis=0) - unit[ids_a].mean(axis=0)
    return difference, difference / np.linalg.norm(difference)


def check_against_numpy(table, spec: DirectionSpec, words: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    report = direction_report(table, spec, words, END_SIZE)
    direction = report.direction
    ids_a, ids_b = direction.ids_a.tolist(), direction.ids_b.tolist()
    raw = float64_rows(table)
    unit = numpy_unit(raw)
    difference, vector = numpy_direction(unit, ids_a, ids_b)
    expected = unit @ vector
    # Rows holding NaN or infinity, or all zero, point nowhere: no end, not in any statistic.
    usable = np.isfinite(raw).all(axis=1) & np.any(raw != 0, axis=1)
    scored_rows = expected[usable]

    # Every row's score, from the table's own pass.
    scores = direction_scores(table, direction.vector)
    np.testing.assert_allclose(scores, expected, atol=2e-6)

    # The ends: numpy's order, ties aside (float32 scores may swap rows within a few 1e-7).
    order = np.flatnonzero(usable)[np.argsort(-scored_rows, kind="stable")]
    top = np.array([t.id for t in report.top])
    bottom = np.array([t.id for t in report.bottom])
    assert len(top) == len(bottom) == END_SIZE
    np.testing.assert_allclose([t.score for t in report.top], expected[order[:END_SIZE]], atol=2e-6)
    np.testing.assert_allclose([t.score for t in report.bottom], expected[order[::-1][:END_SIZE]], atol=2e-6)
    assert expected[top].min() >= expected[order[END_SIZE - 1]] - 4e-6
    assert expected[bottom].max() <= expected[order[-END_SIZE]] + 4e-6
    # Rows clear of the edge by more than float32's rounding are the same rows numpy finds.
    clear_top = order[:END_SIZE][expected[order[:END_SIZE]] > expected[order[END_SIZE]] + 4e-6]
    assert set(clear_top.tolist()) <= set(top.tolist())

    # Percentiles: the share of rows below the word's score.
    for place in report.words + report.examples:
        below = np.count_nonzero(scored_rows < expected[place.query.id]) / scored_rows.size * 100
        assert place.score == pytest.approx(expected[place.query.id], abs=2e-6)
        assert place.percentile == pytest.approx(below, abs=0.02)

    # Spread: standard deviation, the gap between the ends, the separation of the examples.
    std = scored_rows.std()
    gap = np.sort(scored_rows)[-END_SIZE:].mean() - np.sort(scored_rows)[:END_SIZE].mean()
    separation = (expected[ids_b].mean() - expected[ids_a].mean()) / std
    assert report.spread.std == pytest.approx(std, rel=1e-5)
    assert report.spread.gap == pytest.approx(gap, abs=1e-5)
    assert report.spread.separation == pytest.approx(separation, rel=1e-4)
    assert report.spread.separation == pytest.approx(np.linalg.norm(difference) / std, rel=1e-4)

    # The best single number: each coordinate read as a direction (the axis e_j).
    column_std = unit.std(axis=0)
    per_coordinate = difference / column_std
    best = int(np.argmax(np.abs(per_coordinate)))
    assert report.best is not None
    assert report.best.index == best
    assert report.best.separation == pytest.approx(per_coordinate[best], rel=1e-4)
    np.testing.assert_allclose(CoordinateSpread.for_table(table).std, column_std, rtol=1e-5, atol=1e-9)

    # The baseline: the same figures for the seeded random directions, computed here by numpy.
    randoms = random_directions(table.width).astype(np.float64)
    random_scores = randoms @ unit.T
    assert report.baseline is not None and report.baseline.count == randoms.shape[0]
    for got, row in zip(report.baseline.spreads[:10], random_scores[:10], strict=False):
        sorted_row = np.sort(row)
        assert got.std == pytest.approx(row.std(), rel=1e-4)
        assert got.gap == pytest.approx(sorted_row[-END_SIZE:].mean() - sorted_row[:END_SIZE].mean(), abs=1e-5)
        assert got.separation == pytest.approx((row[ids_b].mean() - row[ids_a].mean()) / row.std(), abs=1e-3)
    summary = report.baseline_summary()
    assert summary is not None
    random_stds = random_scores.std(axis=1)
    std_figure = summary["std"]
    assert isinstance(std_figure, dict)
    assert std_figure["random_mean"] == pytest.approx(random_stds.mean(), rel=1e-4)
    assert std_figure["random_at_least_as_large"] == np.count_nonzero(random_stds >= std - 1e-9)


def test_minilm_he_she_against_numpy(minilm_table) -> None:  # type: ignore[no-untyped-def]
    check_against_numpy(minilm_table, DirectionSpec(pairs=DEFAULT_PAIRS), WORDS)


def test_minilm_groups_against_numpy(minilm_table) -> None:  # type: ignore[no-untyped-def]
    spec = DirectionSpec(groups=(("monday", "tuesday", "friday"), ("january", "march", "july", "october")))
    check_against_numpy(minilm_table, spec, ("week", "month", "sunday"))


@pytest.mark.slow
def test_gpt2_fixture_against_numpy(gpt2_table) -> None:  # type: ignore[no-untyped-def]
    # GPT-2's byte-level vocabulary: "he" means " he", the word inside a sentence.
    check_against_numpy(gpt2_table, DirectionSpec(pairs=DEFAULT_PAIRS), ("nurse", " Paris"))
    direction = make_direction(gpt2_table, DirectionSpec(pairs=(("he", "she"),)))
    assert [q.id for q in direction.side_a] == gpt2_table.vocabulary.encode(" he")
    # A word of several tokens: the first piece of the word inside a sentence answers, and says so.
    several = make_direction(gpt2_table, DirectionSpec(pairs=(("kingfisherz", "queen"),)))
    assert several.side_a[0].id == gpt2_table.vocabulary.encode(" kingfisherz")[0]
    assert "the first, _king, answers for it" in several.notes[0]


def test_bfloat16_table_read_as_stored(tmp_path: Path) -> None:
    """A bfloat16 table is scored from its stored 16-bit rows (the C scan), as numpy scores its numbers."""
    folder, _ = half_folder(tmp_path / "model", torch.bfloat16)
    table = open_table(str(folder))
    try:
        assert table.stored
        check_against_numpy(table, DirectionSpec(pairs=(("he", "she"), ("king", "queen"))), ("nurse",))
        measured = RandomScores.for_table(table).scores, CoordinateSpread.for_table(table).std
    finally:
        table.close()
    # The next open of the same file reads both from the disk cache instead of another pass.
    again = open_table(str(folder))
    try:
        kept = RandomScores.for_table(again).scores, CoordinateSpread.for_table(again).std
        for before, after in zip(measured, kept, strict=True):
            np.testing.assert_array_equal(before, after)
        assert list(cache.cache_dir().glob("*.random-100-0")) and list(cache.cache_dir().glob("*.coordinate-std"))
    finally:
        again.close()


def test_the_ends_of_he_she_on_minilm_are_gendered(minilm_table) -> None:  # type: ignore[no-untyped-def]
    report = direction_report(minilm_table, DirectionSpec(pairs=DEFAULT_PAIRS), k=5, baseline=False)
    assert {"she", "woman", "her"} <= {t.token for t in report.top}
    assert {"he", "man", "his"} <= {t.token for t in report.bottom}


def test_bad_input_is_one_sentence(minilm_table) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QueryError, match="pair of the same word"):
        make_direction(minilm_table, DirectionSpec(pairs=(("he", "she"), ("king", "king"))))
    with pytest.raises(QueryError, match="not in the vocabulary"):
        side_token(minilm_table, "\U0001f99c")  # a parrot: [UNK] in MiniLM's WordPiece
    with pytest.raises(QueryError, match="is not a pair"):
        parse_pairs("he->she, king")
    with pytest.raises(QueryError, match="same tokens"):
        make_direction(minilm_table, DirectionSpec(groups=(("he", "she"), ("she", "he"))))
    # A word of several tokens: its first piece answers, and the note says which.
    direction = make_direction(minilm_table, DirectionSpec(pairs=(("he", "she"), ("kingfisherz", "queen"))))
    assert any("kingfisherz" in note and "answers for it" in note for note in direction.notes)
    first_piece = minilm_table.encode("kingfisherz")[0].id
    assert direction.side_a[1].id == first_piece


def test_random_baseline_is_seeded_and_kept(minilm_table) -> None:  # type: ignore[no-untyped-def]
    first = random_directions(minilm_table.width)
    np.testing.assert_array_equal(first, random_directions(minilm_table.width))
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-6)
    assert RandomScores.for_table(minilm_table) is RandomScores.for_table(minilm_table)


def test_job_answers_as_the_engine(minilm_table) -> None:  # type: ignore[no-untyped-def]
    session = Session()
    session.replace_table(minilm_table)
    spec = DirectionSpec(pairs=DEFAULT_PAIRS)
    report = score_direction(JobContext(session), DirectionRequest(spec, WORDS, 7))
    engine = direction_report(minilm_table, spec, WORDS, 7)
    assert [t.id for t in report.top] == [t.id for t in engine.top]
    assert [w.percentile for w in report.words] == [w.percentile for w in engine.words]


def test_map_on_two_directions_against_numpy(minilm_table) -> None:  # type: ignore[no-untyped-def]
    x = make_direction(minilm_table, DirectionSpec(pairs=(("he", "she"),)))
    y = make_direction(minilm_table, DirectionSpec(pairs=(("man", "king"), ("woman", "queen"))))
    words = matching(minilm_table, r"^(he|she|king|queen|man|woman|boy|girl)$")
    drawn = word_map(minilm_table, words, None, layout_of=lambda rows: direction_layout(rows, x, y))
    unit = numpy_unit(np.asarray(minilm_table.rows[words.ids], dtype=np.float64))
    _, vx = numpy_direction(numpy_unit(float64_rows(minilm_table)), x.ids_a.tolist(), x.ids_b.tolist())
    _, vy = numpy_direction(numpy_unit(float64_rows(minilm_table)), y.ids_a.tolist(), y.ids_b.tolist())
    np.testing.assert_allclose(drawn.coords, np.stack([unit @ vx, unit @ vy], axis=1), atol=1e-6)
    assert drawn.layout.axis_titles == ("cosine with he\u2192she", "cosine with man\u2192king, woman\u2192queen")
    she = drawn.labels.index("she")
    assert drawn.coords[she, 0] > 0 > drawn.coords[drawn.labels.index("he"), 0]
