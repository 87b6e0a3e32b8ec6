/* The 32-number blocks (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL): their dequantiser, and a copy of their rows
 * sixteen at a time with its AVX-512 VNNI scan, Q8_0's too (included by _quants.c once, after its kinds and
 * half_at; the scan needs immintrin.h, which _quants.c includes first on x86).
 *
 * Blocks as stored (GGML_QUANT_SIZES; number j < 16 is qs[j]'s low nibble, j >= 16 qs[j - 16]'s high
 * one, its fifth bit, for the Q5 types, bit j of qh read little-endian):
 *   Q4_0   half d, qs[16]               v = d (q - 8)
 *   Q4_1   half d, half m, qs[16]       v = d q + m
 *   Q5_0   half d, qh[4], qs[16]        v = d (q - 16)
 *   Q5_1   half d, half m, qh[4], qs[16]    v = d q + m
 *   IQ4_NL half d, qs[16]               v = d k[q], k llama.cpp's kvalues_iq4nl (int8)
 *   Q8_0   half d, int8 qs[32]          v = d q (dequantised by _quants.c's own code; only copied here)
 * d q, d (q - 8), d (q - 16) and d k are exact in float32 (11 significant bits times at most 8), so
 * gguf's numbers are those products; Q4_1 and Q5_1 round d q + m once (d q exact), which a fused
 * multiply-add rounds the same way: dequantise_block32 gives gguf's float32 bit for bit.
 *
 * A group of 16 rows, per block (GROUP32_BYTES: the stored bytes of 16 blocks, no more):
 *   half d[16]            each row's scale, as stored
 *   half m[16]            (Q4_1, Q5_1) each row's min, as stored
 *   uint64 fifth[4][2]    (Q5_0, Q5_1) for t = 0..3, the fifth bits of the bytes of qs[t] below, low
 *                         nibbles then high ones: bit 4r + i is row r's qh bit 4t + i (16 + 4t + i)
 *   uint8 qs[4][64]       for t = 0..3, bytes 4t .. 4t + 3 of each of the 16 rows' qs in turn: low
 *                         nibbles numbers 4t .., high ones numbers 16 + 4t ..
 *   uint8 qs[8][64]       (Q8_0 instead) for t = 0..7, numbers 4t .. 4t + 3 of each row in turn, each
 *                         q + 128 (its top bit flipped: unsigned for vpdpbusd, as IQ4_NL's k + 128)
 * Rows past the table's end are zeros (d = 0: they add nothing).  So one 64-byte load, an and (a
 * shift and an and for the high nibbles), one masked byte add for the fifth bit, or one vpshufb for
 * IQ4_NL's table (k + 128, unsigned for vpdpbusd), feeds vpdpbusd with four numbers of each row, the
 * query's four matching bytes broadcast: each int32 lane is one row's sum, no sum across lanes.  Q8_0's
 * load goes to vpdpbusd as it is: two instructions (the query's high and low bytes) for 64 bytes, where
 * its scan as stored widens, multiplies in pairs and converts every 32 numbers of one row (a whole query on a
 * Zen 4, quiet, against one plain read of the stored bytes: GPT-2-shaped 1.56-1.70 ms, 1.21x-1.23x, -> 1.21-1.33
 * ms, 0.64x-0.68x; Qwen2-7B-sized 35.7 ms, 1.40x, -> 17.5 ms, 0.69x: docs/benchmarks.md).
 *
 * Why the scores are within StoredScreen.error_bound (the integer scan's proof at _quants.c's top,
 * with x~ = step xq the query as quantise_query holds it, one step per block's 32 numbers):
 *   Integer sums, exact in int32: per row and block, S = sum u_j xq_j = 256 (u . high) + (u . low)
 *   with u the unsigned code (q, k + 128, or Q8_0's q + 128: at most 255), |xq| <= 2^14, |high| <= 64:
 *   |u . high| <= 32 x 255 x 64 < 2^19, so 256 times it < 2^27, and |S| <= 32 x 255 x 2^14 < 2^27 (the
 *   kernel keeps two parts apart, the low and high nibbles' or Q8_0's even and odd runs of four, each a
 *   part of the same sums, so within the same sizes).  The offset c (8, 16, 128; 0
 *   for Q4_1 and Q5_1) times the run's sum of xq (|sum| <= 2^19, so <= 2^26) is taken off in int32:
 *   S' = sum (u_j - c) xq_j exactly, the integer behind gguf's q - 8, q - 16, k or q.  |S'| <= 2^23 for
 *   Q4_0, Q5_0 (|q - c| <= 16), < 2^24 for Q4_1, Q5_1 (q <= 31): exact as float32; IQ4_NL's (|k| <=
 *   127: < 2^26) and Q8_0's (|q| <= 128: <= 2^26) are rounded once by the conversion, relative 2^-24 of
 *   sum |k_j xq_j| (sum |q_j xq_j|).
 *   Weights: d step is a float16 times a power of two >= 2^-100: exact (quantise_query).
 *   Sums: one fused multiply-add per block adds S' (d step) into the row's lane; Q4_1 and Q5_1 add a
 *   second one, m (step sum xq) (step sum xq exact: a power of two times an integer below 2^19;
 *   their product rounded once, fused).  So every term passes through at most 2 width / 32 + 1
 *   roundings (the conversion, then its own addition and every later one), fewer than the width
 *   gamma_width allows (width >= 32): the float error is within gamma_width of the sum of the terms'
 *   sizes.  For Q4_0, Q5_0, IQ4_NL and Q8_0 that sum is at most sum_j |v_j x~_j| <= |v| |x~| (the terms
 *   are d step (q - c) . xq exactly): the bound of Q4_0's and Q8_0's scans as stored.  For Q4_1 and Q5_1 the
 *   two terms may cancel: their sizes sum to at most sum_j (|d| q_j + |m|) |x~_j| <= A |x~|, A the
 *   root of the row's block32_spreads, and gguf's v_j = (d q_j + m) rounded once, so the exact
 *   sum (d q + m) . x~ is within 2^-24 (1 + 2^-24) |v| |x~| of v . x~: Q4_K's bound exactly, with
 *   its spread (StoredScreen.spread) and value rounding.  The last score, times the row's scale,
 *   and the query's rounding x - x~ are as for every integer scan.
 *   A row whose scale or min is infinite or NaN has no finite length: its scale is 0, and the
 *   score is masked to 0 (its lane touches no other lane).
 */
