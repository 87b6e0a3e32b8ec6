/* The AVX-512 scans of _quants.c (included there once, inside its x86 block): the float scan of
 * every type and the integer-query scan of Q8_0, Q4_0, Q4_K and Q6_K.  Why each is exact enough, and the
 * layouts of the blocks, are at the top of _quants.c. */
#ifndef EMBEDEXPLORER_QUANTS_AVX512_H
#define EMBEDEXPLORER_QUANTS_AVX512_H

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,f16c,fma")))

/* 16 bytes as 16 float32: signed, or unsigned less a constant. */
AVX512_TARGET static ALWAYS_INLINE __m512 signed16(__m128i bytes)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
}

AVX512_TARGET static ALWAYS_INLINE __m512 unsigned16(__m128i bytes, int less)
{
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), _mm512_set1_epi32(less)));
}

/* A float16 scale by the F16C instruction (the portable widening is a dozen operations). */
AVX512_TARGET static ALWAYS_INLINE float half_f16c(const uint8_t *at)
{
    uint16_t bits;
    memcpy(&bits, at, sizeof bits);
    return _cvtsh_ss(bits);
}

AVX512_TARGET static ALWAYS_INLINE __m128i load16(const uint8_t *at)
{
    return _mm_loadu_si128((const __m128i *)at);
}

AVX512_TARGET static ALWAYS_INLINE __m128i nibbles(__m128i bytes, int shift)
{
    return _mm_and_si128(_mm_srli_epi16(bytes, shift), _mm_set1_epi8(0x0F));
}

/* Q4_K's scales and mins as q4_k_scales unpacks them, eight at a time (llama.cpp's utmp trick):
 * the scalar unpacking and conversions took as many instructions as the numbers' own. */
AVX512_TARGET static ALWAYS_INLINE void q4_k_scales_avx(const uint8_t *block, float *scale, float *min)
{
    uint32_t a, b, c;
    memcpy(&a, block + 4, 4), memcpy(&b, block + 8, 4), memcpy(&c, block + 12, 4);
    uint32_t packed[4] = {a & 0x3F3F3F3Fu, (c & 0x0F0F0F0Fu) | (((a >> 6) & 0x03030303u) << 4), b & 0x3F3F3F3Fu,
                          ((c >> 4) & 0x0F0F0F0Fu) | (((b >> 6) & 0x03030303u) << 4)};
    __m128i bytes = _mm_loadu_si128((const __m128i *)packed); /* 8 scales, then 8 mins */
    __m256 scales = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
    __m256 mins = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)));
    _mm256_storeu_ps(scale, _mm256_mul_ps(_mm256_set1_ps(half_f16c(block)), scales));
    _mm256_storeu_ps(min, _mm256_mul_ps(_mm256_set1_ps(half_f16c(block + 2)), mins));
}

