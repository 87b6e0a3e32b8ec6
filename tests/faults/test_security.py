"""Weights come only from safetensors; no pickle is ever loaded, no model code ever runs."""

from __future__ import annotations

import json
import pickle
import re
import shutil
from pathlib import Path

import pytest

from embedexplorer import open_table
from embedexplorer.core.common.errors import EmbedExplorerError, UnsafeCheckpointError

PACKAGE = Path(__file__).resolve().parents[2] / "embedexplorer"

FORBIDDEN = {
    "torch.load": r"\btorch\.load\b",
    "import pickle": r"^\s*(import|from)\s+(c?pickle|dill|joblib)\b",
    "pickle.load": r"\bpickle\.loads?\b",
    "trust_remote_code=True": r"trust_remote_code\s*=\s*True",
    "allow_pickle=True": r"allow_pickle\s*=\s*True",
    "weights_only=False": r"weights_only\s*=\s*False",
}


def test_the_package_never_unpickles_or_trusts_remote_code() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10
    found = []
    for file in files:
        text = file.read_text(encoding="utf-8")
        for name, pattern in FORBIDDEN.items():
            if re.search(pattern, text, flags=re.MULTILINE):
                found.append(f"{file.relative_to(PACKAGE.parent)}: {name}")
        # transformers may only read local files, and never run a model's own code
        for call in re.finditer(r"from_pretrained\(", text):
            arguments = text[call.end() : call.end() + 300].split("\n\n")[0]
            if "local_files_only=True" not in arguments or "trust_remote_code=False" not in arguments:
                found.append(f"{file.relative_to(PACKAGE.parent)}: from_pretrained without both guards")
    assert not found, found


def test_the_grep_would_catch_an_offender() -> None:
    bad = "import pickle\nstate = torch.load(f)\nAutoModel.from_pretrained(p, trust_remote_code=True)\n"
    hits = [name for name, pattern in FORBIDDEN.items() if re.search(pattern, bad, flags=re.MULTILINE)]
    assert {"import pickle", "torch.load", "trust_remote_code=True"} <= set(hits)


class _Booby:
    """Unpickling this creates the marker file: proof that a pickle was loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (self.marker,))


def _plant_code(folder: Path, marker: Path) -> None:
    """Custom model and tokenizer code that creates ``marker`` when imported."""
    code = f"from pathlib import Path\nPath({str(marker)!r}).touch()\n"
    (folder / "modeling_evil.py").write_text(code + "class EvilModel: pass\n", encoding="utf-8")
    (folder / "tokenization_evil.py").write_text(code + "class EvilTokenizer: pass\n", encoding="utf-8")
    auto_map = {"AutoModel": "modeling_evil.EvilModel", "AutoTokenizer": ["tokenization_evil.EvilTokenizer", None]}
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["auto_map"] = auto_map
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tokenizer_config = {"auto_map": {"AutoTokenizer": ["tokenization_evil.EvilTokenizer", None]}}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config), encoding="utf-8")


def test_a_booby_trapped_pickle_is_never_loaded(tmp_path: Path, rotary_folder: Path) -> None:
    marker = tmp_path / "pickle-ran"
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(rotary_folder / "config.json", folder / "config.json")
    shutil.copy(rotary_folder / "tokenizer.json", folder / "tokenizer.json")
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Booby(marker)))
    # the booby trap works: loading it really would have run code
    pickle.loads((folder / "pytorch_model.bin").read_bytes())
    assert marker.exists()
    marker.unlink()

    with pytest.raises(UnsafeCheckpointError, match="refuses it"):
        open_table(str(folder))
    assert not marker.exists()


def test_a_folder_with_safetensors_pickles_and_custom_code_runs_none_of_them(
    tmp_path: Path, rotary_folder: Path
) -> None:
    marker = tmp_path / "code-ran"
    folder = tmp_path / "model"
    shutil.copytree(rotary_folder, folder)
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Booby(marker)))
    _plant_code(folder, marker)
    table = open_table(str(folder))  # the safetensors table opens
    assert table.rows.shape == (30522, 16)
    assert table.neighbours("paris", k=2).neighbours
    assert not marker.exists()


def test_custom_tokenizer_code_is_not_run_when_there_is_no_tokenizer_json(tmp_path: Path, rotary_folder: Path) -> None:
    marker = tmp_path / "code-ran"
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(rotary_folder / "config.json", folder / "config.json")
    shutil.copy(rotary_folder / "model.safetensors", folder / "model.safetensors")
    _plant_code(folder, marker)
    with pytest.raises(EmbedExplorerError, match="has no tokenizer that can be read"):
        open_table(str(folder))
    assert not marker.exists()
