"""Shared fixtures: the bundled MiniLM and a GPT-2-shaped folder with the real vocabulary."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Tests never touch the network, and Qt never needs a screen.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# An empty HF cache, set before anything imports huggingface_hub, so that
# "the default model" is the bundled one on every machine.
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="ee-hf-home-")
os.environ.pop("HF_HUB_CACHE", None)
# Row lengths, dequantised rows, finished t-SNE maps and table-only downloads are cached;
# tests keep theirs out of the user's cache.
os.environ["EMBEDEXPLORER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ee-cache-")
# The app's t-SNE child steps back for the cores (nice 10): a test waits on it, and on a busy machine
# it would get a tenth of each other process's share. Tests run it at 0; test_word_maps checks the 10.
os.environ["EMBEDEXPLORER_TSNE_NICE"] = "0"

from .gpt2_fixture import build_gpt2_folder  # noqa: E402
from .llama_fixture import build_llama_folder  # noqa: E402


@pytest.fixture(scope="session")
def gpt2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_gpt2_folder(tmp_path_factory.mktemp("gpt2-lmhead"))


@pytest.fixture(scope="session")
def gpt2_varied_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GPT-2-shaped, its table's rows (the tied head) of differing lengths, as trained rows are."""
    return build_gpt2_folder(tmp_path_factory.mktemp("gpt2-varied"), rows_vary=True, seed=3)


@pytest.fixture(scope="session")
def llama_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Llama-shaped and small, with an output head of its own (untied) whose rows vary in length."""
    return build_llama_folder(tmp_path_factory.mktemp("llama-untied"))


@pytest.fixture(scope="session")
def gpt2_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GPT-2-shaped GGUF file as Ollama or LM Studio hand them out: IQ2_XXS rows (random blocks, which the search
    scans through its copy sixteen rows at a time) and GPT-2's tokenizer in its metadata."""
    import numpy as np
    from gguf.constants import GGMLQuantizationType

    from .gguf_fixture import gpt2_vocabulary, random_blocks, write_gguf

    tokens, merges = gpt2_vocabulary()
    qtype = GGMLQuantizationType.IQ2_XXS
    rows = random_blocks(len(tokens), 768, qtype, np.random.default_rng(7), (0.002, 0.05))
    path = tmp_path_factory.mktemp("gpt2-gguf") / "gpt2-iq2_xxs.gguf"
    return write_gguf(path, rows, qtype, tokens=tokens, merges=merges)


@pytest.fixture(scope="session")
def gpt2_table(gpt2_folder: Path):  # type: ignore[no-untyped-def]
    from embedexplorer import open_table

    return open_table(str(gpt2_folder))


@pytest.fixture(scope="session")
def minilm_table():  # type: ignore[no-untyped-def]
    from embedexplorer import open_table

    return open_table("bundled")
