"""The layers request kind as the worker runs it: the model loads once per table, a missing model is an answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedexplorer import open_table
from embedexplorer.core.common.errors import Interrupted, PlaceError
from embedexplorer.jobs.base import JobContext, Lane, Session
from embedexplorer.jobs.layer_jobs import LAYERS, MODEL_KEY, LayersRequest, run_layers
from tests.faults.test_layers_faults import table_only  # noqa: F401 - a fixture


def _context(table_spec: str) -> tuple[JobContext, list[tuple[int, int, str]]]:
    session = Session()
    session.replace_table(open_table(table_spec))
    reports: list[tuple[int, int, str]] = []
    return JobContext(session, report=lambda d, t, m: reports.append((d, t, m))), reports


def test_layers_run_in_the_long_lane_and_load_the_model_once() -> None:
    assert LAYERS.lane is Lane.LONG
    ctx, reports = _context("bundled")
    first = run_layers(ctx, LayersRequest("the river bank", 3, "my bank account", 2, k=3))
    assert first.answer is not None and first.missing is None and first.load_seconds is not None
    assert any("Loading the whole model" in m for _, _, m in reports)
    model = ctx.session.derived[MODEL_KEY]
    reports.clear()
    second = run_layers(ctx, LayersRequest("my bank account", 2, "the river bank", 3, k=3))
    assert second.answer is not None and second.load_seconds is None
    assert ctx.session.derived[MODEL_KEY] is model
    assert not any("Loading" in m for _, _, m in reports)
    # The comparison is symmetric: the same two vectors after every layer.
    assert [s.cosine_to_compare for s in second.answer.steps] == pytest.approx(
        [s.cosine_to_compare for s in first.answer.steps], abs=1e-6
    )
    ctx.session.replace_table(open_table("bundled"))
    assert MODEL_KEY not in ctx.session.derived  # a new table drops the old model


def test_a_mistake_in_the_text_is_told_before_any_model_loads() -> None:
    ctx, reports = _context("bundled")
    with pytest.raises(PlaceError):
        run_layers(ctx, LayersRequest("the river bank", 9))
    assert reports == [] and MODEL_KEY not in ctx.session.derived


def test_a_table_only_folder_answers_with_the_models_size(table_only: Path) -> None:  # noqa: F811
    ctx, _ = _context(str(table_only))
    reply = run_layers(ctx, LayersRequest("The capital of France", 2))
    assert reply.answer is None and reply.missing is not None
    assert reply.missing.model_bytes == 124_439_808 * 4
    assert reply.missing.download_id is None  # a local folder: nothing to download it from
    assert "not the whole model" in reply.missing.message


def test_a_stop_request_ends_the_load() -> None:
    session = Session()
    session.replace_table(open_table("bundled"))
    ctx = JobContext(session, stopped=lambda: True)
    with pytest.raises(Interrupted):
        run_layers(ctx, LayersRequest("the river bank", 3))
    assert MODEL_KEY not in session.derived
