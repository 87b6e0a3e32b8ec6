/* Q4_0, Q4_K and Q6_K against the integer query by AVX-512 VNNI (included by _quants.c once, inside its
 * x86 block, after quants_avx512.h).
 *
 * vpdpbusd multiplies 64 unsigned bytes by 64 signed ones and adds each run of four products into
 * one of 16 int32 sums, in one instruction.  The stored numbers are the unsigned bytes (Q4_K's
 * and Q4_0's nibbles, 0-15; Q6_K's 6-bit q, 0-63, before its 32 is taken off); the query's 16-bit integers
 * xq (|xq| <= 2^14, quantise_query) are split into two signed bytes, xq = 256 high + low
 * (split_query): two instructions give sum q high and sum q low, and 256 times the first plus the
 * second is sum q xq over each four numbers, exactly (at most 4 x 63 x 2^14 < 2^24 in size: exact
 * as float32 too).  Q6_K's sum (q - 32) xq takes 32 times the query's own sum over the same four
 * numbers off in int32 (split_query makes those): still exact, at most 4 x 32 x 2^14; Q4_0's
 * sum (q - 8) xq likewise takes 8 times it off.
 *
 * So each int32 sum is exactly what the 16-bit scan's pair sums add up to, and the float work is
 * the same (each sum times its sub-block's weight d s step, added into one of four running sums
 * by one fused multiply-add, the four added in a tree at the end): the bound at the top of
 * _quants.c holds unchanged, only with four products behind each integer sum instead of two.
 * Q4_K's min offsets are multiplied, then added (row_integer fuses the two): one more rounding
 * of each offset, still far fewer than the width roundings gamma_width allows each term.
 * Widening bytes to 16 bits (the 16-bit scan's shuffles, one port) is what this skips.  With
 * Q4_K's scales unpacked in lanes and Q6_K's 6-bit numbers put together by one affine byte map
 * (GFNI), one core's time for the GPT-2-shaped tables, measured side by side with the 16-bit scan
 * (at load 2-6): Q4_K 1.9-2.0 ms against 2.4-2.5 ms, Q6_K 1.8-1.9 ms against 3.0-3.4 ms.
 *
 * Against the query in single bytes (low NULL: a table's own search of Q4_K or Q6_K blocks read as stored,
 * quant_query_prepare's coarse query): products is q . xq, one instruction, with |xq| <= 127 (at most 4 x 63 x 127:
 * exact); Q6_K's centres are 32 times the byte query's sums, Q4_K's paired table each run's free step and that step
 * times its sum (rounded once).  Each weight is then rounded once more than above (d s step, d scale step), and the
 * offsets once more: each term still goes through far fewer roundings than the width, and the query's own rounding is
 * the measured margin of quants_iq.h's top.  Qwen2-7B-sized, one core: Q4_K 28-30 ms -> 23.5 ms, Q6_K 37-40 -> 20-31.
 */
#ifndef EMBEDEXPLORER_QUANTS_VNNI_H
#define EMBEDEXPLORER_QUANTS_VNNI_H

#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,gfni,f16c,fma")))

/* Q4_K's eight scales and eight mins (as q4_k_scales gives them: d s and dmin m) in one vector, the
 * 6-bit numbers gathered from their 12 bytes by two byte shuffles (llama.cpp's unpacking, in lanes). */
VNNI_TARGET static ALWAYS_INLINE __m512 q4_k_scales_mins(const uint8_t *block)
{
    __m128i packed = _mm_loadu_si128((const __m128i *)(block + 4)); /* the 12 bytes, and 4 of the numbers */
    /* Each output byte's low bits (scales 0-7, then mins 0-7) and, for 4-7 and 12-15, their two high bits. */
    __m128i low = _mm_shuffle_epi8(packed, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    __m128i top = _mm_shuffle_epi8(packed, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    low = _mm_mask_mov_epi8(low, (__mmask16)0xF000, _mm_srli_epi16(low, 4)); /* mins 4-7: the high nibbles */
    low = _mm_and_si128(low, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15));
    __m128i six = _mm_or_si128(low, _mm_and_si128(_mm_srli_epi16(top, 2), _mm_set1_epi8(0x30)));
    uint32_t scales_bits;
    memcpy(&scales_bits, block, sizeof scales_bits); /* d, dmin */
    __m128 both = _mm_cvtph_ps(_mm_cvtsi32_si128((int)scales_bits));
    __m512 d = _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                                     _mm512_castps128_ps512(both));
    return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(six)));
}

