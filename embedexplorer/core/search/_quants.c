/* A neighbour query's first pass over GGUF quantised rows, read as the file stores them.
 *
 * A Q4_K table is 0.56 bytes a number, a bfloat16 copy of it 2: scanning the blocks in
 * place reads a quarter of the bytes and makes no copy.  Each row's score is its dot
 * product with the float32 query, times the row's stored reciprocal length (0 for a
 * row that points nowhere), as for 16-bit rows (_scan.c).
 *
 * Why the score is within StoredScreen.error_bound of the exact cosine (times |query|):
 * every number is first dequantised to the very float32 the gguf package's dequantize
 * gives (the rows the exact pass reads), not an approximation of it:
 *   Q8_0  v = d * q           d float16 (11 significant bits), q int8 (7 bits): 18 bits, exact;
 *   Q4_0  v = d * (q - 8)     11 + 4 bits, exact;
 *   Q6_K  v = (d * s) * (q - 32)   d * s (s int8) has 18 bits, q - 32 at most 32 in size:
 *                             at most 23 bits, so both products are exact in float32;
 *   Q4_K  v = (d * s) * q - (m * n)   d * s and m * n (s, n 6-bit) have 17 bits, times q
 *                             (4 bits) 21: exact; gguf then rounds the difference once,
 *                             and a fused multiply-subtract rounds the same exact
 *                             difference once, to the same float32.
 * The scan then sums v_j * x_j in float32: 16 lanes (times the unrolling) each add
 * width / 16 fused products in turn, and the lanes are added in a tree, so no product
 * goes through more than width roundings, and the sum is within gamma_width of the sum
 * of |v_j x_j| (Higham, Accuracy and Stability, 3.1), which is at most |v| |x| by
 * Cauchy-Schwarz: accumulation_error(width) in Python.  This is the bound of a 16-bit
 * row's scan with no rounding of its numbers, so neighbours.search keeps every row that
 * could be among the best and rescores it in float64 from the dequantised numbers.
 *
 * On AVX-512, Q8_0 and Q6_K rows are scanned against the query held as 16-bit integers
 * (quantise_query): x = step_B xq + e, with step_B a power of two per run B of 32 numbers, so
 * |e| <= QUERY_ROUNDING |x|.  Each stored integer (q, or q - 32) times xq is summed in pairs
 * exactly (int32, below 2^24, so exact as float32 too), and a block's pair sums are multiplied
 * by d step_B (Q8_0) or d s step_B (Q6_K), products of a float16, a small integer and a power of
 * two: exact.  So the sum is, up to float32 rounding, sum v_j (step xq)_j = v.x - v.e: within
 * gamma_width |v| |x - e| of it as above, and |v.e| <= |v| |e| (Cauchy-Schwarz).  Divided by
 * |v| by the scale, the score is within QUERY_ROUNDING |x| + (1 + QUERY_ROUNDING) times the
 * float bound of the cosine times |x|: StoredScreen.error_bound adds exactly that.
 *
 * Built three times on x86 (AVX-512 by hand, AVX2 and plain from portable C), the best
 * one the CPU runs picked at import; -march=native is never used (the wheel runs anywhere).
 */
#include "scan_common.h"

#include <math.h>

enum { KIND_Q8_0, KIND_Q4_0, KIND_Q4_K, KIND_Q6_K, KINDS };

/* Numbers and bytes per block of each kind (GGML_QUANT_SIZES). */
static const Py_ssize_t BLOCK_NUMBERS[KINDS] = {32, 32, 256, 256};
static const Py_ssize_t BLOCK_BYTES[KINDS] = {34, 18, 144, 210};

static ALWAYS_INLINE float half_at(const uint8_t *at)
{
    uint16_t bits;
    memcpy(&bits, at, sizeof bits);
    return widen_half(bits);
}

/* Q4_K's eight 6-bit scales and mins, packed in 12 bytes (llama.cpp's get_scale_min_k4). */
static ALWAYS_INLINE void q4_k_scales(const uint8_t *packed, float d, float dmin, float *scale, float *min)
{
    for (int j = 0; j < 4; j++) {
        scale[j] = d * (float)(packed[j] & 63);
        min[j] = dmin * (float)(packed[j + 4] & 63);
        scale[j + 4] = d * (float)((packed[j + 8] & 0x0F) | ((packed[j] >> 6) << 4));
        min[j + 4] = dmin * (float)((packed[j + 8] >> 4) | ((packed[j + 4] >> 6) << 4));
    }
}

