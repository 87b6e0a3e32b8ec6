/* IQ4_XS, TQ2_0 and MXFP4 blocks dequantised as the gguf package does (included by _quants.c once,
 * before dequantise_block; the scans of these kinds are in quants_lookup.h).
 *
 * Each number comes out as the very float32 gguf's dequantize gives, because every product below is
 * exact in float32 (no rounding, so the order of the multiplications cannot matter):
 *   IQ4_XS  v = (d * (ls - 32)) * k[q]   d float16 (at most 11 significant bits, its lowest at least
 *           2^-24), ls - 32 in [-32, 31]: d (ls - 32) has at most 16 bits; k[q] one of IQ4_NL's 16
 *           int8 values (|k| <= 127, 7 bits): at most 23 bits, inside float32's range;
 *   TQ2_0   v = d * (q - 1)     q - 1 in [-1, 2]: d or 2 d, exact;
 *   MXFP4   v = d * k[q]        d = 2^(e - 128) (gguf's e8m0_to_fp32_half: 2^-128 for e = 0, 2^-127
 *           for 1, both subnormal, and never NaN: e = 255 is 2^127), k[q] one of the doubled e2m1
 *           values (|k| <= 12): a power of two times 4 bits, so exact, subnormal ones too (multiples of
 *           2^-128), or an infinity where it passes float32's largest (e >= 253 with |k| >= 8, as in
 *           gguf: such a row has an infinite length and points nowhere).
 * A float16 d of infinity or NaN gives infinity or NaN as gguf does (NaN where it meets a zero).
 */
#ifndef EMBEDEXPLORER_QUANTS_LOOKUP_BLOCKS_H
#define EMBEDEXPLORER_QUANTS_LOOKUP_BLOCKS_H

/* MXFP4's e2m1 values doubled (gguf.quants.MXFP4); IQ4_XS's are IQ4_NL_VALUES (quants_groups32.h, included
 * before this). */
static const int8_t E2M1_VALUES[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* Sub-block i's 6-bit scale ls of an IQ4_XS block (0-63; the scale is ls - 32): four low bits from
 * scales_l (bytes 4-7), two high ones from the 16-bit scales_h (bytes 2-3). */
static ALWAYS_INLINE int iq4_xs_scale(const uint8_t *block, int i)
{
    int high = (block[2] | block[3] << 8) >> (2 * i) & 3;
    return (block[4 + i / 2] >> (4 * (i % 2)) & 0x0F) | high << 4;
}

/* An e8m0 byte as gguf's e8m0_to_fp32_half: 2^(e - 128), bit for bit. */
static ALWAYS_INLINE float e8m0_half(uint8_t e)
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* IQ4_XS: d, scales_h, scales_l[4], qs[128]; sub-block i's numbers 0-15 are the low nibbles of
 * qs[16 i ..], 16-31 the high ones. */
static ALWAYS_INLINE void iq4_xs_block(const uint8_t *block, float d, float *v)
{
    for (int i = 0; i < 8; i++) {
        float scale = d * (float)(iq4_xs_scale(block, i) - 32);
        const uint8_t *qs = block + 8 + 16 * i;
        for (int j = 0; j < 16; j++) {
            v[32 * i + j] = scale * (float)IQ4_NL_VALUES[qs[j] & 0x0F];
            v[32 * i + 16 + j] = scale * (float)IQ4_NL_VALUES[qs[j] >> 4];
        }
    }
}

/* TQ2_0: qs[64], d; byte 32 h + j holds numbers 128 h + 32 s + j in bits 2 s, 2 s + 1 (s = 0..3). */
static ALWAYS_INLINE void tq2_0_block(const uint8_t *block, float d, float *v)
{
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int j = 0; j < 32; j++)
                v[128 * h + 32 * s + j] = d * (float)((block[32 * h + j] >> (2 * s) & 3) - 1);
}

/* MXFP4: e, qs[16]; numbers 0-15 the low nibbles, 16-31 the high ones. */
static ALWAYS_INLINE void mxfp4_block(const uint8_t *block, float *v)
{
    float d = e8m0_half(block[0]);
    for (int j = 0; j < 16; j++) {
        v[j] = d * (float)E2M1_VALUES[block[1 + j] & 0x0F];
        v[16 + j] = d * (float)E2M1_VALUES[block[1 + j] >> 4];
    }
}

#endif