/* xq as bytes for vpdpbusd: xq = 256 high + low with low in [-128, 127] and, as |xq| <= 2^14,
 * high in [-64, 64]; for Q6_K and Q4_0 also offset (32, 8: what the type takes off its stored q) times
 * each four numbers' sum of xq (centre, width / 4). */
static void split_query(const int16_t *xq, const float *step, Py_ssize_t width, int8_t *high, int8_t *low,
                        int32_t *centre, int32_t offset, float *paired)
{
    if (paired != NULL) /* Q4_K: per block, the eight runs' steps, then their sums (step * sum xq) */
        for (Py_ssize_t b = 0; b < width / 256; b++)
            for (int k = 0; k < 8; k++) {
                paired[16 * b + k] = step[8 * b + k];
                paired[16 * b + 8 + k] = step[width / 32 + 8 * b + k];
            }
    for (Py_ssize_t j = 0; j < width; j++) {
        int value = xq[j];
        int part = ((value + 128) & 255) - 128;
        low[j] = (int8_t)part;
        high[j] = (int8_t)((value - part) / 256);
    }
    if (centre != NULL)
        for (Py_ssize_t j = 0; j < width; j += 4)
            centre[j / 4] = offset * ((int32_t)xq[j] + xq[j + 1] + xq[j + 2] + xq[j + 3]);
}

/* sum q xq over each run of four bytes, exactly: 256 (q . high) + (q . low); with low NULL (the query in single bytes,
 * a constant where inlined: rows_vnni) q . high. */
VNNI_TARGET static ALWAYS_INLINE __m512i products(__m512i q, const int8_t *high, const int8_t *low)
{
    __m512i upper = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, _mm512_loadu_si512((const void *)high));
    if (low == NULL)
        return upper;
    return _mm512_dpbusd_epi32(_mm512_slli_epi32(upper, 8), q, _mm512_loadu_si512((const void *)low));
}

/* Two Q4_0 blocks (64 numbers) as one vector: block b's 16 bytes in 128-bit lanes 0 and 1, b + 1's in 2
 * and 3, lanes 1 and 3 shifted down a nibble (numbers 0-15 are the low nibbles, 16-31 the high), and
 * sum (q - 8) xq over each four numbers: exact, at most 4 x 8 x 2^14 in size.  Lanes 0-7 are block b's,
 * 8-15 b + 1's; with live the low 32 bytes only, block b alone (b + 1 is not read). */
VNNI_TARGET static ALWAYS_INLINE __m512i q4_0_pair(const uint8_t *block, Py_ssize_t at, __mmask64 live,
                                                  const int8_t *high, const int8_t *low, const int32_t *centre)
{
    __m512i both = _mm512_zextsi256_si512(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(block + 2))));
    if (live == ~(__mmask64)0)
        both = _mm512_inserti64x4(both, _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(block + 20))), 1);
    __m512i q = _mm512_and_si512(_mm512_mask_srli_epi16(both, (__mmask32)0xFF00FF00u, both, 4), _mm512_set1_epi8(0x0F));
    __m512i upper = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, _mm512_maskz_loadu_epi8(live, high + at));
    __m512i sums4 = _mm512_dpbusd_epi32(_mm512_slli_epi32(upper, 8), q, _mm512_maskz_loadu_epi8(live, low + at));
    return _mm512_sub_epi32(sums4, _mm512_maskz_loadu_epi32((__mmask16)(live == ~(__mmask64)0 ? 0xFFFF : 0x00FF),
                                                            centre + (at >> 2)));
}