/* One block's numbers, dequantised exactly as gguf does (see the top of the file). */
static ALWAYS_INLINE void dequantise_block(int kind, const uint8_t *block, float *v)
{
    switch (kind) {
    case KIND_Q8_0: {
        float d = half_at(block);
        for (int j = 0; j < 32; j++)
            v[j] = d * (float)(int8_t)block[2 + j];
        break;
    }
    case KIND_Q4_0: {
        float d = half_at(block);
        for (int j = 0; j < 16; j++) {
            v[j] = d * (float)((block[2 + j] & 0x0F) - 8);
            v[j + 16] = d * (float)((block[2 + j] >> 4) - 8);
        }
        break;
    }
    case KIND_Q4_K: {
        float scale[8], min[8];
        q4_k_scales(block + 4, half_at(block), half_at(block + 2), scale, min);
        const uint8_t *qs = block + 16;
        for (int c = 0; c < 4; c++)
            for (int j = 0; j < 32; j++) {
                uint8_t byte = qs[32 * c + j];
                /* The product is exact, so the one rounding is the subtraction's, fused or not. */
                v[64 * c + j] = scale[2 * c] * (float)(byte & 0x0F) - min[2 * c];
                v[64 * c + 32 + j] = scale[2 * c + 1] * (float)(byte >> 4) - min[2 * c + 1];
            }
        break;
    }
    default: { /* KIND_Q6_K: ql[128], qh[64], int8 scales[16], d */
        const uint8_t *ql = block, *qh = block + 128;
        const int8_t *scales = (const int8_t *)(block + 192);
        float d = half_at(block + 208);
        for (int e = 0; e < 256; e++) {
            int h = e / 128, r = e % 128;
            int low = (ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0F;
            int high = (qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
            v[e] = (d * (float)scales[e / 16]) * (float)((low | (high << 4)) - 32);
        }
        break;
    }
    }
}

#define LANES 16

/* Portable rows: each block dequantised into a small buffer, then its products added
 * into LANES running sums (the compiler vectorises both loops). */
static ALWAYS_INLINE void rows_portable(int kind, const uint8_t *rows, Py_ssize_t row_bytes, const float *query,
                                        const float *scale, float *out, Py_ssize_t start, Py_ssize_t stop,
                                        Py_ssize_t width)
{
    Py_ssize_t per_block = BLOCK_NUMBERS[kind], block_bytes = BLOCK_BYTES[kind];
    float v[256];
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint8_t *row = rows + i * row_bytes;
        float lanes[LANES] = {0};
        for (Py_ssize_t b = 0; b * per_block < width; b++) {
            dequantise_block(kind, row + b * block_bytes, v);
            const float *x = query + b * per_block;
            for (Py_ssize_t j = 0; j < per_block; j += LANES)
                for (int lane = 0; lane < LANES; lane++)
                    lanes[lane] += v[j + lane] * x[j + lane];
        }
        float total = 0.0f;
        for (int half = LANES / 2; half > 0; half /= 2) /* a tree: log2(LANES) roundings */
            for (int lane = 0; lane < half; lane++)
                lanes[lane] += lanes[lane + half];
        total = lanes[0];
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}

typedef void (*rows_function)(int, const uint8_t *, Py_ssize_t, const float *, const float *, float *, Py_ssize_t,
                              Py_ssize_t, Py_ssize_t);

static void rows_plain(int kind, const uint8_t *rows, Py_ssize_t row_bytes, const float *query, const float *scale,
                       float *out, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    rows_portable(kind, rows, row_bytes, query, scale, out, start, stop, width);
}

static rows_function chosen_rows = rows_plain;
static const char *chosen_name = "plain";
/* Q8_0 and Q6_K against a 16-bit integer query (AVX-512 builds only). */
static int integer_scan = 0;

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

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

__attribute__((target("avx2,fma"))) static void rows_avx2(int kind, const uint8_t *rows, Py_ssize_t row_bytes,
                                                          const float *query, const float *scale, float *out,
                                                          Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    rows_portable(kind, rows, row_bytes, query, scale, out, start, stop, width);
}

/* Q8_0 and Q6_K against a query held as 16-bit integers (quantise_query): the stored
 * integers are multiplied and summed in pairs by one instruction (vpmaddwd), exactly, and
 * each block's 16 integer sums are scaled once in float32.  A third of the float work of
 * dequantising every number, which is what held these scans to 2-3x a plain read. */
AVX512_TARGET static ALWAYS_INLINE float row_integer(int kind, const uint8_t *row, const int16_t *xq,
                                                     const float *step, Py_ssize_t width)
{
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    if (kind == KIND_Q8_0) {
        for (Py_ssize_t b = 0; b * 32 < width; b++) {
            const uint8_t *block = row + b * 34;
            __m512i q = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(block + 2)));
            __m512i pairs = _mm512_madd_epi16(q, _mm512_loadu_si512((const void *)(xq + 32 * b)));
            __m512 weight = _mm512_set1_ps(half_f16c(block) * step[b]);
            acc[b & 3] = _mm512_fmadd_ps(weight, _mm512_cvtepi32_ps(pairs), acc[b & 3]);
        }
    } else { /* KIND_Q6_K: 128 numbers at a time from 64 bytes of ql and 32 of qh */
        const __m512i four = _mm512_set1_epi8(0x0F), two = _mm512_set1_epi8(3), offset = _mm512_set1_epi16(32);
        /* qh's 2-bit pieces: numbers 0-31 and 32-63 of a half are bits 0-1 and 2-3, 64-127 bits 4-7. */
        const __m512i first_shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
        const __m512i second_shifts = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(6), 1);
        const __m512i step_pairs = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
        for (Py_ssize_t b = 0; b * 256 < width; b++) {
            const uint8_t *block = row + b * 210;
            /* weight[k] = d s_k step: sub-block k (16 numbers) lies in the query's run b * 8 + k / 2. */
            __m512 steps = _mm512_permutexvar_ps(step_pairs, _mm512_maskz_loadu_ps(0xFF, step + 8 * b));
            __m512 weights = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(half_f16c(block + 208)),
                                                         _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(block + 192)))),
                                           steps);
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
    for (Py_ssize_t i = start; i < stop; i++) {
        float total = row_integer(kind, rows + i * row_bytes, xq, step, width);
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}

