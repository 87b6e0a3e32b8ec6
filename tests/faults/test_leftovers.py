"""Nothing outlives the program or runs on after it was told to stop; nothing is downloaded to be refused.

Hostile round 2, class 8: t-SNE's process after its parent dies (however it dies), a
forward pass after Ctrl-C, a table the opener will refuse (5,000,000 rows). Also classes 6
and 7 for what the user may do meanwhile: a tokenizer file replaced while the table is
open, lessons nested past Python's stack or holding half a character.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedexplorer import open_table
from embedexplorer.core.common.errors import TableNotFoundError, TokenizerMismatchError
from embedexplorer.core.exercises.lessons import LessonError, load_lesson
from embedexplorer.core.layers.answers import LayerRun
from embedexplorer.core.layers.loading import load_layer_model

from .helpers import ctrl_c_as_at_a_terminal, safetensors_bytes, word_level_tokenizer, write_table_folder

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck))

TSNE_PARENT = """
import faulthandler, signal
import numpy as np
from embedexplorer.core.maps.projections import project

if __name__ == "__main__":
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks for the stacks if this hangs
    rows = np.random.default_rng(0).standard_normal((20000, 32)).astype(np.float32)
    project(rows, "tsne", separate_process=True, progress=lambda d, t, m: print(m, flush=True))
"""


def children(pid: int) -> list[int]:
    found: list[int] = []
    for listing in glob.glob(f"/proc/{pid}/task/*/children"):
        with open(listing) as handle:
            found += [int(n) for n in handle.read().split()]
    return found


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the child processes")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_the_tsne_process_ends_with_its_parent(tmp_path: Path, how: signal.Signals) -> None:
    script = tmp_path / "parent.py"
    script.write_text(TSNE_PARENT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    assert parent.stdout is not None and parent.stderr is not None
    for line in parent.stdout:  # the child reports from inside t-SNE
        if line.startswith("t-SNE:") and "starting" not in line:
            break
    # Both pipes are read to their end from here on: a parent must never wait on a full pipe
    # the test stopped reading (that would be the test holding it, not the program).
    said: list[str] = []
    pipes = (parent.stdout, parent.stderr)
    readers = [threading.Thread(target=lambda p=pipe: said.extend(p), daemon=True) for pipe in pipes]
    for reader in readers:
        reader.start()
    kids = children(parent.pid)
    assert kids
    parent.send_signal(how)
    try:
        # Generous: what is tested is that the child ends with the parent, not how fast a busy machine is.
        parent.wait(timeout=180)
    except subprocess.TimeoutExpired:
        os.kill(parent.pid, signal.SIGUSR1)  # faulthandler writes every thread's stack to stderr
        time.sleep(2)
        parent.kill()
        parent.wait()
        for reader in readers:
            reader.join(timeout=10)
        pytest.fail(f"the parent did not end 180 s after {how.name}; its stacks:\n{''.join(said)[-6000:]}")
    deadline = time.monotonic() + 60
    while any(running(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [k for k in kids if running(k)]
    for k in left:
        os.kill(k, signal.SIGKILL)
    assert not left, f"still running 60 s after the parent ended by {how.name}"


def test_leaving_a_forward_pass_stops_it_at_the_next_layer(tmp_path: Path, gpt2_folder: Path) -> None:
    """What Ctrl-C does to the command line's streamed pass: the caller leaves, the pass stops at once."""
    import shutil

    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    folder = tmp_path / "deep"
    GPT2Model(GPT2Config(n_layer=12, n_head=2, n_embd=32, n_positions=64)).save_pretrained(folder)
    shutil.copy(gpt2_folder / "tokenizer.json", folder / "tokenizer.json")
    model = load_layer_model(folder)

    gate = threading.Event()
    asked = [0]
    released = []

    def should_stop() -> bool:
        # Asked before the pass, then before each block: block 0's check hands over layer 0, and
        # block 1's (once the caller has left, only ``abandoned`` is read) waits for the caller.
        asked[0] += 1
        if asked[0] > 2:
            released.append(gate.wait(60))
        return False

    batches = model.layer_runs([LayerRun((464, 3139, 286), 1, 3139)], should_stop)
    next(batches)  # layer 0 arrived; the pass is at block 1's check
    leaving = threading.Thread(target=batches.close)  # what KeyboardInterrupt in the caller does
    leaving.start()
    time.sleep(0.5)
    gate.set()
    leaving.join(60)
    assert not leaving.is_alive()
    # If the caller left before block 1's check, that check stopped the pass without asking; if not,
    # the check waited for the caller, never for the gate's time to run out.
    assert all(released)
    assert asked[0] <= 3 < 12  # it stopped at the next block, not after all twelve


