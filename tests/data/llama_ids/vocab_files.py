"""Where the vocabulary-only GGUF files are: llama.cpp's own (fetched by .ci/setup) and the ones we write."""

from __future__ import annotations

import os
from pathlib import Path

LLAMA_CPP_PYTHON = "0.3.36"
LLAMA_CPP = "llama.cpp 0c1e570 (2026-10-01), as vendored by llama-cpp-python 0.3.36"


def vocab_folder() -> Path:
    """The folder .ci/setup fills (EMBEDEXPLORER_LLAMA_VOCABS overrides it)."""
    default = Path.home() / ".cache" / "embedexplorer" / f"llama-vocabs-{LLAMA_CPP_PYTHON}"
    return Path(os.environ.get("EMBEDEXPLORER_LLAMA_VOCABS", default))