static void choose_rows(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
        chosen_rows = rows_avx512;
        chosen_name = "avx512f";
        integer_scan = 1;
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chosen_rows = rows_avx2;
        chosen_name = "avx2";
    }
}
#else
static void choose_rows(void) {}
#endif

struct quant_job {
    int kind;
    const uint8_t *rows;
    Py_ssize_t row_bytes, width;
    const float *query, *scale;
    float *out;
    const int16_t *xq; /* the query as integers, or NULL: the float scan */
    const float *step;
};

static void quant_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct quant_job *q = job;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (q->xq != NULL) {
        rows_integer(q->kind, q->rows, q->row_bytes, q->xq, q->step, q->scale, q->out, start, stop, q->width);
        return;
    }
#endif
    chosen_rows(q->kind, q->rows, q->row_bytes, q->query, q->scale, q->out, start, stop, q->width);
}

/* The query as 16-bit integers, 32 numbers to a step: x = step * xq + e.  Each step is a power of
 * two (so step times a block's float16 scale is exact) with the block's largest number below
 * 2^15 steps; xq is rounded and held to +-32767, so |e_j| <= step <= largest / 2^14, and
 * |e| <= sqrt(32) |x| / 2^14 (QUERY_ROUNDING, which Python adds to the bound).  False when a
 * step would leave float32's comfortable range (a query of huge or tiny numbers): the float scan. */
static int quantise_query(const float *x, Py_ssize_t width, int16_t *xq, float *step)
{
    for (Py_ssize_t b = 0; b * 32 < width; b++) {
        float largest = 0.0f;
        for (int j = 0; j < 32; j++)
            largest = fmaxf(largest, fabsf(x[32 * b + j]));
        int exponent = 0;
        frexpf(largest, &exponent); /* largest = f 2^exponent, 0.5 <= f < 1 */
        if (largest == 0.0f)
            exponent = 0;
        if (!(largest < 1e30f) || exponent - 15 < -100)
            return 0;
        step[b] = ldexpf(1.0f, exponent - 15);
        for (int j = 0; j < 32; j++) {
            float q = nearbyintf(x[32 * b + j] / step[b]);
            xq[32 * b + j] = (int16_t)(q > 32767.0f ? 32767.0f : (q < -32767.0f ? -32767.0f : q));
        }
    }
    return 1;
}

static PyObject *quant_scores(PyObject *self, PyObject *args)
{
    Py_buffer rows, query, scale, out, progress;
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iy*y*w*w*", &rows, &kind, &query, &scale, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(float);
    if (kind < 0 || kind >= KINDS) {
        PyErr_SetString(PyExc_ValueError, "kind must be 0 (Q8_0), 1 (Q4_0), 2 (Q4_K) or 3 (Q6_K)");
    } else if (width == 0 || query.len % (Py_ssize_t)sizeof(float) != 0 || width % BLOCK_NUMBERS[kind] != 0) {
        PyErr_SetString(PyExc_ValueError, "the query must hold a whole number of blocks of float32 numbers");
    } else if (rows.len != count * (width / BLOCK_NUMBERS[kind]) * BLOCK_BYTES[kind]) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) rows of len(query) quantised numbers");
    } else if (scale.len != out.len) {
        PyErr_SetString(PyExc_ValueError, "scale must hold one float32 per row");
    } else if (check_progress(&progress)) {
        struct quant_job job = {kind, rows.buf, (width / BLOCK_NUMBERS[kind]) * BLOCK_BYTES[kind], width,
                                query.buf, scale.buf, out.buf, NULL, NULL};
        int16_t *xq = NULL;
        float *step = NULL;
        if (integer_scan && (kind == KIND_Q8_0 || kind == KIND_Q6_K)) {
            xq = PyMem_RawMalloc((size_t)width * sizeof(int16_t));
            step = PyMem_RawMalloc((size_t)(width / 32) * sizeof(float));
            if (xq != NULL && step != NULL && quantise_query(query.buf, width, xq, step))
                job.xq = xq, job.step = step;
        }
        result = share_chunks_released(quant_chunk, &job, count, &progress);
        PyMem_RawFree(xq);
        PyMem_RawFree(step);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&scale);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

