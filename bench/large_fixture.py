"""Current-model-sized fixtures, built once under bench/.cache: a Qwen2-7B-shaped bfloat16 folder and its Q4_K GGUF.

The folder has the shape that matters for opening: a 152,064 x 3,584 bfloat16 table
(1.09 GB) in the first of two shards with an index, random rows, and a byte-level BPE
tokenizer of 151,643 tokens plus special tokens, synthesised from GPT-2's merges by
joining existing tokens (so every merge is valid and ids are stable), with Qwen2's
pre-tokenizer split.  The GGUF holds the same vocabulary ("gpt2" model, "qwen2" split)
and the same shape stored as Q4_K: random blocks with finite scales, because the gguf
package cannot quantise to K types.  The Gemma-sized folder (262,144 x 5,376) is the
same recipe, larger.
"""

from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path

import numpy as np

from bench.common import CACHE

QWEN_ROWS, QWEN_WIDTH, QWEN_TOKENS = 152_064, 3_584, 151_643
GEMMA_ROWS, GEMMA_WIDTH = 262_144, 5_376
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_BLOCK_ROWS = 8192


def synthetic_vocabulary(size: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``size`` byte-level BPE tokens in id order and the merges that make them (GPT-2's, then joins)."""
    from tests.gguf_fixture import gpt2_vocabulary

    tokens, merges = gpt2_vocabulary()
    tokens = [t for t in tokens if t != "<|endoftext|>"]
    known = set(tokens)
    rng = random.Random(seed)
    # Join a word-start token and a continuation, both short enough to stay readable.
    starts = [t for t in tokens if t.startswith("\u0120") and 2 <= len(t) <= 6 and t[1:].isalpha()]
    rests = [t for t in tokens if not t.startswith("\u0120") and 1 <= len(t) <= 4 and t.isalpha()]
    while len(tokens) < size:
        left, right = rng.choice(starts), rng.choice(rests)
        joined = left + right
        if joined in known:
            continue
        known.add(joined)
        tokens.append(joined)
        merges.append(f"{left} {right}")
    return tokens, merges


def build_tokenizer(tokens: list[str], merges: list[str]):  # type: ignore[no-untyped-def]
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    vocab = {token: i for i, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[tuple(m.split(" ", 1)) for m in merges]))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_QWEN_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    return tokenizer


def _write_safetensors(path: Path, name: str, rows: int, width: int, seed: int) -> None:
    """A single-tensor bfloat16 safetensors file written block by block (never whole in memory)."""
    header = {name: {"dtype": "BF16", "shape": [rows, width], "data_offsets": [0, rows * width * 2]}}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    rng = np.random.default_rng(seed)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(raw)) + raw)
        for start in range(0, rows, _BLOCK_ROWS):
            block = rng.standard_normal((min(_BLOCK_ROWS, rows - start), width), dtype=np.float32) * 0.02
            out.write((block.view(np.uint32) >> 16).astype("<u2").tobytes())


def _write_small(path: Path, width: int) -> None:
    norm = np.ones(width, dtype=np.float32)
    raw = json.dumps({"model.norm.weight": {"dtype": "F32", "shape": [width], "data_offsets": [0, norm.nbytes]}})
    data = raw.encode() + b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(data)) + data + norm.tobytes())


def bf16_folder(name: str, rows: int, width: int, tokens_count: int) -> Path:
    """A sharded bfloat16 model folder with a synthesised byte-level BPE tokenizer, built once."""
    folder = CACHE / name
    if (folder / "tokenizer.json").is_file():
        return folder
    print(f"building {folder} ({rows:,} x {width:,} bfloat16, once) ...", file=sys.stderr, flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    first, second = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
    _write_safetensors(folder / first, "model.embed_tokens.weight", rows, width, seed=0)
    _write_small(folder / second, width)
    index = {"metadata": {}, "weight_map": {"model.embed_tokens.weight": first, "model.norm.weight": second}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    config = {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "vocab_size": rows,
        "hidden_size": width,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": False,
        "bos_token_id": tokens_count,
        "eos_token_id": tokens_count,
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tokens, merges = synthetic_vocabulary(tokens_count)
    build_tokenizer(tokens, merges).save(str(folder / "tokenizer.json"))
    return folder


def qwen_folder() -> Path:
    return bf16_folder("qwen2-7b-shaped-bf16", QWEN_ROWS, QWEN_WIDTH, QWEN_TOKENS)


def gemma_folder() -> Path:
    return bf16_folder("gemma-sized-bf16", GEMMA_ROWS, GEMMA_WIDTH, QWEN_TOKENS)


def qwen_q4k_gguf() -> Path:
    """The Qwen2-7B-shaped table as a Q4_K GGUF with the same vocabulary, built once."""
    return qwen_gguf("Q4_K")


def qwen_gguf(type_name: str) -> Path:
    """The Qwen2-7B-shaped table as a GGUF of ``type_name`` (F16, or any quantised type the app reads):
    random blocks with finite scales (``tests.gguf_fixture.random_blocks``; the gguf package cannot
    quantise to most types), built once."""
    import gguf
    from gguf.constants import GGMLQuantizationType

    path = CACHE / f"qwen2-7b-shaped-{type_name.lower()}.gguf"
    if path.is_file():
        return path
    print(f"building {path} (once) ...", file=sys.stderr, flush=True)
    tokens, merges = synthetic_vocabulary(QWEN_TOKENS)
    tokens = tokens + SPECIAL
    types = [1] * QWEN_TOKENS + [3] * len(SPECIAL)
    qtype = GGMLQuantizationType[type_name]
    rng = np.random.default_rng(1)
    if type_name == "F16":
        table = np.empty((QWEN_ROWS, QWEN_WIDTH), dtype=np.float16)
        for start in range(0, QWEN_ROWS, _BLOCK_ROWS):
            block = table[start : start + _BLOCK_ROWS]
            block[:] = rng.standard_normal(block.shape, dtype=np.float32) * 0.02
        raw_shape = (QWEN_ROWS, QWEN_WIDTH)
    else:
        from tests.gguf_fixture import random_blocks

        table = random_blocks(QWEN_ROWS, QWEN_WIDTH, qtype, rng, (0.0005, 0.002))
        raw_shape = table.shape
    temporary = path.with_suffix(".tmp")
    writer = gguf.GGUFWriter(str(temporary), "qwen2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_merges(merges)
    writer.add_token_types(types)
    writer.add_rope_dimension_count(128)
    writer.add_tensor("token_embd.weight", table, raw_shape=raw_shape, raw_dtype=qtype)
    writer.add_tensor("output_norm.weight", np.ones(QWEN_WIDTH, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    temporary.rename(path)
    return path