/* One row's dot product with the query: four running sums of 16 lanes, added in a tree. */
AVX512_TARGET static ALWAYS_INLINE float row_avx512(int kind, const uint8_t *row, const float *x, Py_ssize_t width)
{
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    if (kind == KIND_Q8_0 || kind == KIND_Q4_0) {
        Py_ssize_t block_bytes = BLOCK_BYTES[kind];
        for (Py_ssize_t b = 0; b * 32 < width; b++) {
            const uint8_t *block = row + b * block_bytes;
            __m512 d = _mm512_set1_ps(half_f16c(block));
            __m512 first, second;
            if (kind == KIND_Q8_0) {
                first = signed16(load16(block + 2)), second = signed16(load16(block + 18));
            } else {
                __m128i bytes = load16(block + 2);
                first = unsigned16(nibbles(bytes, 0), 8), second = unsigned16(nibbles(bytes, 4), 8);
            }
            int a = (int)(b & 1) * 2;
            acc[a] = _mm512_fmadd_ps(_mm512_mul_ps(d, first), _mm512_loadu_ps(x + 32 * b), acc[a]);
            acc[a + 1] = _mm512_fmadd_ps(_mm512_mul_ps(d, second), _mm512_loadu_ps(x + 32 * b + 16), acc[a + 1]);
        }
    } else if (kind == KIND_Q4_K) {
        for (Py_ssize_t b = 0; b * 256 < width; b++) {
            const uint8_t *block = row + b * 144;
            const float *xb = x + 256 * b;
            float scale[8], min[8];
            q4_k_scales_avx(block, scale, min);
            for (int c = 0; c < 4; c++) {
                /* 32 bytes: low nibbles are sub-block 2c, high nibbles 2c + 1. */
                __m128i first = load16(block + 16 + 32 * c), second = load16(block + 32 + 32 * c);
                __m512 s0 = _mm512_set1_ps(scale[2 * c]), m0 = _mm512_set1_ps(min[2 * c]);
                __m512 s1 = _mm512_set1_ps(scale[2 * c + 1]), m1 = _mm512_set1_ps(min[2 * c + 1]);
                /* v = s * q - m rounded once, as gguf's float32 (see the top of the file). */
                __m512 v0 = _mm512_fmsub_ps(s0, unsigned16(nibbles(first, 0), 0), m0);
                __m512 v1 = _mm512_fmsub_ps(s0, unsigned16(nibbles(second, 0), 0), m0);
                __m512 v2 = _mm512_fmsub_ps(s1, unsigned16(nibbles(first, 4), 0), m1);
                __m512 v3 = _mm512_fmsub_ps(s1, unsigned16(nibbles(second, 4), 0), m1);
                acc[0] = _mm512_fmadd_ps(v0, _mm512_loadu_ps(xb + 64 * c), acc[0]);
                acc[1] = _mm512_fmadd_ps(v1, _mm512_loadu_ps(xb + 64 * c + 16), acc[1]);
                acc[2] = _mm512_fmadd_ps(v2, _mm512_loadu_ps(xb + 64 * c + 32), acc[2]);
                acc[3] = _mm512_fmadd_ps(v3, _mm512_loadu_ps(xb + 64 * c + 48), acc[3]);
            }
        }
    } else { /* KIND_Q6_K */
        for (Py_ssize_t b = 0; b * 256 < width; b++) {
            const uint8_t *block = row + b * 210;
            const int8_t *scales = (const int8_t *)(block + 192);
            float d = half_f16c(block + 208);
            for (int h = 0; h < 2; h++)
                for (int t = 0; t < 8; t++) {
                    __m128i low = nibbles(load16(block + 64 * h + 16 * (t % 4)), 4 * (t / 4));
                    __m128i high = _mm_and_si128(_mm_srli_epi16(load16(block + 128 + 32 * h + 16 * (t % 2)), 2 * (t / 2)),
                                                 _mm_set1_epi8(3));
                    __m128i q = _mm_or_si128(low, _mm_slli_epi16(high, 4));
                    /* (d s) q and 32 (d s) are exact (24 bits at most), so is their difference:
                     * one fused multiply-subtract gives v = (d s) (q - 32) exactly. */
                    float ds = d * (float)scales[8 * h + t];
                    __m512 v = _mm512_fmsub_ps(_mm512_set1_ps(ds), unsigned16(q, 0), _mm512_set1_ps(32.0f * ds));
                    acc[t % 4] = _mm512_fmadd_ps(v, _mm512_loadu_ps(x + 256 * b + 128 * h + 16 * t), acc[t % 4]);
                }
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

AVX512_TARGET static void rows_avx512(int kind, const uint8_t *rows, Py_ssize_t row_bytes, const float *query,
                                      const float *scale, float *out, Py_ssize_t start, Py_ssize_t stop,
                                      Py_ssize_t width)
{
    for (Py_ssize_t i = start; i < stop; i++) {
        float total = row_avx512(kind, rows + i * row_bytes, query, width);
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}


/* A Q6_K block's 16 weights d s_k step for the integer scans: sub-block k (16 numbers) lies in the
 * query's run k / 2 of the block's eight (``steps``); exact, step being a power of two. */
AVX512_TARGET static ALWAYS_INLINE __m512 q6_k_weights(const uint8_t *block, const float *steps)
{
    const __m512i step_pairs = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    __m512 step = _mm512_permutexvar_ps(step_pairs, _mm512_maskz_loadu_ps(0xFF, steps));
    __m512 scales = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(block + 192)));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(half_f16c(block + 208)), scales), step);
}

