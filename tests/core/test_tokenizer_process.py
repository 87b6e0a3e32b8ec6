"""The tokenizer run in a child process answers exactly as the one in this process, and dies cleanly."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from embedexplorer import open_table
from embedexplorer.core.common.errors import EmbedExplorerError
from embedexplorer.core.sources.resolve import bundled_model_dir
from embedexplorer.core.text.tokenizer_process import TokenizerProcess
from embedexplorer.core.text.vocabulary import Vocabulary

TEXTS = [
    "The capital of France is",
    " Paris",
    "monday tuesday",
    "embeddings are learned",
    "naïve café, 東京, مرحبا, 🙂🙃",
    "tabs\tand\nnewlines\r\n",
    "",
    "   ",
    "\ud83d lone surrogate",
    "x" * 50_000,
]


@pytest.fixture(params=["gpt2", "minilm"])
def folder(request, gpt2_folder: Path) -> Path:  # type: ignore[no-untyped-def]
    return gpt2_folder if request.param == "gpt2" else bundled_model_dir()


def _in_child(folder: Path) -> Vocabulary:
    return Vocabulary.start(folder, separate_process=True)()


def test_child_describes_and_encodes_exactly_as_this_process(folder: Path) -> None:
    local = Vocabulary.from_folder(folder)
    remote = _in_child(folder)
    try:
        assert remote.facts == local.facts
        for text in TEXTS:
            assert remote.encode(text) == local.encode(text), repr(text[:30])
    finally:
        remote.close()


def test_table_with_a_separate_tokenizer_gives_the_chapter_ids(gpt2_folder: Path, gpt2_table) -> None:  # type: ignore[no-untyped-def]
    table = open_table(str(gpt2_folder), separate_tokenizer=True)
    try:
        assert [t.id for t in table.encode("The capital of France is")] == [464, 3139, 286, 4881, 318]
        assert table.query(" banana").id == 25996
        mine = table.neighbours(" Paris", k=10)
        reference = gpt2_table.neighbours(" Paris", k=10)
        assert [n.id for n in mine.neighbours] == [n.id for n in reference.neighbours]
        assert table.tokens == gpt2_table.tokens
    finally:
        table.close()


def test_a_load_error_in_the_child_reaches_the_caller_with_its_words(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(bundled_model_dir(), broken)
    (broken / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": 7}}', encoding="utf-8")
    with pytest.raises(EmbedExplorerError) as here:
        Vocabulary.from_folder(broken)
    with pytest.raises(EmbedExplorerError) as there:
        _in_child(broken)
    assert type(there.value) is type(here.value)
    assert str(there.value) == str(here.value)
    assert "tokenizer.json" in str(there.value)


def test_a_killed_child_is_started_again_on_the_next_request() -> None:
    process = TokenizerProcess(bundled_model_dir())
    try:
        process.facts()
        first = process._process
        assert first is not None
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=120)  # a generous bound: a busy machine may be slow to reap it
        ids = process.encode("monday")
        assert ids == Vocabulary.from_folder(bundled_model_dir()).encode("monday")
        assert process._process is not None and process._process.pid != first.pid
    finally:
        process.close()


def test_close_ends_the_child_and_encoding_afterwards_starts_a_new_one() -> None:
    process = TokenizerProcess(bundled_model_dir())
    process.facts()
    child = process._process
    assert child is not None
    process.close()
    assert child.poll() is not None  # reaped, not left as a zombie
    assert process.encode("paris") == Vocabulary.from_folder(bundled_model_dir()).encode("paris")
    process.close()


def test_within_reaping_last_close_lets_the_child_end_and_the_block_reaps_it() -> None:
    # The command line's way: the child is told to end when its table closes, the answer is
    # printed meanwhile, and the child is reaped (never left behind) when the block ends.
    from embedexplorer.core.text.tokenizer_process import reaping_last

    with reaping_last():
        process = TokenizerProcess(bundled_model_dir())
        process.facts()
        child = process._process
        assert child is not None
        process.close()
        assert child.returncode is None  # not waited for by close()
        assert child.stdin is not None and child.stdin.closed  # but told to end
    assert child.returncode == 0  # it ended on its own and was reaped
    assert not _alive(child.pid)
    process.close()


def test_the_child_exits_when_its_parent_dies() -> None:
    # A parent that starts a child and then vanishes without closing anything.
    code = (
        "import os, sys\n"
        "from embedexplorer.core.text.tokenizer_process import TokenizerProcess\n"
        "from embedexplorer.core.sources.resolve import bundled_model_dir\n"
        "p = TokenizerProcess(bundled_model_dir())\n"
        "p.facts()\n"
        "print(p._process.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    child_pid = int(result.stdout.strip())
    deadline = time.monotonic() + 120  # ends as soon as the child does; a busy machine may be slow
    while time.monotonic() < deadline and _alive(child_pid):
        time.sleep(0.05)
    assert not _alive(child_pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split()[2] != "Z"  # a zombie has exited; init reaps it
    except FileNotFoundError:
        return False


def test_a_child_that_cannot_start_says_why(monkeypatch) -> None:
    from embedexplorer.core.text import tokenizer_process
    def broken_command(folder: Path, *_: object) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, "-c", "raise SystemExit('no tokenizer here: ' + 'missing module')"], dict(os.environ)

    monkeypatch.setattr(tokenizer_process, "child_command", broken_command)
    process = TokenizerProcess(bundled_model_dir())
    with pytest.raises(EmbedExplorerError, match="could not be started.*no tokenizer here: missing module"):
        process.facts()
    process.close()


def test_a_vocabulary_whose_child_cannot_start_reads_the_tokenizer_here(monkeypatch, caplog) -> None:
    from embedexplorer.core.text import tokenizer_process
    def dies_at_once(folder: Path, *_: object) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ)

    monkeypatch.setattr(tokenizer_process, "child_command", dies_at_once)
    vocabulary = _in_child(bundled_model_dir())
    assert vocabulary.encode("monday") == Vocabulary.from_folder(bundled_model_dir()).encode("monday")
    assert "in this process instead" in caplog.text
    vocabulary.close()


def test_the_child_imports_the_tokenizer_and_not_the_engine(folder: Path) -> None:
    # The child starts while the command waits: it must load tokenizers, never numpy, torch,
    # transformers or the table code. Its own command, run whole with -X importtime, lists what it loaded.
    from embedexplorer.core.text.tokenizer_process import child_command, receive_message

    command, env = child_command(folder)
    run = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]], input=b"", capture_output=True, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    from io import BytesIO

    answers = BytesIO(run.stdout)
    assert receive_message(answers) == {"started": True}
    assert "facts" in (receive_message(answers) or {})  # it did load the tokenizer
    imported = {line.split("|")[-1].strip() for line in run.stderr.decode().splitlines() if "import time:" in line}
    assert "tokenizers" in imported
    heavy = {name for name in imported if name.split(".")[0] in ("numpy", "torch", "transformers", "safetensors")}
    assert heavy == set()
    assert not any(name.startswith(("embedexplorer.core.tables", "embedexplorer.core.readers")) for name in imported)


def _imported(argv: list[str], env: dict[str, str]) -> set[str]:
    """The modules a Python command imports, from its own ``-X importtime`` listing (stdin closed)."""
    run = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], input=b"", capture_output=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in run.stderr.decode().splitlines() if "import time:" in line}


def test_the_child_imports_nothing_beyond_the_library_and_its_own_modules(folder: Path) -> None:
    # Every command that reads a model folder waits for this child: beside what the tokenizers library
    # imports for itself it may load the app's few modules of its own (and the memory limit's), nothing
    # else (dataclasses, pathlib and logging cost a few milliseconds each at every start).
    from embedexplorer.core.text.tokenizer_process import child_command, child_sys_path

    command, env = child_command(folder)
    child = _imported(command, env)
    bare_code = "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); import struct, tokenizers"
    bare = _imported([sys.executable, "-I", "-S", "-c", bare_code, json.dumps(child_sys_path())], env)
    assert "tokenizers" in child and "tokenizers" in bare
    extra = {name for name in child - bare if not name.startswith("embedexplorer")}
    assert extra <= {"__future__", "resource"}, extra


def test_a_child_started_early_gets_the_row_count_later_and_answers_as_this_process(folder: Path) -> None:
    from embedexplorer.core.common.errors import TokenizerMismatchError
    from embedexplorer.core.text.tokenizer_process import close_early, start_early, take_early

    local = Vocabulary.from_folder(folder)
    start_early(folder)
    remote = Vocabulary.start(folder, separate_process=True, max_rows=local.size)()  # the reader takes it
    try:
        assert remote.in_child_process and remote.facts == local.facts
        assert remote.encode(TEXTS[0]) == local.encode(TEXTS[0])
    finally:
        remote.close()
    # The count sent later is the limit: a table with fewer rows than the tokenizer's tokens is refused.
    start_early(folder)
    early = take_early(folder, local.size - 1)
    assert early is not None
    with pytest.raises(TokenizerMismatchError):
        early.facts()
    early.close()
    # One nobody takes is stopped and reaped by close_early.
    start_early(folder)
    from embedexplorer.core.text import tokenizer_process

    untaken = tokenizer_process._early[os.path.realpath(folder)]._process
    assert untaken is not None
    close_early()
    assert untaken.poll() is not None