VNNI_TARGET static ALWAYS_INLINE float row_vnni(int kind, const uint8_t *row, const int8_t *high, const int8_t *low,
                                                const int32_t *centre, const float *step, const float *paired,
                                                Py_ssize_t width)
{
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    if (kind == KIND_Q4_0) {
        /* Sixteen blocks' weights d step at a time, their scales by one gather (as row_integer's Q8_0);
         * then the blocks two to a vector (q4_0_pair), each pair's two weights permuted from those. */
        const __m512i block_starts = _mm512_set_epi32(270, 252, 234, 216, 198, 180, 162, 144, 126, 108, 90, 72, 54,
                                                      36, 18, 0); /* 18 bytes a block */
        Py_ssize_t blocks = width / 32;
        for (Py_ssize_t first = 0; first < blocks; first += 16) {
            int count = blocks - first < 16 ? (int)(blocks - first) : 16;
            __mmask16 live = (__mmask16)((1u << count) - 1u);
            __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, block_starts,
                                                        (const void *)(row + first * 18), 1);
            /* Exact: step is a power of two; a block past the last weighs 0. */
            __m512 weights = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(words)),
                                           _mm512_maskz_loadu_ps(live, step + first));
            int k = 0;
            for (; k + 1 < count; k += 2) {
                Py_ssize_t b = first + k;
                __m512i centred = q4_0_pair(row + b * 18, 32 * b, ~(__mmask64)0, high, low, centre);
                __m512i which = _mm512_inserti64x4(_mm512_set1_epi32(k), _mm256_set1_epi32(k + 1), 1);
                acc[(k >> 1) & 3] = _mm512_fmadd_ps(_mm512_permutexvar_ps(which, weights),
                                                    _mm512_cvtepi32_ps(centred), acc[(k >> 1) & 3]);
            }
            if (k < count) { /* the last block alone: half a vector read, the other half weighing 0 */
                Py_ssize_t b = first + k;
                __m512i centred = q4_0_pair(row + b * 18, 32 * b, (__mmask64)0xFFFFFFFFu, high, low, centre);
                __m512i which = _mm512_inserti64x4(_mm512_set1_epi32(k), _mm256_set1_epi32(k + 1), 1);
                acc[0] = _mm512_fmadd_ps(_mm512_permutexvar_ps(which, weights), _mm512_cvtepi32_ps(centred), acc[0]);
            }
        }
    } else if (kind == KIND_Q4_K) {
        const __m512i low_bits = _mm512_set1_epi8(0x0F);
        /* Lanes 0-7 sum the weights (unused), 8-15 the min offsets (m n) (step sum xq), as row_integer's. */
        __m512 offsets = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b * 256 < width; b++) {
            const uint8_t *block = row + b * 144;
            /* The eight sub-blocks' weights d s step (exact: step is a power of two), then their offsets. */
            __m512 weights = _mm512_mul_ps(q4_k_scales_mins(block), _mm512_loadu_ps(paired + 16 * b));
            offsets = _mm512_add_ps(offsets, weights);
            for (int c = 0; c < 4; c++) {
                /* 32 bytes in both halves; the upper half's shifted down: sub-block 2c's numbers
                 * (low nibbles) in bytes 0-31, 2c + 1's (high nibbles) in 32-63, in order. */
                __m512i both = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(block + 16 + 32 * c)));
                __m512i q = _mm512_and_si512(_mm512_mask_srli_epi16(both, (__mmask32)0xFFFF0000u, both, 4), low_bits);
                Py_ssize_t at = 256 * b + 64 * c;
                __m512i sums4 = products(q, high + at, low == NULL ? NULL : low + at);
                __m512i which = _mm512_inserti64x4(_mm512_set1_epi32(2 * c), _mm256_set1_epi32(2 * c + 1), 1);
                acc[c] = _mm512_fmadd_ps(_mm512_permutexvar_ps(which, weights), _mm512_cvtepi32_ps(sums4), acc[c]);
            }
        }
        __m256 mins = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(offsets), 1));
        __m128 half = _mm_add_ps(_mm256_castps256_ps128(mins), _mm256_extractf128_ps(mins, 1));
        half = _mm_add_ps(half, _mm_movehl_ps(half, half));
        half = _mm_add_ss(half, _mm_movehdup_ps(half));
        return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]))) -
               _mm_cvtss_f32(half);
    }
    if (kind == KIND_Q4_0)
        return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
    /* KIND_Q6_K: 128 numbers at a time from 64 bytes of ql and 32 of qh, as in row_integer. */
    const __m512i four = _mm512_set1_epi8(0x0F);
    /* qh's two bits s, s + 1 of each byte to bits 4 and 5, all others 0 (an affine map over GF(2): output
     * bit i is the parity of the input byte and matrix byte 7 - i), s 0 and 2 for the numbers of q[0]'s
     * two halves, 4 and 6 for q[1]'s. */