#ifndef EMBEDEXPLORER_QUANTS_GROUPS32_H
#define EMBEDEXPLORER_QUANTS_GROUPS32_H

/* llama.cpp's kvalues_iq4nl: the 16 numbers an IQ4_NL code stands for (times d). */
static const int8_t IQ4_NL_VALUES[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static ALWAYS_INLINE int has_min32(int kind)
{
    return kind == KIND_Q4_1 || kind == KIND_Q5_1;
}

static ALWAYS_INLINE int has_fifth32(int kind)
{
    return kind == KIND_Q5_0 || kind == KIND_Q5_1;
}

static ALWAYS_INLINE int is_block32(int kind)
{
    return kind == KIND_Q4_0 || kind == KIND_Q4_1 || kind == KIND_Q5_0 || kind == KIND_Q5_1 || kind == KIND_IQ4_NL;
}

/* The kinds copied sixteen rows at a time here: the 32-number kinds above and Q8_0 (whose dequantiser and scan
 * as stored are _quants.c's own). */
static ALWAYS_INLINE int is_grouped32(int kind)
{
    return is_block32(kind) || kind == KIND_Q8_0;
}

/* What a kind takes off its unsigned code before d multiplies it (IQ4_NL's code: k + 128; Q8_0's: q + 128). */
static ALWAYS_INLINE int32_t offset32(int kind)
{
    return kind == KIND_Q4_0 ? 8 : kind == KIND_Q5_0 ? 16 : kind == KIND_IQ4_NL || kind == KIND_Q8_0 ? 128 : 0;
}

#define GROUP32_ROWS 16
/* A group's codes: 16 rows' 32 numbers, a nibble each (a byte each for Q8_0). */
#define GROUP32_CODE_BYTES(kind) (Py_ssize_t)((kind) == KIND_Q8_0 ? 512 : 256)
#define GROUP32_BYTES(kind)                                                                                            \
    (Py_ssize_t)(2 * GROUP32_ROWS * (1 + has_min32(kind)) + 64 * has_fifth32(kind) + GROUP32_CODE_BYTES(kind))

/* One stored block's 32 numbers as gguf's dequantize gives them (see the top). */
static ALWAYS_INLINE void dequantise_block32(int kind, const uint8_t *block, float *v)
{
    float d = half_at(block), m = has_min32(kind) ? half_at(block + 2) : 0.0f;
    const uint8_t *qh = block + 2 + 2 * has_min32(kind), *qs = qh + 4 * has_fifth32(kind);
    uint32_t fifth = has_fifth32(kind) ? (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 |
                                             (uint32_t)qh[3] << 24
                                       : 0u;
    for (int j = 0; j < 32; j++) {
        int q = (j < 16 ? qs[j] & 0x0F : qs[j - 16] >> 4) | (int)((fifth >> j) & 1u) << 4;
        if (kind == KIND_IQ4_NL)
            v[j] = d * (float)IQ4_NL_VALUES[q];
        else if (has_min32(kind))
            v[j] = d * (float)q + m; /* d q exact: one rounding, fused or not */
        else
            v[j] = d * (float)(q - offset32(kind));
    }
}

/* Rows start .. stop - 1 (start a multiple of 16: CHUNK_ROWS is) into their groups. */
static void group32_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct kind_group_job *q = job;
    int kind = q->kind, mins = has_min32(kind), fifths = has_fifth32(kind);
    Py_ssize_t block_bytes = BLOCK_BYTES[kind], row_bytes = q->blocks * block_bytes;
    Py_ssize_t size = GROUP32_BYTES(kind), fifth_at = 32 + 32 * mins, qs_at = fifth_at + 64 * fifths;
    if (stop == q->count)
        stop = (stop + GROUP32_ROWS - 1) / GROUP32_ROWS * GROUP32_ROWS; /* the last group's missing rows: zeros */
    for (Py_ssize_t g = start / GROUP32_ROWS; g * GROUP32_ROWS < stop; g++)
        for (Py_ssize_t b = 0; b < q->blocks; b++) {
            uint8_t *at = q->groups + (g * q->blocks + b) * size;
            memset(at, 0, (size_t)size);
            for (int r = 0; r < GROUP32_ROWS && g * GROUP32_ROWS + r < q->count; r++) {
                const uint8_t *block = q->rows + (g * GROUP32_ROWS + r) * row_bytes + b * block_bytes;
                memcpy(at + 2 * r, block, 2);
                if (mins)
                    memcpy(at + 32 + 2 * r, block + 2, 2);
                if (kind == KIND_Q8_0) { /* each code plus 128 (its top bit flipped): unsigned for vpdpbusd */
                    for (int t = 0; t < 8; t++)
                        for (int i = 0; i < 4; i++)
                            at[qs_at + 64 * t + 4 * r + i] = (uint8_t)(block[2 + 4 * t + i] ^ 0x80u);
                    continue;
                }
                const uint8_t *qh = block + 2 + 2 * mins, *qs = qh + 4 * fifths;
                uint32_t fifth = (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
                for (int t = 0; t < 4; t++) {
                    if (fifths) { /* bits 4r .. 4r + 3 of the two masks: byte r / 2, its low or high half */
                        at[fifth_at + 16 * t + r / 2] |= (uint8_t)(((fifth >> (4 * t)) & 15u) << (4 * (r & 1)));
                        at[fifth_at + 16 * t + 8 + r / 2] |=
                            (uint8_t)(((fifth >> (16 + 4 * t)) & 15u) << (4 * (r & 1)));
                    }
                    memcpy(at + qs_at + 64 * t + 4 * r, qs + 4 * t, 4);
                }
            }
        }
}

/* Q4_1's and Q5_1's spread of each row: the sum over its numbers of (|d| q + |m|)^2, in float64 (the
 * grouped scan sums d q and m apart: see the top). */
struct spread32_job {
    int kind;
    const uint8_t *rows;
    Py_ssize_t row_bytes;
    double *out;
};

static void spread32_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct spread32_job *q = job;
    Py_ssize_t block_bytes = BLOCK_BYTES[q->kind];
    int fifths = has_fifth32(q->kind);
    for (Py_ssize_t i = start; i < stop; i++) {
        double total = 0.0;
        for (Py_ssize_t at = 0; at < q->row_bytes; at += block_bytes) {
            const uint8_t *block = q->rows + i * q->row_bytes + at;
            double d = fabs((double)half_at(block)), m = fabs((double)half_at(block + 2));
            const uint8_t *qh = block + 4, *qs = qh + 4 * fifths;
            /* sum (d q + m)^2 = d^2 sum q^2 + 2 d m sum q + 32 m^2, the sums of the codes in integers. */
            uint32_t fifth = 0;
            if (fifths)
                fifth = (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
            int32_t sum = 0, squares = 0;
            for (int j = 0; j < 16; j++) { /* numbers j and j + 16 */
                int32_t low = (qs[j] & 0x0F) | (int32_t)((fifth >> j) & 1u) << 4;
                int32_t high = (qs[j] >> 4) | (int32_t)((fifth >> (j + 16)) & 1u) << 4;
                sum += low + high, squares += low * low + high * high;
            }
            total += d * d * squares + 2.0 * d * m * sum + 32.0 * m * m;
        }
        q->out[i] = total;
    }
}

static PyObject *block32_spreads(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, progress;
    Py_ssize_t width;
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*inw*w*", &rows, &kind, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t row_bytes = has_min32(kind) ? width / 32 * BLOCK_BYTES[kind] : 0;
    if (!has_min32(kind) || width <= 0 || width % 32 != 0 || out.len % (Py_ssize_t)sizeof(double) != 0 ||
        rows.len != count * row_bytes) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) Q4_1 (5) or Q5_1 (7) rows of width numbers");
    } else if (check_progress(&progress)) {
        struct spread32_job job = {kind, rows.buf, row_bytes, out.buf};
        result = share_chunks_released(spread32_chunk, &job, count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

/* Each run's offset c times its sum of xq, for the grouped scan (width / 32 of them). */
static void group32_centres(int kind, const int16_t *xq, Py_ssize_t width, int32_t *centre)
{
    for (Py_ssize_t b = 0; b < width / 32; b++) {
        int32_t sum = 0;
        for (int j = 0; j < 32; j++)
            sum += xq[32 * b + j];
        centre[b] = offset32(kind) * sum;
    }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#include "quants_group_store.h" /* every grouped scan ends with it; this header is the first of them */

#define GROUP32_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")))

/* Four bytes of the query, the same in every lane (vpdpbusd's broadcast operand). */
GROUP32_TARGET static ALWAYS_INLINE __m512i query_four(const int8_t *at)
{
    int32_t word;
    memcpy(&word, at, sizeof word);
    return _mm512_set1_epi32(word);
}

GROUP32_TARGET static ALWAYS_INLINE __mmask64 fifth_mask(const uint8_t *at)
{
    uint64_t bits;
    memcpy(&bits, at, sizeof bits);
    return (__mmask64)bits;
}

/* Rows start .. stop - 1 (start a multiple of 16) of groups against xq = 256 high + low, each score
 * times the row's scale (0 where the scale is 0).  step: the runs' steps, then their step sum xq;
 * centre: each run's offset times its sum of xq (group32_centres). */
GROUP32_TARGET static void groups32_vnni(int kind, const uint8_t *groups, Py_ssize_t blocks, const int8_t *high,
                                         const int8_t *low, const int32_t *centre, const float *step,
                                         const float *scale, float *out, Py_ssize_t start, Py_ssize_t stop)
{
    const __m512i nibble = _mm512_set1_epi8(0x0F), sixteen = _mm512_set1_epi8(0x10);
    uint8_t unsigned_values[16];
    for (int j = 0; j < 16; j++)
        unsigned_values[j] = (uint8_t)(IQ4_NL_VALUES[j] + 128);
    const __m512i values = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)unsigned_values));
    const int mins = has_min32(kind), fifths = has_fifth32(kind), table = kind == KIND_IQ4_NL;
    const Py_ssize_t size = GROUP32_BYTES(kind), fifth_at = 32 + 32 * mins, qs_at = fifth_at + 64 * fifths;
    const float *sums = step + blocks;
    for (Py_ssize_t g = start / GROUP32_ROWS; g * GROUP32_ROWS < stop; g++) {
        const uint8_t *group = groups + g * blocks * size;
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *at = group + b * size;
            /* Ahead (GROUPS_PREFETCH_BYTES, scan_common.h: the hardware's prefetcher stops at each 4 KB
             * page); a prefetch past the copy's end is harmless. */
            prefetch_row(at + GROUPS_PREFETCH_BYTES, size);
            /* Four sums (shorter chains of dependent vpdpbusd); the offsets start the first low one. */
            __m512i upper = _mm512_setzero_si512(), upper2 = upper, lower2 = upper;
            __m512i lower = _mm512_set1_epi32(-centre[b]);
            for (int t = 0; kind == KIND_Q8_0 && t < 8; t += 2) { /* a byte a number: two runs of four at a time */
                __m512i first = _mm512_loadu_si512((const void *)(at + qs_at + 64 * t));
                __m512i second = _mm512_loadu_si512((const void *)(at + qs_at + 64 * t + 64));
                Py_ssize_t j = 32 * b + 4 * t;
                upper = _mm512_dpbusd_epi32(upper, first, query_four(high + j));
                lower = _mm512_dpbusd_epi32(lower, first, query_four(low + j));
                upper2 = _mm512_dpbusd_epi32(upper2, second, query_four(high + j + 4));
                lower2 = _mm512_dpbusd_epi32(lower2, second, query_four(low + j + 4));
            }
            for (int t = 0; kind != KIND_Q8_0 && t < 4; t++) {
                __m512i bytes = _mm512_loadu_si512((const void *)(at + qs_at + 64 * t));
                __m512i first = _mm512_and_si512(bytes, nibble);
                __m512i second = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
                if (fifths) {
                    first = _mm512_mask_add_epi8(first, fifth_mask(at + fifth_at + 16 * t), first, sixteen);
                    second = _mm512_mask_add_epi8(second, fifth_mask(at + fifth_at + 16 * t + 8), second, sixteen);
                }
                if (table) {
                    first = _mm512_shuffle_epi8(values, first);
                    second = _mm512_shuffle_epi8(values, second);
                }
                Py_ssize_t j = 32 * b + 4 * t;
                upper = _mm512_dpbusd_epi32(upper, first, query_four(high + j));
                lower = _mm512_dpbusd_epi32(lower, first, query_four(low + j));
                upper2 = _mm512_dpbusd_epi32(upper2, second, query_four(high + j + 16));
                lower2 = _mm512_dpbusd_epi32(lower2, second, query_four(low + j + 16));
            }
            __m512i exact = _mm512_add_epi32(_mm512_slli_epi32(_mm512_add_epi32(upper, upper2), 8),
                                             _mm512_add_epi32(lower, lower2));
            /* F16C widens float16 exactly, subnormals, infinities and NaN too, as widen_half does. */
            __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact), _mm512_mul_ps(d, _mm512_set1_ps(step[b])), acc);
            if (mins)
                acc = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(at + 32))),
                                      _mm512_set1_ps(sums[b]), acc);
        }
        store_group_scores(acc, scale, out, g * 16, stop);
    }
}
#endif

#endif
