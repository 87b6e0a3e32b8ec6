"""The model in a child process: the same answers as in one process, layer by layer, stoppable, and gone on close."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from embedexplorer.core.common.errors import Interrupted
from embedexplorer.core.layers.answers import LayerRun
from embedexplorer.core.layers.layer_model import LayerModel
from embedexplorer.core.layers.layer_process import LayerProcess
from embedexplorer.core.layers.loading import load_layer_model
from embedexplorer.core.layers.trace import trace
from embedexplorer.jobs.base import JobContext, Session
from embedexplorer.jobs.layer_jobs import LAYERS_WARM, LayersRequest, WarmRequest, model_process, run_layers

RIVER, ACCOUNT = " the river bank was steep", " my bank account"
LONG_TEXT = " the river bank was steep and the water ran fast below it" * 80  # 960 tokens


def _gone(pid: int) -> bool:
    """True once the process has ended (reaped, or a zombie nobody waits for)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture(scope="module")
def child(gpt2_folder: Path):  # type: ignore[no-untyped-def]
    process = LayerProcess()
    yield process, process.load(str(gpt2_folder), name="gpt2-fixture")
    process.close()


@pytest.fixture(scope="module")
def in_process(gpt2_folder: Path) -> LayerModel:
    return load_layer_model(gpt2_folder, name="gpt2-fixture")


