"""Running the layers on folders that cannot be run: a clear message each, no pickle, no model code."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest
from safetensors.numpy import load_file, save_file

from embedexplorer import open_table
from embedexplorer.core.common.errors import IncompleteModelError, UnsafeCheckpointError, UnsupportedModelError
from embedexplorer.core.layers.loading import load_layer_model, model_size
from tests.core.test_sources import run_cli

from .helpers import assert_one_line_error

GPT2_SMALL_WEIGHTS = 124_439_808


@pytest.fixture(scope="module")
def table_only(tmp_path_factory: pytest.TempPathFactory, gpt2_folder: Path) -> Path:
    """GPT-2's token and position tables with its config and tokenizer, and nothing of the layers."""
    folder = tmp_path_factory.mktemp("table-only")
    tensors = load_file(str(gpt2_folder / "model.safetensors"))
    kept = {name: tensors[name] for name in ("transformer.wte.weight", "transformer.wpe.weight")}
    save_file(kept, str(folder / "model.safetensors"), metadata={"format": "pt"})
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"):
        if (gpt2_folder / name).exists():
            shutil.copy(gpt2_folder / name, folder / name)
    return folder


def test_a_table_only_folder_says_how_big_the_whole_model_is(table_only: Path) -> None:
    table = open_table(str(table_only))  # the table itself opens and answers
    assert table.rows.shape == (50_257, 768)
    with pytest.raises(IncompleteModelError) as caught:
        load_layer_model(table_only)
    error = caught.value
    assert error.model_weights == GPT2_SMALL_WEIGHTS
    assert error.model_bytes == GPT2_SMALL_WEIGHTS * 4
    message = str(error)
    held = 50_257 * 768 + 1_024 * 768
    assert f"holds {held:,} of the {GPT2_SMALL_WEIGHTS:,} weights" in message
    assert f"{GPT2_SMALL_WEIGHTS * 4 / 1e6:,.1f} MB as F32" in message
    assert "download" in message.lower()
    assert model_size(table_only) == (GPT2_SMALL_WEIGHTS, GPT2_SMALL_WEIGHTS * 4)


def test_the_cli_says_so_in_one_line(table_only: Path) -> None:
    result = run_cli("layers", "The capital of France", "--place", "2", "--model", str(table_only))
    assert_one_line_error(result, "not the whole model", "download")


def test_a_pickle_only_folder_is_refused(broken: dict[str, Path]) -> None:
    with pytest.raises(UnsafeCheckpointError, match="refuses it"):
        load_layer_model(broken["pickle-only"])


class _Booby:
    """Unpickling this creates the marker file: proof that a pickle was loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (self.marker,))


def test_layers_only_in_a_pickle_are_refused_and_never_unpickled(table_only: Path, tmp_path: Path) -> None:
    folder = tmp_path / "table-and-pickle"
    shutil.copytree(table_only, folder)
    marker = tmp_path / "pickle-ran"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Booby(marker)))
    with pytest.raises(IncompleteModelError, match=r"only in pickled files \(pytorch_model.bin\).*refuses"):
        load_layer_model(folder)
    assert not marker.exists()


def test_an_architecture_with_its_own_code_is_refused_and_its_code_never_runs(table_only: Path, tmp_path: Path) -> None:
    folder = tmp_path / "custom"
    shutil.copytree(table_only, folder)
    marker = tmp_path / "code-ran"
    (folder / "modeling_evil.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).touch()\n")
    (folder / "configuration_evil.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).touch()\n")
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "evil-net"
    config["auto_map"] = {"AutoConfig": "configuration_evil.EvilConfig", "AutoModel": "modeling_evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(UnsupportedModelError, match="a model's own code never runs"):
        load_layer_model(folder)
    assert not marker.exists()
    result = run_cli("layers", "The capital", "--place", "1", "--model", str(folder))
    assert_one_line_error(result, "own code never runs")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("layers", "the river bank", "--place", "4", "--model", "bundled"), ("Place 4 is outside", "places 1 to 3")),
        (("layers", "a " * 600, "--place", "1", "--model", "bundled"), ("positions for only 512",)),
        (
            ("layers", "the river bank", "--place", "3", "--compare", "a cat", "--model", "bundled"),
            ("bank is not a token of 'a cat'", "--compare-place"),
        ),
        (
            ("layers", "the river bank", "--place", "3", "--compare-place", "2", "--model", "bundled"),
            ("needs --compare",),
        ),
    ],
)
def test_cli_layers_mistakes_are_one_line(args: tuple[str, ...], fragments: tuple[str, ...]) -> None:
    assert_one_line_error(run_cli(*args), *fragments)


@pytest.mark.parametrize("args", [("layers", "the bank"), ("layers", "the bank", "--place", "0")])
def test_cli_layers_usage_mistakes_exit_2(args: tuple[str, ...]) -> None:
    result = run_cli(*args, "--model", "bundled")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
