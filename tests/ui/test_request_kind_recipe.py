"""The request-kind recipe: a kind declared in a test answers on the window's worker as on the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tokenizers import Tokenizer

from embedexplorer.cli import main
from embedexplorer.core.sources.resolve import bundled_model_dir
from embedexplorer.jobs.table_jobs import LOAD, LoadRequest
from embedexplorer.worker import WorkerClient
from tests.core.test_recipes import ROW_LENGTH, WITH_LENGTH, LengthRequest, file_rows

TIMEOUT_MS = 60_000
# Who asks: a pane would pass itself; a test a name of its own.
ASKER = "recipe-test"


def test_a_kind_declared_in_a_test_answers_through_the_worker_and_the_command_line(qtbot, capsys) -> None:  # type: ignore[no-untyped-def]
    worker = WorkerClient()
    try:
        with qtbot.waitSignal(worker.channel(LOAD, ASKER).ready, timeout=TIMEOUT_MS):
            worker.ask(LOAD, LoadRequest("bundled"), ASKER)
        with qtbot.waitSignal(worker.channel(ROW_LENGTH, ASKER).ready, timeout=TIMEOUT_MS) as answered:
            worker.ask(ROW_LENGTH, LengthRequest("monday"), ASKER)
    finally:
        worker.shutdown()
    in_window = answered.args[0]
    assert main(["length", "monday", "--model", "bundled", "--json"], table=WITH_LENGTH) == 0
    on_the_command_line = json.loads(capsys.readouterr().out)
    # The oracles: the tokenizers library reading the model's own tokenizer.json, the rows from the file.
    folder = bundled_model_dir()
    wanted = Tokenizer.from_file(str(folder / "tokenizer.json")).encode("monday", add_special_tokens=False).ids[0]
    assert in_window.token_id == on_the_command_line["id"] == wanted
    rows = file_rows(folder / "model.safetensors", "embeddings.word_embeddings.weight")
    assert in_window.length == on_the_command_line["length"] == pytest.approx(float(np.linalg.norm(rows[wanted])))
