"""The check with the model as the worker runs it, where the model cannot be asked: one sentence, no model loaded."""

from __future__ import annotations

from pathlib import Path

from embedexplorer import open_table
from embedexplorer.jobs.base import JobContext, Lane, Session
from embedexplorer.jobs.health_jobs import HEALTH_VERIFY, VerifyRequest, verify
from embedexplorer.jobs.layer_jobs import MODEL_KEY
from tests.faults.test_layers_faults import table_only  # noqa: F401 - a fixture
from tests.minilm_gguf import write_minilm_gguf


def _context(spec: str) -> JobContext:
    session = Session()
    session.replace_table(open_table(spec))
    return JobContext(session, report=lambda d, t, m: None)


def test_a_table_only_folder_says_the_whole_model_is_needed(table_only: Path) -> None:  # noqa: F811
    assert HEALTH_VERIFY.lane is Lane.LONG
    ctx = _context(str(table_only))
    check = verify(ctx, VerifyRequest((1, 2, 3)))
    assert check.ids == () and check.unavailable is not None
    assert "needs the whole model" in check.unavailable and "not the whole model" in check.unavailable
    ctx.session.replace_table(open_table("bundled"))  # the model's process ends with its table


def test_an_encoder_and_a_gguf_file_are_one_sentence_each(tmp_path: Path) -> None:
    ctx = _context("bundled")
    check = verify(ctx, VerifyRequest((1, 2, 3)))
    assert check.unavailable is not None and "next-token head" in check.unavailable
    assert MODEL_KEY not in ctx.session.derived  # the files said so: no model was started
    gguf = _context(str(write_minilm_gguf(tmp_path / "minilm.gguf")))
    check = verify(gguf, VerifyRequest((1,)))
    assert check.unavailable is not None and "GGUF" in check.unavailable
    assert MODEL_KEY not in gguf.session.derived
