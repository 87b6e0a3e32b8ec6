"""Q2_K and Q3_K blocks for tests: rows quantised by plain min-max quantisers, and random blocks.

The gguf package dequantises Q2_K and Q3_K but cannot quantise to them, so these write
llama.cpp's block layouts (``gguf.quants.Q2_K`` / ``Q3_K``) from rows; what numbers the blocks hold
is whatever gguf's ``dequantize`` reads from them, which is the tests' oracle.
"""

from __future__ import annotations

import numpy as np
from gguf.constants import GGMLQuantizationType as Q

# Where each type keeps its float16 scales inside a block (byte offsets), and its codes.
SCALE_BYTES = {Q.Q2_K: (80, 82), Q.Q3_K: (108,)}
CODE_BYTES = {Q.Q2_K: (16, 80), Q.Q3_K: (0, 96)}  # Q3_K: hmask then the low bits
BLOCK_BYTES = {Q.Q2_K: 84, Q.Q3_K: 110}


def _pack_two_bit(codes: np.ndarray) -> np.ndarray:
    """(blocks, 256) codes 0-3 as qs[64]: number 128 h + 32 s + j at bits 2 s of byte 32 h + j."""
    c = codes.reshape(-1, 2, 4, 32).astype(np.uint8)
    return (c[:, :, 0] | c[:, :, 1] << 2 | c[:, :, 2] << 4 | c[:, :, 3] << 6).reshape(-1, 64)


def q2_k_blocks(rows: np.ndarray) -> np.ndarray:
    """``rows`` as Q2_K: each sub-block of 16 gets a 4-bit scale and min under the block's d and dmin."""
    count, width = rows.shape
    x = np.asarray(rows, dtype=np.float32).reshape(-1, 16, 16)  # blocks, sub-blocks, numbers
    low = np.minimum(x.min(axis=2), 0.0)
    scale, mins = (x.max(axis=2) - low) / 3, -low
    d = (scale.max(axis=1) / 15).astype(np.float16)
    dmin = (mins.max(axis=1) / 15).astype(np.float16)
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.nan_to_num(np.clip(np.rint(scale / d[:, None].astype(np.float32)), 1, 15), nan=0.0)
        m = np.nan_to_num(np.clip(np.rint(mins / dmin[:, None].astype(np.float32)), 0, 15), nan=0.0)
        step = (d[:, None].astype(np.float32) * sc)[:, :, None]
        q = np.nan_to_num(np.rint((x + (dmin[:, None].astype(np.float32) * m)[:, :, None]) / step), nan=0.0)
    q = np.clip(q, 0, 3).astype(np.uint8).reshape(-1, 256)
    blocks = np.zeros((x.shape[0], 84), dtype=np.uint8)
    blocks[:, :16] = sc.astype(np.uint8) | (m.astype(np.uint8) << 4)
    blocks[:, 16:80] = _pack_two_bit(q)
    blocks[:, 80:82] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    blocks[:, 82:84] = dmin.astype("<f2").view(np.uint8).reshape(-1, 2)
    return blocks.reshape(count, width // 256 * 84)


def q3_k_blocks(rows: np.ndarray, seed: int = 0) -> np.ndarray:
    """``rows`` as Q3_K: each sub-block of 16 gets a signed 6-bit scale under the block's d (of either
    sign, drawn at random, so negative scales are covered) and q in -4 .. 3."""
    count, width = rows.shape
    x = np.asarray(rows, dtype=np.float32).reshape(-1, 16, 16)
    sign = np.where(np.random.default_rng(seed).random(x.shape[:2]) < 0.5, -1.0, 1.0).astype(np.float32)
    scale = np.abs(x).max(axis=2) / 4 * sign
    d = (np.abs(scale).max(axis=1) / 31).astype(np.float16)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.nan_to_num(np.clip(np.rint(scale / d[:, None].astype(np.float32)), -32, 31), nan=0.0)
        step = (d[:, None].astype(np.float32) * s)[:, :, None]
        q = np.nan_to_num(np.rint(x / step), nan=0.0, posinf=0.0, neginf=0.0)
    code = (np.clip(q, -4, 3) + 4).astype(np.uint8).reshape(-1, 256)  # q + 4: low bits and the hmask bit
    six = (s + 32).astype(np.uint8)
    blocks = np.zeros((x.shape[0], 110), dtype=np.uint8)
    high = (code >> 2).reshape(-1, 8, 32)  # number 32 k + j: bit k of hmask[j]
    blocks[:, :32] = (high << np.arange(8, dtype=np.uint8)[None, :, None]).sum(axis=1).astype(np.uint8)
    blocks[:, 32:96] = _pack_two_bit(code & 3)
    for k in range(16):
        blocks[:, 96 + k % 8] |= (six[:, k] & 15) << (4 * (k // 8))
        blocks[:, 104 + k % 4] |= (six[:, k] >> 4) << (2 * (k // 4))
    blocks[:, 108:110] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    return blocks.reshape(count, width // 256 * 110)


def low_bit_blocks(rows: np.ndarray, qtype: Q, seed: int = 0) -> np.ndarray:
    return q2_k_blocks(rows) if qtype == Q.Q2_K else q3_k_blocks(rows, seed)


def random_blocks(qtype: Q, count: int, width: int, seed: int) -> np.ndarray:
    """Every byte random but the float16 scales (finite, 0.002 to 0.05): every code and 4- or 6-bit scale."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, size=(count * width // 256, BLOCK_BYTES[qtype]), dtype=np.uint8)
    for offset in SCALE_BYTES[qtype]:
        scales = rng.uniform(0.002, 0.05, size=blocks.shape[0]).astype("<f2")
        blocks[:, offset : offset + 2] = scales.view(np.uint8).reshape(-1, 2)
    return blocks.reshape(count, width // 256 * BLOCK_BYTES[qtype])