/* Q8_0, Q4_0 and Q6_K against a query held as 16-bit integers (quantise_query): the stored
 * integers are multiplied and summed in pairs by one instruction (vpmaddwd), exactly, and
 * each block's 16 integer sums are scaled once in float32.  A third of the float work of
 * dequantising every number, which is what held these scans to 2-3x a plain read. */
AVX512_TARGET static ALWAYS_INLINE float row_integer(int kind, const uint8_t *row, const int16_t *xq,
                                                     const float *step, Py_ssize_t width)
{
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    if (kind == KIND_Q8_0) {
        Py_ssize_t blocks = width / 32;
        const __m512i block_starts = _mm512_set_epi32(510, 476, 442, 408, 374, 340, 306, 272, 238, 204, 170, 136, 102,
                                                      68, 34, 0); /* 34 bytes a block */
        for (Py_ssize_t first = 0; first < blocks; first += 16) {
            /* Sixteen blocks' weights d step in one conversion and one product (exact: step is a power of two). */
            int count = blocks - first < 16 ? (int)(blocks - first) : 16;
            float weight[16];
            /* Each block's first four bytes (its float16 scale, then two numbers) by one gather: the
             * scales copied one by one into a buffer and loaded as one vector made every load wait for
             * the copies to land (2.5 ms of one core for GPT-2's Q8_0 table, 2.1 ms with the gather). */
            __mmask16 live = (__mmask16)((1u << count) - 1u);
            __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, block_starts,
                                                        (const void *)(row + first * 34), 1);
            __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words));
            _mm512_storeu_ps(weight, _mm512_mul_ps(d, _mm512_maskz_loadu_ps((__mmask16)((1u << count) - 1u), step + first)));
            for (int k = 0; k < count; k++) {
                Py_ssize_t b = first + k;
                const uint8_t *block = row + b * 34;
                __m512i q = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(block + 2)));
                __m512i pairs = _mm512_madd_epi16(q, _mm512_loadu_si512((const void *)(xq + 32 * b)));
                acc[k & 3] = _mm512_fmadd_ps(_mm512_set1_ps(weight[k]), _mm512_cvtepi32_ps(pairs), acc[k & 3]);
            }
        }
    } else if (kind == KIND_Q4_0) {
        /* q - 8 (at most 8 in size) times xq summed in pairs, exactly; each block's weight d step, exact. */
        const __m512i eight = _mm512_set1_epi16(8);
        for (Py_ssize_t b = 0; b * 32 < width; b++) {
            const uint8_t *block = row + b * 18;
            __m128i bytes = load16(block + 2);
            __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(nibbles(bytes, 0)), nibbles(bytes, 4), 1);
            __m512i q = _mm512_sub_epi16(_mm512_cvtepu8_epi16(both), eight);
            __m512i pairs = _mm512_madd_epi16(q, _mm512_loadu_si512((const void *)(xq + 32 * b)));
            acc[b & 3] = _mm512_fmadd_ps(_mm512_set1_ps(half_f16c(block) * step[b]), _mm512_cvtepi32_ps(pairs), acc[b & 3]);
        }
    } else if (kind == KIND_Q4_K) {
        /* sum (D q - M) x~ as D-weighted integer sums less the mins times the query's run sums. */
        const float *sums = step + width / 32;
        const __m256i low_bits = _mm256_set1_epi8(0x0F);
        __m256 offsets = _mm256_setzero_ps();
        for (Py_ssize_t b = 0; b * 256 < width; b++) {
            const uint8_t *block = row + b * 144;
            float scale[8], min[8], weight[8];
            q4_k_scales_avx(block, scale, min);
            offsets = _mm256_fmadd_ps(_mm256_loadu_ps(min), _mm256_loadu_ps(sums + 8 * b), offsets);
            /* d s step for the eight sub-blocks at once (exact: step is a power of two). */
            _mm256_storeu_ps(weight, _mm256_mul_ps(_mm256_loadu_ps(scale), _mm256_loadu_ps(step + 8 * b)));
            for (int c = 0; c < 4; c++) {
                __m256i bytes = _mm256_loadu_si256((const __m256i *)(block + 16 + 32 * c));
                __m512i low = _mm512_cvtepu8_epi16(_mm256_and_si256(bytes, low_bits));
                __m512i high = _mm512_cvtepu8_epi16(_mm256_and_si256(_mm256_srli_epi16(bytes, 4), low_bits));
                const int16_t *x = xq + 256 * b + 64 * c;
                __m512i first = _mm512_madd_epi16(low, _mm512_loadu_si512((const void *)x));
                __m512i second = _mm512_madd_epi16(high, _mm512_loadu_si512((const void *)(x + 32)));
                acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(weight[2 * c]), _mm512_cvtepi32_ps(first), acc[c]);
                acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(weight[2 * c + 1]), _mm512_cvtepi32_ps(second), acc[c]);
            }
        }
        __m128 half = _mm_add_ps(_mm256_castps256_ps128(offsets), _mm256_extractf128_ps(offsets, 1));
        half = _mm_add_ps(half, _mm_movehl_ps(half, half));
        half = _mm_add_ss(half, _mm_movehdup_ps(half));
        return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]))) -
               _mm_cvtss_f32(half);
    } else { /* KIND_Q6_K: 128 numbers at a time from 64 bytes of ql and 32 of qh */
        const __m512i four = _mm512_set1_epi8(0x0F), two = _mm512_set1_epi8(3), offset = _mm512_set1_epi16(32);
        /* qh's 2-bit pieces: numbers 0-31 and 32-63 of a half are bits 0-1 and 2-3, 64-127 bits 4-7. */
        const __m512i first_shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
        const __m512i second_shifts = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(6), 1);
        for (Py_ssize_t b = 0; b * 256 < width; b++) {
            const uint8_t *block = row + b * 210;
            __m512 weights = q6_k_weights(block, step + 8 * b);
            for (int h = 0; h < 2; h++) {
                __m512i ql = _mm512_loadu_si512((const void *)(block + 64 * h));
                __m256i qh = _mm256_loadu_si256((const __m256i *)(block + 128 + 32 * h));
                __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(qh), qh, 1);
                __m512i q[2];
                q[0] = _mm512_or_si512(_mm512_and_si512(ql, four),
                                       _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(both, first_shifts), two), 4));
                q[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), four),
                                       _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(both, second_shifts), two), 4));
                for (int u = 0; u < 4; u++) { /* 32 numbers: sub-blocks k and k + 1 */
                    __m256i bytes = u % 2 ? _mm512_extracti64x4_epi64(q[u / 2], 1) : _mm512_castsi512_si256(q[u / 2]);
                    __m512i centred = _mm512_sub_epi16(_mm512_cvtepu8_epi16(bytes), offset);
                    Py_ssize_t at = 256 * b + 128 * h + 32 * u;
                    __m512i pairs = _mm512_madd_epi16(centred, _mm512_loadu_si512((const void *)(xq + at)));
                    int k = 8 * h + 2 * u;
                    __m512 weight = _mm512_permutexvar_ps(_mm512_inserti64x4(_mm512_set1_epi32(k), _mm256_set1_epi32(k + 1), 1),
                                                          weights);
                    acc[u] = _mm512_fmadd_ps(weight, _mm512_cvtepi32_ps(pairs), acc[u]);
                }
            }
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

AVX512_TARGET static void rows_integer(int kind, const uint8_t *rows, Py_ssize_t row_bytes, const int16_t *xq,
                                       const float *step, const float *scale, float *out, Py_ssize_t start,
                                       Py_ssize_t stop, Py_ssize_t width)
{
    Py_ssize_t ahead = PREFETCH_BYTES / row_bytes + 1;
    for (Py_ssize_t i = start; i < stop; i++) {
        if (i + ahead < stop)
            prefetch_pages(rows + (i + ahead) * row_bytes, row_bytes);
        float total = row_integer(kind, rows + i * row_bytes, xq, step, width);
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}

#endif
