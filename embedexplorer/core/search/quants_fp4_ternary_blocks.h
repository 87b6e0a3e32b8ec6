/* NVFP4 and TQ1_0 blocks dequantised as the gguf package does (included by _quants.c once, before
 * dequantise_block; the scans of these kinds are in quants_fp4_ternary.h).
 *
 * Each number comes out as the very float32 gguf's dequantize gives, because every product below is
 * exact in float32 (so neither the order of the multiplications nor fusing can change it):
 *   NVFP4  v = d * k[q]   d = gguf's ue4m3_to_fp32 (with its half) of the sub-block's scale byte x:
 *          0 for x = 0 or 0x7F, else M 2^(E - 10) with e = (x >> 3) & 15, m = x & 7 (bit 7 is not
 *          read: 0xFF is 240), M = m and E = 0 for e = 0, M = 8 + m and E = e - 1 otherwise: at
 *          most 4 significant bits, in [2^-10, 240]; k[q] one of the doubled e2m1 values (|k| <= 12,
 *          2 bits): at most 6 bits, exact;
 *   TQ1_0  v = d * (q - 1)   d float16, q in {0, 1, 2}: llama.cpp's base-3 digit, the top two bits of
 *          3 (b 3^m mod 256) for byte b and digit m: d, 0 or -d, exact (a signed zero as gguf's too).
 */
#ifndef EMBEDEXPLORER_QUANTS_FP4_TERNARY_BLOCKS_H
#define EMBEDEXPLORER_QUANTS_FP4_TERNARY_BLOCKS_H

/* gguf.quants.NVFP4.kvalues: the e2m1 values doubled. */
static const int8_t NVFP4_VALUES[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* An NVFP4 scale byte as gguf's ue4m3_to_fp32 gives it (with its half), bit for bit. */
static ALWAYS_INLINE float nvfp4_scale(uint8_t x)
{
    int e = (x >> 3) & 15, m = x & 7;
    if (x == 0x7F)
        return 0.0f;
    return e == 0 ? ldexpf((float)m, -10) : ldexpf((float)(8 + m), e - 11);
}

/* The same number as the grouped copy keeps it, one byte as stored: 0 for 0, else (P << 3) | f for
 * (1 + f / 8) 2^(P - 11) (P in 1..18: every scale, 2^-10 to 240, has at most 4 significant bits), so
 * that its bits shifted to a float32's exponent and mantissa give it times a power of two. */
static ALWAYS_INLINE uint8_t nvfp4_scale_code(uint8_t x)
{
    float d = nvfp4_scale(x);
    uint32_t bits;
    memcpy(&bits, &d, sizeof bits);
    if (d == 0.0f)
        return 0;
    return (uint8_t)(((int)(bits >> 23) - 127 + 11) << 3 | (int)((bits >> 20) & 7));
}

/* NVFP4: scale bytes x[4], qs[32]; sub-block s's numbers 0-7 are the low nibbles of qs[8 s ..], 8-15
 * the high ones. */
static ALWAYS_INLINE void nvfp4_block(const uint8_t *block, float *v)
{
    for (int s = 0; s < 4; s++) {
        float d = nvfp4_scale(block[s]);
        const uint8_t *qs = block + 4 + 8 * s;
        for (int j = 0; j < 8; j++) {
            v[16 * s + j] = d * (float)NVFP4_VALUES[qs[j] & 0x0F];
            v[16 * s + 8 + j] = d * (float)NVFP4_VALUES[qs[j] >> 4];
        }
    }
}

/* TQ1_0's digit m (0-4) of byte b: 0, 1 or 2. */
static ALWAYS_INLINE int tq1_0_digit(uint8_t b, int m)
{
    static const uint8_t powers[5] = {1, 3, 9, 27, 81};
    return ((uint8_t)(b * powers[m]) * 3) >> 8;
}

/* TQ1_0: qs[48], qh[4], d.  Byte j < 32 holds numbers 32 m + j (m = 0..4), byte 32 + j (j < 16)
 * numbers 160 + 16 m + j, qh byte j numbers 240 + 4 m + j (m = 0..3). */
static ALWAYS_INLINE void tq1_0_block(const uint8_t *block, float d, float *v)
{
    for (int m = 0; m < 5; m++) {
        for (int j = 0; j < 32; j++)
            v[32 * m + j] = d * (float)(tq1_0_digit(block[j], m) - 1);
        for (int j = 0; j < 16; j++)
            v[160 + 16 * m + j] = d * (float)(tq1_0_digit(block[32 + j], m) - 1);
    }
    for (int m = 0; m < 4; m++)
        for (int j = 0; j < 4; j++)
            v[240 + 4 * m + j] = d * (float)(tq1_0_digit(block[48 + j], m) - 1);
}

#endif
