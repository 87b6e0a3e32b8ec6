"""The model's process on folders that cannot be run, a child that dies, and frames that lie: one clear message each."""

from __future__ import annotations

import io
import os
import signal
import struct
from pathlib import Path

import numpy as np
import pytest

from embedexplorer import open_table
from embedexplorer.core.common.errors import (
    EmbedExplorerError,
    IncompleteModelError,
    TextTooLongError,
    UnsafeCheckpointError,
    UnsupportedModelError,
)
from embedexplorer.core.layers.layer_process import LayerProcess, receive_frame, send_frame
from embedexplorer.core.layers.loading import load_layer_model
from embedexplorer.jobs.base import JobContext, Session
from embedexplorer.jobs.layer_jobs import LayersRequest, model_process, run_layers

from .test_layers_faults import table_only  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def process():  # type: ignore[no-untyped-def]
    started = LayerProcess()
    yield started
    started.close()


def _same_error(process: LayerProcess, folder: Path, kind: type[EmbedExplorerError]) -> EmbedExplorerError:
    """The child's error for ``folder`` is the in-process load's error: same class, same words."""
    with pytest.raises(kind) as here:
        load_layer_model(folder)
    with pytest.raises(kind) as there:
        process.load(str(folder))
    assert str(there.value) == str(here.value)
    return there.value


def test_a_table_only_folder_keeps_its_sizes_across_the_pipe(process: LayerProcess, table_only: Path) -> None:  # noqa: F811
    error = _same_error(process, table_only, IncompleteModelError)
    assert isinstance(error, IncompleteModelError)
    assert (error.model_bytes, error.model_weights) == (124_439_808 * 4, 124_439_808)


def test_a_pickle_only_folder_is_refused_in_the_child(process: LayerProcess, broken: dict[str, Path]) -> None:
    _same_error(process, broken["pickle-only"], UnsafeCheckpointError)


def test_model_code_is_refused_in_the_child(process: LayerProcess, table_only: Path, tmp_path: Path) -> None:  # noqa: F811
    import json
    import shutil

    folder = tmp_path / "custom"
    shutil.copytree(table_only, folder)
    marker = tmp_path / "code-ran"
    (folder / "modeling_evil.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).touch()\n")
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "evil-net"
    config["auto_map"] = {"AutoModel": "modeling_evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps(config))
    _same_error(process, folder, UnsupportedModelError)
    assert not marker.exists()


def test_a_text_too_long_is_told_before_the_child_runs_it(gpt2_folder: Path) -> None:
    session = Session()
    session.replace_table(open_table(str(gpt2_folder)))
    ctx = JobContext(session)
    with pytest.raises(TextTooLongError, match="positions for only 1,024"):
        run_layers(ctx, LayersRequest(" a" * 1025, 1))
    session.replace_table(None)


def test_a_child_killed_mid_question_is_one_message_then_started_again(gpt2_folder: Path) -> None:
    session = Session()
    session.replace_table(open_table(str(gpt2_folder)))
    ctx = JobContext(session)
    assert run_layers(ctx, LayersRequest(" the river bank", 3, k=2)).answer is not None
    process = model_process(session)
    pid = process.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(EmbedExplorerError, match="model's process stopped.*ask again"):
        run_layers(ctx, LayersRequest(" the river bank was steep", 3, k=2))
    reply = run_layers(ctx, LayersRequest(" the river bank was steep", 3, k=2))
    assert reply.answer is not None and reply.load_seconds is not None  # a new child loaded the model again
    assert process.pid not in (None, pid)
    session.replace_table(None)


def test_frames_carry_arrays_exactly_and_refuse_lies() -> None:
    stream = io.BytesIO()
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    send_frame(stream, {"id": 1, "layers": [0, 1, 2]}, (vectors, vectors[:1]))
    stream.seek(0)
    frame = receive_frame(stream)
    assert frame is not None
    message, arrays = frame
    assert message == {"id": 1, "layers": [0, 1, 2]}
    assert np.array_equal(arrays[0], vectors) and np.array_equal(arrays[1], vectors[:1])
    assert receive_frame(stream) is None  # the other side closed

    def framed(header: bytes, binary: bytes = b"") -> io.BytesIO:
        return io.BytesIO(struct.pack("<II", len(header), len(binary)) + header + binary)

    with pytest.raises(ValueError, match="beyond the bounds"):
        receive_frame(io.BytesIO(struct.pack("<II", 2**31, 0)))
    with pytest.raises(ValueError, match="does not fit"):
        receive_frame(framed(b'{"arrays": [[1000]]}', b"\0" * 8))
    with pytest.raises(ValueError, match="do not fill"):
        receive_frame(framed(b'{"arrays": [[1]]}', b"\0" * 8))
    with pytest.raises(ValueError, match="JSON object"):
        receive_frame(framed(b"[1, 2]"))
    assert receive_frame(io.BytesIO(b"\x05\x00")) is None  # cut short