def test_the_child_answers_exactly_as_the_model_in_this_process(gpt2_table, child, in_process) -> None:
    process, model = child
    assert (model.layers, model.max_positions, model.prefix, model.suffix) == (12, 1024, (), ())
    assert model.head_note == in_process.head_note and model.weights == in_process.weights
    for attempt in range(2):  # run forward, then from the child's memory of the text
        got = trace(gpt2_table, model, RIVER, 3, compare=(ACCOUNT, 2), k=5)
        want = trace(gpt2_table, in_process, RIVER, 3, compare=(ACCOUNT, 2), k=5)
        # Bit for bit: lengths, cosines, nearest rows and their cosines.
        assert got.steps == want.steps, attempt
        assert [n for n, _ in got.input.parts] == [n for n, _ in want.input.parts]
        for (_, a), (_, b) in zip(got.input.parts, want.input.parts, strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(got.input.total, want.input.total)
        assert np.array_equal(got.input.enters, want.input.enters)
        assert got.input.note == want.input.note


def test_layers_arrive_one_by_one_while_the_model_computes(gpt2_table, child) -> None:
    process, model = child
    process.forget()
    ids = [t.id for t in gpt2_table.encode(LONG_TEXT[:400])]
    # What the child sends, read as it arrives (the parent hands out whatever came in while its
    # caller was busy as one batch, so the batches alone say little on a busy machine).
    sent: list[tuple[int, ...]] = []
    inbox_get = process._inbox.get

    def watched_get(*args, **kwargs):  # type: ignore[no-untyped-def]
        frame = inbox_get(*args, **kwargs)
        if frame is not None and "layers" in frame[0]:
            sent.append(tuple(frame[0]["layers"]))
        return frame

    process._inbox.get = watched_get  # type: ignore[method-assign]
    try:
        batches = []
        for index, batch in model.layer_runs([LayerRun(tuple(ids), 5, ids[5])], None):
            assert index == 0
            if batch.layers:
                batches.append(batch.layers)
    finally:
        del process._inbox.get
    assert [layer for got in batches for layer in got] == list(range(13))
    # Streamed, not all at the end: the child sends each layer on its own as the pass computes it.
    assert sent == [(layer,) for layer in range(13)]


def test_a_stop_ends_a_long_pass_between_layers_and_the_child_moves_on(gpt2_table, child) -> None:
    process, model = child
    process.forget()
    ids = [t.id for t in gpt2_table.encode(LONG_TEXT)]
    assert len(ids) == 960
    stop_at: list[int] = []
    after_stop: list[tuple[int, ...]] = []

    def stop() -> bool:
        return bool(stop_at)

    batches = model.layer_runs([LayerRun(tuple(ids), 1, None)], stop)
    with pytest.raises(Interrupted):
        for _index, batch in batches:
            if stop_at:
                after_stop.append(batch.layers)
            if 1 in batch.layers:
                stop_at.append(max(batch.layers))
    # The caller stops at once (bench_layers times it): no layer is handed out after the stop.
    assert stop_at and not after_stop
    # The child stopped between layers: its last word on the long pass is "stopped", never "done",
    # and it comes before a short text's answer (the child answers in order). Frames about the long
    # pass are stale to the parent, which drops them: they are read here as they go by.
    stale: list[dict[str, object]] = []
    inbox_get = process._inbox.get

    def watched_get(*args, **kwargs):  # type: ignore[no-untyped-def]
        frame = inbox_get(*args, **kwargs)
        if frame is not None and not {"done", "stopped"}.isdisjoint(frame[0]):
            stale.append(frame[0])
        return frame

    process._inbox.get = watched_get  # type: ignore[method-assign]
    try:
        answer = trace(gpt2_table, model, RIVER, 3, k=2)
    finally:
        del process._inbox.get
    assert len(answer.steps) == 13
    long_pass = [m for m in stale if m.get("id") != stale[-1].get("id")]
    assert [m.get("stopped") for m in long_pass] == [True], stale


def test_the_job_runs_in_the_child_and_the_process_ends_with_its_table(gpt2_table, gpt2_folder) -> None:
    session = Session()
    from embedexplorer import open_table

    session.replace_table(open_table(str(gpt2_folder)))
    ctx = JobContext(session)
    assert LAYERS_WARM.run(ctx, WarmRequest()).started
    assert not LAYERS_WARM.run(ctx, WarmRequest()).started  # one process per table
    process = model_process(session)
    pid = process.pid
    assert pid is not None and process.warm.wait(120)
    reply = run_layers(ctx, LayersRequest(RIVER, 3, k=2))
    assert reply.answer is not None and reply.load_seconds is not None
    session.replace_table(open_table(str(gpt2_folder)))  # another table: its model's process goes
    assert _gone(pid)


NO_TORCH_HERE = """
import sys
from embedexplorer import open_table
from embedexplorer.jobs.base import JobContext, Session
from embedexplorer.jobs.layer_jobs import LayersRequest, run_layers
session = Session()
session.replace_table(open_table("bundled"))
reply = run_layers(JobContext(session), LayersRequest("the river bank", 3, "my bank account", 2, k=3))
assert reply.answer is not None and len(reply.answer.steps) == 7
session.replace_table(None)
print(sorted(m for m in ("torch", "transformers", "safetensors.torch") if m in sys.modules))
"""


def test_the_callers_process_never_imports_torch_or_transformers() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_TORCH_HERE], capture_output=True, text=True, timeout=600, env=os.environ.copy()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_child_leaves_nothing_in_the_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch._dynamo, imported with transformers' models, makes its cache folder as it loads; that folder
    (torchinductor_<user>) stayed in the user's temporary folder after the app had closed."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setenv("EMBEDEXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    process = LayerProcess()
    try:
        assert process.warm.wait(180)  # the child has imported torch and transformers' models
    finally:
        process.close()
    assert list(scratch.iterdir()) == []
    assert (tmp_path / "cache" / "torch").is_dir()  # where torch's folder went instead


def test_close_ends_the_child_even_in_the_middle_of_a_pass(gpt2_table, gpt2_folder) -> None:
    process = LayerProcess()
    model = process.load(str(gpt2_folder))
    pid = process.pid
    assert pid is not None
    ids = [t.id for t in gpt2_table.encode(LONG_TEXT)]
    batches = model.layer_runs([LayerRun(tuple(ids), 1, None)], None)
    next(batches)  # the pass has begun
    batches.close()
    process.close()  # the child ends on its own when its stdin closes (bench_layers times it)
    assert _gone(pid)