def test_a_table_the_opener_refuses_is_not_downloaded(tmp_path: Path) -> None:
    from .helpers import fake_hub
    from .test_network import online_env

    folder = tmp_path / "huge"
    folder.mkdir()
    rows, width = 5_000_000, 16
    span = [0, rows * width * 4]
    header = {"model.embed_tokens.weight": {"dtype": "F32", "shape": [rows, width], "data_offsets": span}}
    weights = folder / "model.safetensors"
    weights.write_bytes(safetensors_bytes(header, b""))
    with open(weights, "r+b") as handle:
        handle.truncate(weights.stat().st_size + rows * width * 4)  # sparse: 320 MB of nothing
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": rows}), encoding="utf-8")
    (folder / "tokenizer.json").write_text(json.dumps(word_level_tokenizer({"a": 0, "b": 1})), encoding="utf-8")
    code = (
        "from embedexplorer.core.sources.hub import download_table\n"
        "from embedexplorer.core.common.errors import EmbedExplorerError\n"
        "try:\n"
        "    download_table('someone/huge')\n"
        "except EmbedExplorerError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    with fake_hub("someone/huge", folder) as hub:
        env = {**os.environ, **online_env(hub.url, tmp_path)}
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
        sent = hub.sent.get("model.safetensors", 0)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(TableNotFoundError.__name__) and "claims 5,000,000 rows" in result.stdout
    assert sent < 64 * 1024  # the header, not the 320 MB of rows


def test_a_tokenizer_replaced_while_the_table_is_open_never_gives_ids_past_it(tmp_path: Path) -> None:
    folder = write_table_folder(tmp_path / "model", 50, 8)
    table = open_table(str(folder), separate_tokenizer=True)
    assert [t.id for t in table.encode("t3 t7")] == [3, 7]
    bigger = word_level_tokenizer({**{f"t{i}": i for i in range(50)}, "late": 4000})
    (folder / "tokenizer.json").write_text(json.dumps(bigger), encoding="utf-8")
    table.vocabulary.close()  # the next text starts the tokenizer again: it reads the new file
    with pytest.raises(TokenizerMismatchError, match="but the table has only 50 rows"):
        table.encode("t3 late")
    table.close()


def test_a_gguf_replaced_while_open_never_gives_ids_past_the_table(tmp_path: Path) -> None:
    import numpy as np
    from gguf.constants import GGMLQuantizationType as Q

    from ..gguf_fixture import small_vocabulary, write_gguf

    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    path = write_gguf(tmp_path / "m.gguf", rows, Q.F16, tokens=small_vocabulary(300))
    table = open_table(str(path), separate_tokenizer=True)
    before = [t.id for t in table.encode("hello")]
    assert before and max(before) < 300
    # The same name, now a model with a far larger vocabulary whose ids for the text are past the table.
    tokens = small_vocabulary(300)
    big_rows = np.random.default_rng(1).standard_normal((1300, 32)).astype(np.float16)
    replacement = write_gguf(tmp_path / "other.gguf", big_rows, Q.F16, tokens=["Z"] * 1000 + tokens)
    os.replace(replacement, path)
    table.vocabulary.close()  # the next text starts the tokenizer again: it reads the new file
    with pytest.raises(TokenizerMismatchError, match="gave token id 1,"):
        table.encode("hello")
    table.close()


# ----- lessons that are traps ---------------------------------------------------------------------
@SETTINGS
@given(depth=st.integers(5_000, 300_000), opener=st.sampled_from(["[", '{"a":']))
def test_a_lesson_nested_past_the_stack_is_one_sentence(tmp_path_factory, depth: int, opener: str) -> None:
    path = tmp_path_factory.mktemp("lesson") / "deep.lesson.json"
    closer = "]" if opener == "[" else "}"
    path.write_text(opener * depth + "1" + closer * depth, encoding="utf-8")
    with pytest.raises(LessonError) as caught:
        load_lesson(path)
    assert "\n" not in str(caught.value) and "deep.lesson.json" in str(caught.value)


surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
fields = st.sampled_from(["first", "second", "note", "model", "hidden"])


@SETTINGS
@given(half=surrogates, field=fields, around=st.text(max_size=5))
def test_a_lesson_with_half_a_character_is_refused_when_read(
    tmp_path_factory, half: str, field: str, around: str
) -> None:
    lesson: dict[str, object] = {"embedexplorer_lesson": 1, "model": "bundled", "texts": {"first": "", "second": ""}}
    value = around + half + around
    if field in ("first", "second"):
        lesson["texts"] = {field: value}
    elif field == "hidden":
        lesson["hidden_families"] = [value]
    else:
        lesson[field] = value
    path = tmp_path_factory.mktemp("lesson") / "half.lesson.json"
    path.write_text(json.dumps(lesson), encoding="ascii")  # json spells the surrogate as \\udxxx
    with pytest.raises(LessonError, match="half of a character"):
        load_lesson(path)
