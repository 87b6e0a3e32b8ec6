"""The vocabulary-only GGUF files the ids are compared on.

Real ones: llama.cpp's models/ggml-vocab-*.gguf, which .ci/setup extracts from llama-cpp-python's
source package.  Derived ones, for the pre-tokenizers and kinds llama.cpp ships no file for:
a real file with ``tokenizer.ggml.pre`` (or ``tokenizer.ggml.model``) changed, so that llama.cpp
runs that split or kind on a real vocabulary; RWKV's world vocabulary (from the rwkv
package's wheel, which .ci/setup fetches too), converted as llama.cpp's converter does; and
a PLaMo-2 vocabulary made from Llama's SentencePiece one as PLaMo-2's converter writes it.
"""

from __future__ import annotations

import ast
import os
from functools import lru_cache
from pathlib import Path

LLAMA_CPP_PYTHON = "0.3.36"
LLAMA_CPP = "llama.cpp 0c1e570 (2026-10-01), as vendored by llama-cpp-python 0.3.36"
RWKV_VOCAB = "rwkv_vocab_v20230424.txt"
# Texts a file's quirks need, stored after texts.py's in its ids: llama.cpp's PLaMo-2 table drops a
# leading U+FEFF, reads specials and <0xXX> as text, and stops its walk at the converter's [PADn]
# tokens (scored -1000), so the "x" before "[PAD1]" falls back to its byte.
EXTRA_TEXTS = {
    "derived-kind-plamo2.gguf": [
        "\ufeffhello world", "\ufeff", "a\ufeffb", " \ufeff", "[PAD1]", "x[PAD1]y", "[PAD2][PAD3]", "ab [PAD3]!",
        "<|plamo:bos|>Hi<|plamo:eos|>", "<|plamo:pad|>", "<0x41><0xFF>",
    ],
}  # fmt: skip
# Real files that stand for a split already; every other (split, options) of PRE_TOKENIZERS gets a derived file.
_BASE = "ggml-vocab-gpt-2.gguf"


def vocab_folder() -> Path:
    """The folder .ci/setup fills (EMBEDEXPLORER_LLAMA_VOCABS overrides it)."""
    default = Path.home() / ".cache" / "embedexplorer" / f"llama-vocabs-{LLAMA_CPP_PYTHON}"
    return Path(os.environ.get("EMBEDEXPLORER_LLAMA_VOCABS", default))


