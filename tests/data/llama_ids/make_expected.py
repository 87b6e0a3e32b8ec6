"""Write expected.json.gz: the ids llama.cpp itself gives for every text of texts.py, per vocabulary file.

Needs llama-cpp-python built from its source package (CPU):

    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_BLAS=OFF" pip install --no-binary llama-cpp-python llama-cpp-python==0.3.36
    python3 tests/data/llama_ids/make_expected.py [FILE_NAME ...]

The vocabulary files are where .ci/setup puts them (vocab_files.py); the derived ones are
written to a temporary folder for llama.cpp.  Each file runs in its own process, so that a text
that crashes llama.cpp names itself instead of ending the run.  The call is
``Llama.tokenize(text, add_bos=False, special=False)``, which is
``llama_tokenize(add_special=false, parse_special=false)``.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[2])]  # these helpers, and this checkout's package

from texts import texts  # noqa: E402
from vocab_files import EXTRA_TEXTS, LLAMA_CPP, LLAMA_CPP_PYTHON, all_files, vocab_folder, write_derived  # noqa: E402

OUT = HERE / "expected.json.gz"


def ids_of_one_file(path: str) -> None:
    """Child: print the ids of every text (and the file's EXTRA_TEXTS) as one JSON line (None: llama.cpp refused)."""
    from llama_cpp import Llama

    model = Llama(model_path=path, vocab_only=True, verbose=False)
    out = []
    for text in texts() + EXTRA_TEXTS.get(Path(path).name, []):
        try:
            out.append(model.tokenize(text.encode("utf-8"), add_bos=False, special=False))
        except Exception:  # noqa: BLE001 - llama.cpp refused this text; say so in the data
            out.append(None)
    print(json.dumps(out))


def main(folder: Path, only: list[str]) -> None:
    """All files, or with ``only`` just those names, kept beside the other files' stored ids."""
    import llama_cpp

    assert llama_cpp.__version__ == LLAMA_CPP_PYTHON, f"expected llama-cpp-python {LLAMA_CPP_PYTHON}"
    result: dict[str, object] = {"llama_cpp": LLAMA_CPP, "llama_cpp_python": LLAMA_CPP_PYTHON, "texts": texts()}
    ids: dict[str, object] = {}
    if only:
        stored = json.loads(gzip.decompress(OUT.read_bytes()))
        assert stored["texts"] == texts() and stored["llama_cpp"] == LLAMA_CPP
        ids = stored["ids"]
    derived = Path(tempfile.mkdtemp(prefix="llama-derived-"))
    for name in only or all_files():
        path = write_derived(name, derived) if name.startswith("derived-") else folder / name
        run = subprocess.run(
            [sys.executable, __file__, "--one", str(path)], capture_output=True, text=True, timeout=3600
        )
        if run.returncode != 0:
            print(f"{path.name}: llama.cpp failed: {run.stderr.strip()[-500:]}", file=sys.stderr)
            continue
        ids[path.name] = json.loads(run.stdout.strip().splitlines()[-1])
        print(f"{path.name}: {len(ids[path.name])} texts", file=sys.stderr)  # type: ignore[arg-type]
    result["ids"] = ids
    OUT.write_bytes(gzip.compress(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode(), mtime=0))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        ids_of_one_file(sys.argv[2])
    else:
        main(vocab_folder(), sys.argv[1:])
