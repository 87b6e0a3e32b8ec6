"""Split GGUFs (llama.cpp's gguf-split, written here by the gguf package's own split writer) open as one model."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer import open_table
from embedexplorer.cli import main
from embedexplorer.core.common.errors import ModelNotFoundError
from embedexplorer.core.sources.discovery import local_models

from ..gguf_fixture import float64_top_k, write_gguf

ROWS = np.random.default_rng(7).standard_normal((400, 32)).astype(np.float32)
OTHERS = {"blk.0.attn_norm.weight": np.ones(32, np.float32), "output.weight": ROWS[::-1].copy()}


def split_model(folder: Path, *, small_first_shard: bool = False) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    first = write_gguf(
        folder / "tiny.gguf", ROWS, Q.F32, extra=OTHERS, split_max_tensors=1, small_first_shard=small_first_shard
    )
    return sorted(first.parent.glob("tiny-*-of-*.gguf"))


@pytest.mark.parametrize("small_first_shard", [False, True])
def test_any_part_opens_the_whole_model(tmp_path: Path, small_first_shard: bool) -> None:
    parts = split_model(tmp_path / "split", small_first_shard=small_first_shard)
    assert [p.name for p in parts][0] == f"tiny-00001-of-{len(parts):05d}.gguf" and len(parts) >= 3
    whole = open_table(str(write_gguf(tmp_path / "whole.gguf", ROWS, Q.F32, extra=OTHERS)))
    expected, _ = float64_top_k(ROWS, ROWS[33], 5, exclude=(33,))
    for part in parts:
        table = open_table(str(part))
        assert np.array_equal(np.asarray(table.rows[:]), ROWS)
        assert [n.id for n in table.neighbours(33, 5).neighbours] == expected
        assert table.model_weights == whole.model_weights == ROWS.size * 2 + 32
        table.close()


def test_a_missing_part_is_named_in_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = split_model(tmp_path / "split")
    parts[1].unlink()
    for part in (parts[0], parts[2]):
        with pytest.raises(ModelNotFoundError) as caught:
            open_table(str(part))
        message = str(caught.value)
        assert parts[1].name in message and message.count(". ") == 0 and "\n" not in message
    assert main(["neighbours", "w5", "--model", str(parts[0])]) == 2
    err = capsys.readouterr().err.strip()
    assert parts[1].name in err and len(err.splitlines()) == 1


def test_a_renamed_part_is_refused(tmp_path: Path) -> None:
    parts = split_model(tmp_path / "split")
    renamed = tmp_path / "model.gguf"
    shutil.copy(parts[0], renamed)
    with pytest.raises(ModelNotFoundError, match="one of 3 parts of a split model"):
        open_table(str(renamed))


def test_parts_of_different_models_are_refused(tmp_path: Path) -> None:
    parts = split_model(tmp_path / "a")
    other = split_model(tmp_path / "b")
    shutil.copy(other[0], parts[1])  # part 1 of the other model under part 2's name
    with pytest.raises(Exception, match="part 1 of 3, but its name says part 2 of 3"):
        open_table(str(parts[0]))


def test_a_split_model_is_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    complete = split_model(home / ".lmstudio" / "models" / "someone" / "tiny-GGUF")
    broken = split_model(home / ".lmstudio" / "models" / "someone" / "broken-GGUF")
    broken[2].unlink()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    listed = {m.name: m for m in local_models() if m.kind == "lmstudio"}
    assert set(listed) == {"someone/tiny-GGUF/tiny", "someone/broken-GGUF/tiny"}
    assert listed["someone/tiny-GGUF/tiny"].size_bytes == sum(p.stat().st_size for p in complete)
    assert listed["someone/tiny-GGUF/tiny"].spec == str(complete[0]) and not listed["someone/tiny-GGUF/tiny"].missing
    assert listed["someone/broken-GGUF/tiny"].missing == "part 3 of 3 missing"


@pytest.mark.parametrize("small_first_shard", [False, True])
def test_the_output_head_is_found_in_whichever_part_holds_it(
    tmp_path: Path, small_first_shard: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """gguf-split keeps output.weight in another part than the token table: the compare pane's "Its output head",
    the health check's head and ``info`` read it there (they took the model for a tied one)."""
    import json

    from embedexplorer.core.compare.output_head import output_head_table

    parts = split_model(tmp_path / "split", small_first_shard=small_first_shard)
    table = open_table(str(parts[0]))
    holding = [p.name for p in parts if "output.weight" in gguf_tensor_names(p)]
    assert holding and holding[0] != next(p.name for p in parts if "token_embd.weight" in gguf_tensor_names(p))
    head = output_head_table(table)
    assert np.array_equal(np.asarray(head.rows[:]), OTHERS["output.weight"])
    head.close()
    table.close()
    assert main(["info", "--model", str(parts[-1]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["output_head"] == "own"
    tied = write_gguf(tmp_path / "tied.gguf", ROWS, Q.F32)  # no output.weight: llama.cpp reads the table again
    assert main(["info", "--model", str(tied), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["output_head"] == "tied"


def gguf_tensor_names(path: Path) -> set[str]:
    from gguf import GGUFReader

    return {tensor.name for tensor in GGUFReader(str(path)).tensors}