def derived_files() -> dict[str, tuple[str, dict[str, object]]]:
    """name -> (real file it copies, the keys it changes): one per pre-tokenizer behaviour not covered."""
    from embedexplorer.core.text.llama_pretokenizers import PRE_TOKENIZERS

    covered = {"bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma4", "gpt-2", "llama-bpe"}
    covered |= {"mpt", "qwen2", "qwen35", "refact", "starcoder", "default"}
    seen = {PRE_TOKENIZERS[name] for name in covered if name in PRE_TOKENIZERS}
    out: dict[str, tuple[str, dict[str, object]]] = {}
    seen.add(PRE_TOKENIZERS["whitespace"])  # derived-kind-whitespace runs it (as gpt2, llama.cpp crashes)
    for name, behaviour in sorted(PRE_TOKENIZERS.items()):
        if behaviour in seen:
            continue
        seen.add(behaviour)
        if behaviour.escape_whitespaces:  # a vocabulary of U+2581 pieces, read as "gpt2" with this split
            out[f"derived-pre-{name}.gguf"] = (
                "ggml-vocab-gemma-4.gguf",
                {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": name},
            )
        else:
            out[f"derived-pre-{name}.gguf"] = (_BASE, {"tokenizer.ggml.pre": name})
    out["derived-kind-whitespace.gguf"] = (
        _BASE,
        {"tokenizer.ggml.model": "whitespace", "tokenizer.ggml.pre": "whitespace"},
    )
    out["derived-kind-hybriddna.gguf"] = (_BASE, {"tokenizer.ggml.model": "hybriddna"})
    out["derived-kind-test.gguf"] = (_BASE, {"tokenizer.ggml.model": "test"})
    if rwkv_keys():
        out["derived-kind-rwkv.gguf"] = (_BASE, rwkv_keys())
    out["derived-kind-plamo2.gguf"] = ("ggml-vocab-llama-spm.gguf", plamo2_keys())
    # The same with Llama's own scores (0 down to -31,740, one -1000, one -1e9): llama.cpp's table
    # drops every score below -2000, stops its walk at -1000 and overflows its int32 at -1e9.
    raw_scores = [float(s) for s in _read("ggml-vocab-llama-spm.gguf")["tokenizer.ggml.scores"]]  # type: ignore[attr-defined]
    out["derived-kind-plamo2-raw-scores.gguf"] = (
        "ggml-vocab-llama-spm.gguf",
        {**plamo2_keys(), "tokenizer.ggml.scores": raw_scores + [0.0, -1000.0, -1000.0, -1000.0]},
    )
    return out


@lru_cache(maxsize=1)
def plamo2_keys() -> dict[str, object]:
    """Llama's SentencePiece vocabulary as PLaMo-2's converter would write it (conversion/base.py, _set_vocab_plamo).

    PLaMo-2's tokenizer.jsonl keeps spaces as spaces, scores pieces with log-probabilities,
    types its specials <|plamo:...|> CONTROL (UNKNOWN for unk) and its 256 <0xXX> pieces BYTE;
    the converter pads the vocabulary with [PADn] tokens scored -1000, typed UNUSED.  So: the
    same pieces with U+2581 as a space, a Zipf log-probability from each piece's rank (ties
    at 10^-4, llama.cpp's resolution, come out as real ones do), the specials renamed.
    """
    import numpy as np

    base = _read("ggml-vocab-llama-spm.gguf")
    tokens = [str(t).replace("\u2581", " ") for t in base["tokenizer.ggml.tokens"]]  # type: ignore[attr-defined]
    types = [int(t) for t in base["tokenizer.ggml.token_type"]]  # type: ignore[attr-defined]
    ranks = -np.asarray(base["tokenizer.ggml.scores"], dtype=np.float64)
    scores = np.where(np.asarray(types) == 1, -(np.log1p(ranks) + 3.0), 0.0).tolist()
    tokens[:3] = ["<|plamo:unk|>", "<|plamo:bos|>", "<|plamo:eos|>"]
    tokens.append("<|plamo:pad|>")
    types.append(3)
    scores.append(0.0)
    for i in range(1, 4):
        tokens.append(f"[PAD{i}]")
        types.append(5)
        scores.append(-1000.0)
    return {
        "tokenizer.ggml.model": "plamo2",
        "tokenizer.ggml.pre": "default",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.scores": scores,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.padding_token_id": len(tokens) - 4,
        "tokenizer.ggml.unknown_token_id": 0,
        "tokenizer.ggml.add_space_prefix": False,
        "llama.vocab_size": len(tokens),
    }


@lru_cache(maxsize=1)
def rwkv_keys() -> dict[str, object]:
    """RWKV's world vocabulary as llama.cpp's converter writes it (conversion/base.py, _set_vocab_rwkv_world)."""
    path = vocab_folder() / RWKV_VOCAB
    if not path.is_file():
        return {}
    tokens = ["<s>"]
    types = [3]
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split(" ")
        token = ast.literal_eval(" ".join(parts[1:-1]))  # a str or bytes literal: data, not code
        data = token.encode("utf-8") if isinstance(token, str) else token
        tokens.append(repr(data)[2:-1])
        types.append(1)
    for i in range(len(tokens), 65536):
        tokens.append(f"[PAD{i}]")
        types.append(5)
    return {
        "tokenizer.ggml.model": "rwkv",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.pre": None,
        "tokenizer.ggml.merges": None,
        "tokenizer.ggml.bos_token_id": 0,
        "tokenizer.ggml.eos_token_id": 0,
        "tokenizer.ggml.eot_token_id": 261,
    }


def all_files() -> list[str]:
    real = sorted(path.name for path in vocab_folder().glob("ggml-vocab-*.gguf"))
    return real + sorted(derived_files())


def metadata_of(name: str) -> dict[str, object]:
    """The metadata of a real or derived file, as EmbedExplorer's GGUF reader gives it."""
    import numpy as np

    if not name.startswith("derived-"):
        return _read(name)
    base, changes = derived_files()[name]
    metadata = dict(_read(base))
    if "tokenizer.ggml.tokens" in changes:  # a whole other vocabulary: none of the base's tokenizer keys
        metadata = {key: value for key, value in metadata.items() if not key.startswith("tokenizer.")}
    for key, value in changes.items():
        if value is None:
            metadata.pop(key, None)
        elif key == "tokenizer.ggml.token_type":
            metadata[key] = np.asarray(value, dtype=np.int32)
        elif key == "tokenizer.ggml.scores":
            metadata[key] = np.asarray(value, dtype=np.float32)
        else:
            metadata[key] = value
    return metadata


@lru_cache(maxsize=4)
def _read(name: str) -> dict[str, object]:
    from embedexplorer.core.formats.gguf_file import read_gguf

    return read_gguf(vocab_folder() / name).metadata


def write_derived(name: str, folder: Path) -> Path:
    """Write a derived file (for llama.cpp): the base file's keys, with this file's changes."""
    import gguf

    base, changes = derived_files()[name]
    reader = gguf.GGUFReader(str(vocab_folder() / base))
    architecture = str(reader.fields["general.architecture"].contents())
    writer = gguf.GGUFWriter(str(folder / name), architecture)
    own_vocabulary = "tokenizer.ggml.tokens" in changes  # none of the base's tokenizer keys
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture" or key in changes:
            continue
        if own_vocabulary and key.startswith("tokenizer."):
            continue
        sub_type = field.types[-1] if len(field.types) > 1 else None
        writer.add_key_value(key, field.contents(), field.types[0], sub_type=sub_type)
    for key, value in changes.items():
        if value is None:
            continue
        if isinstance(value, str):
            writer.add_string(key, value)
        elif key == "tokenizer.ggml.tokens":
            writer.add_token_list(value)  # type: ignore[arg-type]
        elif key == "tokenizer.ggml.token_type":
            writer.add_token_types(value)  # type: ignore[arg-type]
        elif key == "tokenizer.ggml.scores":
            writer.add_token_scores(value)  # type: ignore[arg-type]
        elif isinstance(value, bool):
            writer.add_bool(key, value)
        else:
            writer.add_uint32(key, int(value))  # type: ignore[call-overload]
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return folder / name