/* Rows as float32, block by block: the numbers gguf's dequantize gives (see the top of the file),
 * a hundred times faster than its numpy code; the exact pass and the lengths read these. */
static PyObject *dequantise(PyObject *self, PyObject *args)
{
    Py_buffer rows, out;
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iw*", &rows, &kind, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t numbers = out.len / (Py_ssize_t)sizeof(float);
    if (kind < 0 || kind >= KINDS) {
        PyErr_SetString(PyExc_ValueError, "kind must be 0 (Q8_0), 1 (Q4_0), 2 (Q4_K) or 3 (Q6_K)");
    } else if (out.len % (Py_ssize_t)sizeof(float) != 0 || numbers % BLOCK_NUMBERS[kind] != 0 ||
               rows.len != numbers / BLOCK_NUMBERS[kind] * BLOCK_BYTES[kind]) {
        PyErr_SetString(PyExc_ValueError, "out must hold the float32 numbers of every block of rows");
    } else {
        const uint8_t *blocks = rows.buf;
        float *values = out.buf;
        Py_ssize_t count = numbers / BLOCK_NUMBERS[kind];
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t b = 0; b < count; b++)
            dequantise_block(kind, blocks + b * BLOCK_BYTES[kind], values + b * BLOCK_NUMBERS[kind]);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    return result;
}

/* For tests: run a given build ("plain", "avx2", "avx512f") where this CPU can; answers the one now in use. */
static PyObject *use_build(PyObject *self, PyObject *args)
{
    const char *name;
    (void)self;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    choose_rows();
    if (strcmp(name, "plain") == 0) {
        chosen_rows = rows_plain, chosen_name = "plain", integer_scan = 0;
    }
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    else if (strcmp(name, "avx2") == 0 && strcmp(chosen_name, "plain") != 0) {
        chosen_rows = rows_avx2, chosen_name = "avx2", integer_scan = 0;
    }
#endif
    else if (strcmp(name, "avx512f-float") == 0 && integer_scan) {
        integer_scan = 0; /* the AVX-512 build's float scan for every type */
        return PyUnicode_FromString("avx512f-float");
    }
    return PyUnicode_FromString(chosen_name);
}

static PyMethodDef quant_methods[] = {
    {"dequantise", dequantise, METH_VARARGS,
     "dequantise(rows, kind, out)\n\nWrite the float32 numbers of quantised rows (GGUF blocks, uint8) into out,\n"
     "as gguf's dequantize gives them, without the GIL."},
    {"use_build", use_build, METH_VARARGS,
     "use_build(name)\n\nFor tests: scan with the named build (plain, avx2, avx512f) where this CPU runs it,\n"
     "else the best one; returns the name of the build now in use."},
    {"quant_scores", quant_scores, METH_VARARGS,
     "quant_scores(rows, kind, query, scale, out, progress)\n\n"
     "Write scale[i] times the dot product of quantised row i (GGUF blocks as stored, uint8; kind 0\n"
     "Q8_0, 1 Q4_0, 2 Q4_K, 3 Q6_K) with the float32 query into out (0 where scale[i] is 0), without\n"
     "the GIL; threads that call it with the same zeroed progress (two int64) share the rows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef quant_module = {
    PyModuleDef_HEAD_INIT, "_quants", "A neighbour query's first pass over GGUF quantised rows.", -1, quant_methods,
};

PyMODINIT_FUNC PyInit__quants(void)
{
    choose_rows();
    PyObject *module = PyModule_Create(&quant_module);
    if (module != NULL && (PyModule_AddStringConstant(module, "INSTRUCTIONS", chosen_name) < 0 ||
                           PyModule_AddObject(module, "QUERY_ROUNDING", PyFloat_FromDouble(sqrt(32.0) / 16384.0)) < 0)) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