#define QH_BITS(s) ((long long)((1ull << (s)) << 24 | (1ull << ((s) + 1)) << 16))
    const __m512i first_bits = _mm512_set_epi64(QH_BITS(2), QH_BITS(2), QH_BITS(2), QH_BITS(2), QH_BITS(0), QH_BITS(0),
                                                QH_BITS(0), QH_BITS(0));
    const __m512i second_bits = _mm512_set_epi64(QH_BITS(6), QH_BITS(6), QH_BITS(6), QH_BITS(6), QH_BITS(4),
                                                 QH_BITS(4), QH_BITS(4), QH_BITS(4));
#undef QH_BITS
    /* Lane i of a 64-number group holds numbers 4i .. 4i + 3: sub-block i / 4 of the group's four. */
    const __m512i quarter = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    for (Py_ssize_t b = 0; b * 256 < width; b++) {
        const uint8_t *block = row + b * 210;
        __m512 weights = q6_k_weights(block, step + 8 * b);
        for (int h = 0; h < 2; h++) {
            __m512i ql = _mm512_loadu_si512((const void *)(block + 64 * h));
            __m512i both = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(block + 128 + 32 * h)));
            __m512i q[2];
            /* (ql's nibble & 0x0F) | qh's two bits at 4-5: one ternary-logic instruction (0xEC: a & c | b). */
            __m512i bits = _mm512_gf2p8affine_epi64_epi8(both, first_bits, 0);
            q[0] = _mm512_ternarylogic_epi32(ql, bits, four, 0xEC);
            bits = _mm512_gf2p8affine_epi64_epi8(both, second_bits, 0);
            q[1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), bits, four, 0xEC);
            for (int g = 0; g < 2; g++) { /* numbers 64g .. 64g + 63 of the half: sub-blocks 8h + 4g .. + 3 */
                Py_ssize_t at = 256 * b + 128 * h + 64 * g;
                __m512i centred = _mm512_sub_epi32(products(q[g], high + at, low == NULL ? NULL : low + at),
                                                   _mm512_loadu_si512((const void *)(centre + (at >> 2))));
                __m512i which = _mm512_add_epi32(quarter, _mm512_set1_epi32(8 * h + 4 * g));
                acc[2 * h + g] = _mm512_fmadd_ps(_mm512_permutexvar_ps(which, weights), _mm512_cvtepi32_ps(centred),
                                                 acc[2 * h + g]);
            }
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

VNNI_TARGET static void rows_vnni(int kind, const uint8_t *rows, Py_ssize_t row_bytes, const int8_t *high,
                                  const int8_t *low, const int32_t *centre, const float *step, const float *paired,
                                  const float *scale, float *out, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    Py_ssize_t ahead = PREFETCH_BYTES / row_bytes + 1;
    for (Py_ssize_t i = start; i < stop; i++) {
        if (i + ahead < stop)
            prefetch_pages(rows + (i + ahead) * row_bytes, row_bytes);
        /* Q4_K and Q6_K against the query in single bytes: their own copies of the loop, products' second half
         * gone. */
        const uint8_t *row = rows + i * row_bytes;
        float total;
        if (kind == KIND_Q6_K && low == NULL)
            total = row_vnni(KIND_Q6_K, row, high, NULL, centre, step, paired, width);
        else if (kind == KIND_Q4_K && low == NULL)
            total = row_vnni(KIND_Q4_K, row, high, NULL, centre, step, paired, width);
        else
            total = row_vnni(kind, row, high, low, centre, step, paired, width);
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}

#endif
